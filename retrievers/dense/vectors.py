"""Dense retrieval on Chroma: one collection per embedded view of a chunk.

Vectors are content-addressed: a vector's id is a hash of the model and the text it
embeds, so an unchanged chunk keeps its vector across re-indexing (nothing is
re-embedded), duplicates share one, and vectors written by an interrupted run are
found and reused by the next. Chroma's default embedding function downloads a model
at run time; every collection here is opened with ours, every time.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from ..core.memory import return_freed_memory
from .minilm import MINILM_MODEL_ID, MiniLMEmbedder

log = logging.getLogger(__name__)

CHROMA_BATCH = 2000
# Chroma saves a collection's HNSW graph only every `sync_threshold` vectors written and, at each process's first
# read, inserts the rest from its log in an order that changes from process to process: the same query then found
# other nearest vectors in every process. At Chroma's smallest threshold each write of two or more vectors saves
# the graph, so every process loads the same one (writing 50,000 vectors took ~10% longer; embedding them, minutes).
# Chroma fills in the rest of a configuration it is given, so each call gets a copy (`dict(...)`).
HNSW_SAVE_AT_EVERY_WRITE = MappingProxyType({"sync_threshold": 2, "batch_size": 2})
# Collection sizes change only while indexing; re-reading them every few seconds is enough.
COUNT_TTL_S = 5.0


def vector_key(model_id: str, text: str) -> str:
    """Content address of one embedded text."""
    return hashlib.blake2b(f"{model_id}\0{text}".encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def chroma_embedding_function(embedder: Any):
    """Wrap an embedder (``embed(texts) -> ndarray``) as a Chroma ``EmbeddingFunction``."""
    from chromadb.api.types import EmbeddingFunction

    class GrepGraphEmbeddingFunction(EmbeddingFunction):
        def __init__(self) -> None:
            self.embedder = embedder

        def __call__(self, input):  # noqa: A002 - Chroma's parameter name
            return [row for row in np.asarray(self.embedder.embed(list(input)), dtype=np.float32)]

        @staticmethod
        def name() -> str:
            return "grepgraph"

        def default_space(self) -> Literal["cosine"]:
            return "cosine"

        def supported_spaces(self) -> list[Literal["cosine", "l2", "ip"]]:
            return ["cosine"]

        def get_config(self) -> dict:
            return {"model_id": getattr(embedder, "model_id", "unknown")}

        @staticmethod
        def build_from_config(config: dict) -> GrepGraphEmbeddingFunction:
            return GrepGraphEmbeddingFunction()

        def is_legacy(self) -> bool:
            return False

    return GrepGraphEmbeddingFunction()


def open_chroma_client(path: Path | None = None, url: str | None = None) -> ChromaClient:
    """An embedded ``PersistentClient`` at ``path``, or an ``HttpClient`` for a Chroma server URL."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if url:
        from urllib.parse import urlparse

        parsed = urlparse(url)
        return _owned(lambda: chromadb.HttpClient(
            host=parsed.hostname or "127.0.0.1", port=parsed.port or 8000,
            ssl=parsed.scheme == "https", settings=settings,
        ), None)
    assert path is not None
    path.mkdir(parents=True, exist_ok=True)
    return _owned(lambda: chromadb.PersistentClient(path=str(path), settings=settings), str(path),
                  lock_path=path.with_name(path.name + ".lock"))


