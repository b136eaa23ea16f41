"""Which vector store an index reads now, and who is using it.

A reader that stays open (``serve``, MCP, the resident service) reloads Chroma when another
process commits new vectors. Calls already running finish on the store they started with; the
old store frees its Chroma client when the last of them ends (:meth:`VectorStore.retire`), so
reloading many times does not keep many databases in memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # chromadb and the embedder load only when vectors are used
    from .vectors import VectorStore


class CurrentVectorStore:
    """The vector store an index reads now; :meth:`reload` swaps in a fresh one and retires the old."""

    def __init__(self, open_store: Callable[[tuple[str, ...]], VectorStore]) -> None:
        """Open stores with ``open_store(views)``, on first use after each reload."""
        self._open_store = open_store
        self._store: VectorStore | None = None
        # Which store is current: a call never starts on one a reload is retiring.
        self._lock = threading.Lock()

    @contextmanager
    def using(self, views: tuple[str, ...]) -> Iterator[VectorStore]:
        """The current store (opened for ``views`` if none is), held until the block ends."""
        with self._lock:
            if self._store is None:
                self._store = self._open_store(views)
            store = self._store
            store.acquire()
        try:
            yield store
        finally:
            store.release()

    def holds(self, version: str) -> bool:
        """Whether the current store already holds the vector change ``version`` (made through it)."""
        with self._lock:
            return self._store is not None and self._store.holds_version == version

    def reload(self) -> None:
        """Make the next call load the database afresh; the old store closes when its last call ends."""
        with self._lock:
            store, self._store = self._store, None
        if store is not None:
            store.retire()


def lazy_lease(using: Callable[[], AbstractContextManager[VectorStore]],
               leases: ExitStack) -> Callable[[], VectorStore]:
    """A getter that enters ``using()`` on its first call, held in ``leases``, and returns that store after."""
    held: list[VectorStore] = []

    def store() -> VectorStore:
        if not held:
            held.append(leases.enter_context(using()))
        return held[0]

    return store
