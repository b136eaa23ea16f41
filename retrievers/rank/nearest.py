"""The vector side of a search: the query's nearest chunks per view, asked while the lexical side runs.

Embedding the query is the longest single step of a warm search (a few milliseconds of ONNX, which lets go of
the GIL), so :meth:`NearestVectors.start` embeds it and asks the vector store on a worker thread while the
searcher scores BM25 and gathers the evidence that needs no cosine; :meth:`NearestVectors.finish` waits for
it and maps the store's keys to chunks on the caller's thread (SQLite connections stay with their thread).
While the vectors fail, :class:`retrievers.dense.breaker.VectorsBreaker` keeps searches lexical for a pause.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from ..core.errors import vector_backend_errors
from ..core.sql import batched
from ..dense.breaker import VectorsBreaker
from ..store.index import CodeIndex
from ..store.snapshot import IndexSnapshot
from .learned import PoolRow

log = logging.getLogger(__name__)

# Per view: the vector store's key of a text and its cosine to the query.
KeyScores = dict[str, dict[str, float]]
Nearest = tuple[dict[str, dict[int, float]], np.ndarray | None]
NOTHING: tuple[KeyScores, None] = ({}, None)

_workers: ThreadPoolExecutor | None = None
_workers_lock = threading.Lock()


def workers() -> ThreadPoolExecutor:
    """The process's query-embedding thread, made on the first search.

    One: an embedding keeps a core busy, so searches side by side gain little from a second, and a fixed
    count keeps a long-lived process's threads the same from its first search on.
    """
    global _workers
    with _workers_lock:
        if _workers is None:
            _workers = ThreadPoolExecutor(1, thread_name_prefix="grepgraph-query-vector")
        return _workers


class NearestVectors:
    """The nearest chunks of a query in one index's vector store; safe to share between threads."""

    def __init__(self, index: CodeIndex, *, overlap: bool = True) -> None:
        """Ask ``index``'s vector store, through a breaker of its own.

        ``overlap=False`` embeds on the calling thread, in turn with the rest (how searches ran before).
        """
        self.index = index
        self.breaker = VectorsBreaker()
        self.overlap = overlap

    def start(self, snapshot: IndexSnapshot, text: str, k: int) -> Future[tuple[KeyScores, np.ndarray | None]]:
        """Embed ``text`` and ask each view's top ``k`` on a worker thread; :meth:`finish` takes the answer."""
        if self.overlap:
            return workers().submit(self._guarded_keys, snapshot.views, text, k)
        return self._answered(snapshot, text, k)

    def finish(self, snapshot: IndexSnapshot,
               pending: Future[tuple[KeyScores, np.ndarray | None]]) -> Nearest:
        """The top cosines per view by chunk id, and the query's vector (``None``: nothing was embedded)."""
        found, vector = pending.result()
        return {view: keys_to_chunks(snapshot, view, keys) for view, keys in found.items()}, vector

    def nearest(self, snapshot: IndexSnapshot, text: str, k: int) -> Nearest:
        """:meth:`start` and :meth:`finish` on this thread, breaker and all."""
        return self.finish(snapshot, self._answered(snapshot, text, k))

    def _answered(self, snapshot: IndexSnapshot, text: str, k: int) -> Future[tuple[KeyScores, np.ndarray | None]]:
        """:meth:`_guarded_keys` run on this thread, as a future already done."""
        done: Future[tuple[KeyScores, np.ndarray | None]] = Future()
        done.set_result(self._guarded_keys(snapshot.views, text, k))
        return done

    def _guarded_keys(self, views: tuple[str, ...], text: str, k: int) -> tuple[KeyScores, np.ndarray | None]:
        """:meth:`_keys`, or nothing while the vector store is unreachable (retried after a pause)."""
        if not self.breaker.allows():
            return NOTHING
        try:
            found = self._keys(views, text, k)
        except vector_backend_errors() as error:
            self.failed(error)
            return NOTHING
        self.breaker.succeeded()
        return found

    def _keys(self, views: tuple[str, ...], text: str, k: int) -> tuple[KeyScores, np.ndarray | None]:
        if not text.strip():
            return NOTHING
        with self.index.using_vectors(views) as store:
            if not any(store.cached_count(view) for view in views):
                return NOTHING  # nothing embedded yet (lexical-only index): don't pay for the query embedding
            vector = store.embedder.embed_query(text)
            return {view: store.query(view, vector, k) for view in views}, vector

    def failed(self, error: BaseException) -> None:
        """Open the breaker, say why in the log and drop the client that failed."""
        note = self.breaker.failed(error, self.index.chroma_url)
        log.warning("%s (index of %s)", note, self.index.repo)
        self.index.reopen_vectors()

    def fill(self, snapshot: IndexSnapshot, dense: dict[str, dict[int, float]], query_vector: np.ndarray,
             candidates: set[int], rows: Mapping[int, PoolRow] | None = None,
             unembedded: set[int] | None = None) -> bool:
        """Exact cosines for candidates a view's top-k missed, so the blend compares like with like.

        ``rows``: the candidates' rows when the search has read them already (their vector keys); ``unembedded``
        collects the candidates that have no card vector (they get the neutral cosine).
        Returns whether the vector store was out of date (those candidates then got the neutral cosine).
        """
        stale = False
        for view, scores in dense.items():
            missing = [c for c in candidates if c not in scores]
            if not missing:
                continue
            column = "card_key" if view == "card" else "code_key"
            # A test chunk of an index that embeds no tests in this view has no vector to ask the store for.
            with_tests = self.index.embeds_tests(snapshot.chunk_count, view)
            if rows is not None:
                key_of = {c: getattr(row, column) for c in missing
                          if (row := rows.get(c)) is not None and (with_tests or not row.is_test)}
            else:
                marks = ",".join("?" * len(missing))
                key_of = {c: key for c, key, is_test in snapshot.connection.execute(
                    f"SELECT id, {column}, is_test FROM chunks WHERE id IN ({marks})", missing)  # noqa: S608
                    if with_tests or not is_test}
            with self.index.using_vectors(snapshot.views) as store:
                sims, view_stale = store.similarities_or_stale(view, query_vector, list(set(key_of.values())))
            stale = stale or view_stale
            for chunk_id, key in key_of.items():
                if key in sims:
                    scores[chunk_id] = sims[key]
            # Chunks with no vector (still being embedded, or tests in a large repository) get the
            # pool's median cosine: unknown is neutral, and a zero would bury an exact name match.
            known = sorted(scores.values())
            neutral = known[len(known) // 2] if known else 0.0
            for chunk_id in candidates:
                if chunk_id not in scores:
                    scores[chunk_id] = neutral
                    if unembedded is not None and view == "card":
                        unembedded.add(chunk_id)
        return stale


def keys_to_chunks(snapshot: IndexSnapshot, view: str, key_scores: dict[str, float]) -> dict[int, float]:
    """The chunks holding each key's text in ``view`` (texts repeated across chunks share one vector)."""
    if not key_scores:
        return {}
    column = "card_key" if view == "card" else "code_key"
    keys = list(key_scores)
    found: dict[int, float] = {}
    for batch, marks in batched(keys):
        for chunk_id, key in snapshot.connection.execute(
            f"SELECT id, {column} FROM chunks WHERE {column} IN ({marks})", batch  # noqa: S608
        ):
            found[chunk_id] = key_scores[key]
    return found