class ChromaClient:
    """A Chroma client with a ``System`` of its own, released by :meth:`close`.

    Chroma keeps one ``System`` (for an embedded database: its SQLite handles and the HNSW
    indexes in memory) per database path for the life of the process, shared by every client of
    that path. A long-running searcher must reload the database when another process (the
    indexer) adds vectors, and must free the copy it replaces: a reopen that only forgot the old
    system kept it loaded (~0.5 MB a reopen on a small index, for as long as the process lived).
    So every client here gets a system nobody else holds, and its owner stops it.

    An embedded database is also written by one process (the indexer) while others (a search service) read it,
    which Chroma does not guard: a process loading a collection's HNSW graph while another saved it crashed
    (SIGSEGV in 4 of 5 runs of ``benchmarks/chroma_reload.py``). Writes and loads here take the database's lock
    file, :meth:`exclusive`; a server guards its own.
    """

    def __init__(self, client: Any, system: Any, lock_path: Path | None = None) -> None:
        """Own ``client`` and its ``system`` (already out of Chroma's shared registry); ``lock_path``: see above."""
        self.client = client
        self.system = system
        self.closed = False
        self.lock_path = lock_path  # an embedded database's lock file (a server's: none)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the database's lock file (waiting for it) while Chroma writes or loads a graph from disk."""
        if self.lock_path is None:
            yield
            return
        with open(self.lock_path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def close(self) -> None:
        """Stop the system: its database handles and indexes are freed (idempotent)."""
        if not self.closed:
            self.closed = True
            self.system.stop()
            return_freed_memory()


# Held while a client is created and taken out of Chroma's registry, so no two creations meet in it.
_REGISTRY_LOCK = threading.Lock()


def _owned(create: Callable[[], Any], identifier: str | None, lock_path: Path | None = None) -> ChromaClient:
    """Create a client with a fresh system and take that system out of Chroma's process-wide registry."""
    from chromadb.api.shared_system_client import SharedSystemClient as Shared

    with _REGISTRY_LOCK:
        # A system someone else registered for this path is set aside, so ours is new, then put back.
        foreign = (Shared._identifier_to_system.pop(identifier, None),
                   Shared._identifier_to_refcount.pop(identifier, None)) if identifier else (None, None)
        try:
            client = create()
            system = Shared._identifier_to_system.pop(client._identifier)
            Shared._identifier_to_refcount.pop(client._identifier, None)
        finally:
            if foreign[0] is not None:
                Shared._identifier_to_system[identifier] = foreign[0]  # type: ignore[index]
                Shared._identifier_to_refcount[identifier] = foreign[1] or 0  # type: ignore[index]
    return ChromaClient(client, system, lock_path)


def save_graph_at_every_write(collection: Any) -> None:
    """Switch a collection made before :data:`HNSW_SAVE_AT_EVERY_WRITE` to it (its next load saves its log's tail)."""
    hnsw = (collection.configuration or {}).get("hnsw") or {}
    if hnsw.get("sync_threshold") == HNSW_SAVE_AT_EVERY_WRITE["sync_threshold"]:
        return
    try:
        collection.modify(configuration={"hnsw": dict(HNSW_SAVE_AT_EVERY_WRITE)})
    except Exception as error:  # a Chroma server of another version: searches work, only less repeatably
        log.warning("Chroma collection %s keeps saving its graph every %s writes (%s): the nearest vectors of a "
                    "query may differ between processes", collection.name, hnsw.get("sync_threshold"), error)


def model_suffix(model_id: str) -> str:
    """Collections of another model than the default get their own names (their vectors differ in size)."""
    if model_id == MINILM_MODEL_ID:
        return ""
    return "-" + hashlib.blake2b(model_id.encode(), digest_size=4).hexdigest()


class VectorStore:
    """The chunk vectors of one index, in one Chroma collection per view (``card``, ``code``).

    The store owns its client. A reader that reloads the database (:meth:`retire`, then a new
    store) frees the old one once the last call using it (:meth:`acquire` .. :meth:`release`) ends.
    """

    def __init__(self, client: ChromaClient, embedder: MiniLMEmbedder, namespace: str,
                 views: Sequence[str]) -> None:
        """Open (or create) the collections ``{namespace}-{view}``; the store closes ``client`` when it closes."""
        self.embedder = embedder
        self.client = client
        self._counts: dict[str, tuple[int, float]] = {}
        self._users = 0
        self._retired = False
        self._lock = threading.Lock()
        # The index's last vector change (``vectors_version``) this store is known to hold: the one committed
        # before it was opened, then each change made through it in an unbroken line (see :meth:`note_change`).
        self.holds_version: str | None = None
        self.function = chroma_embedding_function(embedder)
        try:
            with client.exclusive():
                self.collections = {
                    view: client.client.get_or_create_collection(
                        name=f"{namespace}-{view}{model_suffix(embedder.model_id)}", embedding_function=self.function,
                        metadata={"hnsw:space": "cosine", "model": embedder.model_id},
                        configuration={"hnsw": dict(HNSW_SAVE_AT_EVERY_WRITE)},
                    )
                    for view in views
                }
                for collection in self.collections.values():
                    save_graph_at_every_write(collection)
                    # Chroma loads the graph at a collection's first read of vectors: here, inside the lock.
                    collection.get(limit=1, include=["embeddings"])
        except BaseException:
            client.close()
            raise

    @property
    def closed(self) -> bool:
        """Whether the client was released (the store is unusable)."""
        return self.client.closed

    def acquire(self) -> None:
        """Start a call on the store: a :meth:`retire` meanwhile closes it only after :meth:`release`."""
        with self._lock:
            if self._retired:
                raise RuntimeError("vector store used after it was retired")
            self._users += 1

    def release(self) -> None:
        """End a call started by :meth:`acquire`; the last one out of a retired store closes it."""
        with self._lock:
            self._users -= 1
            close = self._retired and self._users == 0
        if close:
            self.client.close()

    def retire(self) -> None:
        """Take no new calls: close the client now, or when the last call in progress ends (idempotent)."""
        with self._lock:
            self._retired = True
            close = self._users == 0
        if close:
            self.client.close()

    def note_change(self, previous: str, version: str) -> None:
        """A change made through this store moves the index from ``previous`` to ``version``.

        The store holds ``version`` only if it held ``previous``: after a change made elsewhere it holds
        neither, and readers reload.
        """
        with self._lock:
            self.holds_version = version if previous == self.holds_version else None
        self._counts.clear()  # the counts changed with it

    def missing(self, view: str, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` have no vector yet."""
        collection = self.collections[view]
        present: set[str] = set()
        for start in range(0, len(keys), CHROMA_BATCH):
            batch = list(keys[start : start + CHROMA_BATCH])
            present.update(collection.get(ids=batch, include=[])["ids"])
        return set(keys) - present

    def add(self, view: str, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors under their content keys (idempotent)."""
        collection = self.collections[view]
        for start in range(0, len(keys), CHROMA_BATCH):
            with self.client.exclusive():
                collection.upsert(
                    ids=list(keys[start : start + CHROMA_BATCH]),
                    embeddings=vectors[start : start + CHROMA_BATCH],
                )

    def delete(self, view: str, keys: Iterable[str]) -> None:
        """Drop vectors nobody references any more."""
        keys = list(keys)
        for start in range(0, len(keys), CHROMA_BATCH):
            with self.client.exclusive():
                self.collections[view].delete(ids=keys[start : start + CHROMA_BATCH])

    def all_keys(self, view: str) -> set[str]:
        """Every key stored for a view (for garbage collection after interrupted runs)."""
        collection = self.collections[view]
        keys: set[str] = set()
        offset = 0
        while True:
            page = collection.get(include=[], limit=CHROMA_BATCH * 5, offset=offset)["ids"]
            keys.update(page)
            if len(page) < CHROMA_BATCH * 5:
                return keys
            offset += len(page)

    def count(self, view: str) -> int:
        """Number of vectors stored for a view."""
        return self.collections[view].count()

    def cached_count(self, view: str) -> int:
        """:meth:`count`, remembered for ``COUNT_TTL_S`` seconds (it costs a few ms per call)."""
        now = time.monotonic()
        cached = self._counts.get(view)
        if cached is None or now - cached[1] > COUNT_TTL_S:
            cached = (self.count(view), now)
            self._counts[view] = cached
        return cached[0]

    def query(self, view: str, query_vector: np.ndarray, k: int) -> dict[str, float]:
        """Top-``k`` keys by cosine similarity (``1 - distance``)."""
        collection = self.collections[view]
        total = self.cached_count(view)
        if total == 0:
            return {}
        found = collection.query(query_embeddings=[query_vector], n_results=min(k, total), include=["distances"])
        return {key: 1.0 - distance for key, distance in zip(found["ids"][0], found["distances"][0])}

    def similarities(self, view: str, query_vector: np.ndarray, keys: Sequence[str]) -> dict[str, float]:
        """Exact cosine similarity of the query to the given keys' vectors (keys without one are left out)."""
        return self.similarities_or_stale(view, query_vector, keys)[0]

    def similarities_or_stale(self, view: str, query_vector: np.ndarray,
                              keys: Sequence[str]) -> tuple[dict[str, float], bool]:
        """:meth:`similarities`, and whether this client's copy of the collection was out of date.

        Chroma's ``InternalError`` ("Error finding id") means another process stored some of these
        vectors after this client loaded the collection: until the searcher reopens it (its next
        refresh), they all count as not embedded yet, and the caller can say so.
        """
        if not keys:
            return {}, False
        from chromadb.errors import InternalError

        try:
            found = self.collections[view].get(ids=list(keys), include=["embeddings"])
        except InternalError as error:
            log.warning("Chroma collection %s is older than the vectors table (%s): %d candidates get no exact "
                        "cosine until the next refresh", self.collections[view].name, error, len(keys))
            return {}, True
        if not found["ids"]:
            return {}, False
        matrix = np.asarray(found["embeddings"], dtype=np.float32)
        return dict(zip(found["ids"], (matrix @ query_vector).tolist())), False

