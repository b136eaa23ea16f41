"""One committed index generation, as a search sees it from start to end.

An indexer (another thread or process) may commit a new generation at any moment. A search
that read BM25 scores from one generation and chunk rows from the next would rank ids that no
longer exist, or mean other chunks. So a snapshot bundles what belongs together: the BM25
segments of one generation, SQLite connections whose read transactions see that generation
(WAL: every query through one sees that commit, whatever is committed later; see
:mod:`retrievers.store.readers`), a lease that keeps the generation's files on disk
(:mod:`retrievers.store.generations`), and the caches computed from it. A snapshot is immutable
apart from those caches, and threads read it side by side: each through the connection it borrowed
(:meth:`IndexSnapshot.reading`), the caches computed outside their short lock and published under it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

from ..codegraph.call_resolution import CallResolver
from ..core.deadline import NO_DEADLINE, Deadline
from ..core.errors import IndexError_, no_index_yet
from ..lexical.bm25 import LexicalIndex, top_k
from ..query.mentions import PathNames
from ..query.scope import Scope, ScopeError, chunk_ids_in
from ..source.languages import is_documentation, is_test_path
from .generations import GenerationGone, GenerationLease
from .hierarchy import exception_types
from .index import CodeIndex
from .readers import GenerationReaders, Reader, committed_generation
from .segments import load_segments
from .textstore import TextCache

SCOPE_CACHE_SIZE = 64
# The graph probes BM25 before deciding on a rewrite, then retrieves with the same tokens.
LEXICAL_CACHE_SIZE = 16
# An indexer committing faster than a reader can lease what it read: give up after this many tries.
OPEN_ATTEMPTS = 20


@dataclass(frozen=True)
class LexicalScores:
    """The BM25 score of every live chunk of a snapshot for one token list (``ids`` sorted ascending)."""

    ids: np.ndarray
    scores: np.ndarray

    def top(self, k: int, allowed: np.ndarray | None = None) -> tuple[dict[int, float], list[float]]:
        """The best ``k`` ids (among ``allowed``, if given) with their scores, and the two best scores."""
        # A filter applies before the cut, so a small part of the repository still gets its best k.
        scores = self.scores if allowed is None else np.where(np.isin(self.ids, allowed), self.scores, 0.0)
        best = top_k(scores, k)
        found = {int(self.ids[i]): float(self.scores[i]) for i in best}
        return found, [float(self.scores[i]) for i in best[:2]]

    def of(self, chunk_ids: list[int]) -> dict[int, float]:
        """The scores of specific chunks (vector candidates BM25 did not rank)."""
        if not chunk_ids or self.ids.size == 0:
            return {}
        wanted = np.asarray(sorted(chunk_ids), dtype=np.int64)
        positions = np.clip(np.searchsorted(self.ids, wanted), 0, self.ids.size - 1)
        hit = self.ids[positions] == wanted
        return {int(c): float(self.scores[p]) for c, p in zip(wanted[hit], positions[hit])}


EMPTY_SCORES = LexicalScores(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))


class IndexSnapshot:
    """The segments, file list, caches and a read transaction of one committed generation."""

    def __init__(self, index: CodeIndex, connection: sqlite3.Connection, generation: str,
                 lease: GenerationLease) -> None:
        """Load ``generation`` through ``connection``, whose read transaction already sees it."""
        self.generation = generation
        self._readers = GenerationReaders(index.db_path, generation, connection)
        # Guards the caches below while one is looked up or published (never while one is computed).
        self._cache_lock = threading.Lock()
        self._lease = lease
        live = np.fromiter((row[0] for row in connection.execute("SELECT id FROM chunks ORDER BY id")),
                           dtype=np.int64)
        self.segments: list[tuple[np.ndarray, LexicalIndex, np.ndarray]] = [
            (ids, bm25, np.isin(ids, live)) for ids, bm25 in load_segments(index.index_dir / "bm25" / generation)]
        self.chunk_count = int(live.size)
        self.views = index.views(self.chunk_count)
        self.languages: dict[str, str] = dict(connection.execute("SELECT path, language FROM files"))
        self.paths = list(self.languages)
        self.text_cache = TextCache()
        self._scopes: dict[Scope, tuple[list[str], np.ndarray]] = {}
        self._lexical: OrderedDict[tuple[str, ...], LexicalScores] = OrderedDict()
        self._kinds: dict[str, tuple[bool, bool]] | None = None
        self._path_names: PathNames | None = None
        self._exceptions: dict[int, str] | None = None
        self.users = 0
        self.retired_at: float | None = None

    def close(self) -> None:
        """End the read transactions, close the connections and let the indexer delete the generation."""
        try:
            self._readers.close()
        finally:
            self._lease.release()

    def reading(self, deadline: Deadline = NO_DEADLINE) -> AbstractContextManager[Reader]:
        """Borrow a connection for this thread: :attr:`connection` is that one until the block ends.

        Raises:
            SearchDeadlineExceeded: ``deadline`` passed while every connection was in use.
        """
        return self._readers.borrow(deadline)

    @property
    def connection(self) -> sqlite3.Connection:
        """The connection this thread borrowed (inside :meth:`reading`), else the first one (one thread only)."""
        return (self._readers.current() or self._readers.first).connection

    @property
    def connections_in_use(self) -> int:
        """Connections borrowed now."""
        return self._readers.borrowed

    def knows(self, token: str) -> bool:
        """Whether some chunk of this generation holds ``token`` (a word of the repository's vocabulary)."""
        return any(bm25.knows(token) for _, bm25, _ in self.segments)

    def lexical(self, tokens: list[str]) -> LexicalScores:
        """BM25 scores of every live chunk for ``tokens`` (the last few token lists are remembered)."""
        key = tuple(tokens)
        with self._cache_lock:
            cached = self._lexical.get(key)
            if cached is not None:
                self._lexical.move_to_end(key)
                return cached
        ids_parts, score_parts = [], []
        for ids, bm25, live in self.segments:
            ids_parts.append(ids[live])
            score_parts.append(np.asarray(bm25.scores(list(tokens)))[live])
        # Segments are in id order (the delta holds newer ids), so the ids come out sorted.
        scores = LexicalScores(np.concatenate(ids_parts), np.concatenate(score_parts)) if ids_parts else EMPTY_SCORES
        with self._cache_lock:
            self._lexical[key] = scores
            while len(self._lexical) > LEXICAL_CACHE_SIZE:
                self._lexical.popitem(last=False)
        return scores

    def scope_filter(self, scope: Scope | None) -> tuple[list[str] | None, np.ndarray | None]:
        """The paths and sorted chunk ids a scope keeps (``None, None``: everything).

        Raises :class:`ScopeError` when the scope keeps no indexed file (a mistyped glob).
        """
        if scope is None or scope.is_everything:
            return None, None
        with self._cache_lock:
            kept = self._scopes.get(scope)
        if kept is None:
            paths = scope.allowed_paths(self.languages)
            if not paths:
                raise ScopeError(scope.no_match(self.languages))
            kept = (paths, chunk_ids_in(self.connection, paths))
            with self._cache_lock:
                if len(self._scopes) >= SCOPE_CACHE_SIZE:
                    self._scopes.clear()
                kept = self._scopes.setdefault(scope, kept)
        return kept

    def file_kinds(self) -> dict[str, tuple[bool, bool]]:
        """``{path: (is test, is documentation)}`` of every indexed file, computed once."""
        kinds = self._kinds
        if kinds is None:
            kinds = {path: (is_test_path(path, language), is_documentation(path, language))
                     for path, language in self.languages.items()}
            with self._cache_lock:
                kinds = self._kinds = self._kinds or kinds
        return kinds

    def path_names(self) -> PathNames:
        """The indexed paths by file name (which files a mentioned path names), built once."""
        names = self._path_names
        if names is None:
            names = PathNames(self.paths)
            with self._cache_lock:
                names = self._path_names = self._path_names or names
        return names

    def exception_types(self) -> dict[int, str]:
        """Chunk id -> symbol of every exception type (:func:`.hierarchy.exception_types`), computed once."""
        found = self._exceptions
        if found is None:
            found = exception_types(self.connection)
            with self._cache_lock:
                if self._exceptions is None:
                    self._exceptions = found
                found = self._exceptions
        return found

    def call_resolver(self) -> CallResolver:
        """A call resolver over this thread's connection, kept with it for what it caches (file facts, hierarchy)."""
        reader = self._readers.current() or self._readers.first
        resolver = reader.cache.get("call_resolver")
        if resolver is None:
            resolver = reader.cache["call_resolver"] = CallResolver(reader.connection)
        return resolver


def open_snapshot(index: CodeIndex) -> IndexSnapshot:
    """A snapshot of the generation committed now, leased and loaded inside one read transaction."""
    for _ in range(OPEN_ATTEMPTS):
        connection = index.connect()
        try:
            connection.execute("BEGIN")
            generation = committed_generation(connection)
            if not generation:
                raise no_index_yet(index.repo)
            lease = GenerationLease(index.index_dir / "bm25" / generation)
        except GenerationGone:
            connection.close()  # replaced after this transaction began: read the name again
            continue
        except BaseException:
            connection.close()
            raise
        try:
            return IndexSnapshot(index, connection, generation, lease)
        except BaseException:
            connection.close()
            lease.release()
            raise
    raise IndexError_(f"the index of {index.repo} changed {OPEN_ATTEMPTS} times while being opened; try again")
