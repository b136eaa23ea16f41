"""A circuit breaker for the vectors: after the vector store or the embedding server failed, searches go without.

For ``VECTORS_RETRY_AFTER_S`` after a failure the breaker is open: searches use lexical evidence alone, and
its note says why, so a down server costs one failed connection, not one per query. The next try after the
pause closes it again if it succeeds.
"""

from __future__ import annotations

import threading
import time

from ..core.errors import EmbeddingUnavailable

# How long searches go without vectors after a failure before asking them again.
VECTORS_RETRY_AFTER_S = 10.0


class VectorsBreaker:
    """Whether a search may ask the vectors now, and the note that says why not; safe to share between threads."""

    def __init__(self) -> None:
        """Start closed: the vectors are asked until they fail."""
        self._lock = threading.Lock()
        self._retry_at = 0.0
        self._note = ""

    @property
    def note(self) -> str:
        """Why the last try went without vectors (empty after a success)."""
        return self._note

    def allows(self) -> bool:
        """Whether the vectors may be asked now: no failure yet, or its pause is over."""
        with self._lock:
            return time.monotonic() >= self._retry_at

    def failed(self, error: BaseException, chroma_url: str | None) -> str:
        """Open the breaker for ``VECTORS_RETRY_AFTER_S`` after ``error``; returns the note saying so.

        Args:
            error: What the vector store or the embedding model's server raised.
            chroma_url: The Chroma server the index uses (``None``: the embedded database), named in the note
                unless the error names what failed itself.
        """
        url = chroma_url or "the embedded database"
        named = isinstance(error, EmbeddingUnavailable) or str(error).startswith("the Chroma server")
        detail = str(error) if named else f"the Chroma server at {url}: {error}"
        with self._lock:
            self._retry_at = time.monotonic() + VECTORS_RETRY_AFTER_S
            self._note = (f"vectors unavailable: {detail}; lexical results only,"
                          f" retried after {VECTORS_RETRY_AFTER_S:g}s")
            return self._note

    def succeeded(self) -> None:
        """Close the breaker: the vectors answered."""
        with self._lock:
            self._note = ""
