"""The Ollama embedding client: vectors from a model an Ollama server runs (``ollama:<model>``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.errors import EmbeddingUnavailable

# An embedding server that does not accept the connection within this many seconds is down; once
# connected, a batch may take long on a CPU.
OLLAMA_CONNECT_TIMEOUT_S = 3.0
OLLAMA_READ_TIMEOUT_S = 120.0


class OllamaEmbedder:
    """Vectors from an Ollama server (``POST /api/embed``), e.g. ``nomic-embed-text``.

    For users who run Ollama and want a larger model than MiniLM. The server is the
    ``llm_base_url`` setting (default ``http://localhost:11434``); the dimension is
    learned from the first reply. Every failure is an :class:`EmbeddingUnavailable`.
    """

    def __init__(self, model: str, base_url: str, batch_size: int = 32) -> None:  # noqa: D107
        self.model = model
        self.model_id = f"ollama:{model}"
        self.base_url = base_url
        self.batch_size = batch_size
        self.dimension = 0
        self._client: Any = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into unit vectors, in input order."""
        import httpx
        import ollama

        if self._client is None:
            timeout = httpx.Timeout(OLLAMA_READ_TIMEOUT_S, connect=OLLAMA_CONNECT_TIMEOUT_S)
            self._client = ollama.Client(host=self.base_url, timeout=timeout)
        rows: list[list[float]] = []
        try:
            for start in range(0, len(texts), self.batch_size):
                reply = self._client.embed(model=self.model, input=list(texts[start : start + self.batch_size]))
                rows.extend(reply["embeddings"])
        except ConnectionError:  # how the ollama client reports a refused connection
            raise EmbeddingUnavailable(f"{self.model_id}: no Ollama server answers at {self.base_url}") from None
        except ollama.ResponseError as error:
            raise EmbeddingUnavailable(f"{self.model_id}: the Ollama server at {self.base_url} answered "
                                       f"{error.status_code}: {error.error}") from None
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as error:
            raise EmbeddingUnavailable(f"{self.model_id}: the Ollama server at {self.base_url} did not embed "
                                       f"({type(error).__name__}: {error})") from None
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)
        self.dimension = matrix.shape[1] if matrix.size else self.dimension
        return matrix / np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        return self.embed([text])[0]
