"""The on-disk index of one repository: build it, update it incrementally, read it.

Layout of ``<repo>/.grepgraph/`` (or ``--index-dir``)::

    index.sqlite     files (content hashes), chunks, edges, vector bookkeeping, settings,
                     and the Chroma server URL the vectors went to (empty: the embedded database)
    bm25/<gen>/      BM25 segments: ``main`` plus a small ``delta`` of recent chunks
    chroma/          the embedded Chroma database (unless a Chroma server is used)
    lock             held while an indexer runs

Crash safety comes from ordering. Parsing and the BM25 build write only new files; one
SQLite transaction then switches the chunk tables and the BM25 generation together,
so a run killed before that commit leaves the previous index untouched and one killed
after it leaves a complete lexical index. Vectors are written afterwards, batch by
batch; they are content-addressed, so an interrupted run's vectors are reused, and
search simply has fewer vectors until the next ``index`` finishes the job.

This module orchestrates a run and reads the index; the jobs live in their own modules: ``store.database``
(schema, connections, settings fingerprint), ``source.scan`` (what changed), ``store.lock`` (one run at a time),
``store.commit`` (the transaction that switches a run's rows and BM25 generation), ``store.segments`` (BM25
segment files), ``store.embedded_views`` (which vectors), ``dense.sync`` (embedding pending vectors, garbage
collection), ``store.status`` (what the index reports of itself) and ``core.errors``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import (
    EmbeddingUnavailable,
    IndexBusy,
    IndexError_,
    IndexMissing,
    VectorsUnavailable,
    no_index_yet,
    vector_backend_errors,
)
from ..core.index_settings import IndexSettings, resolve_index_settings
from ..core.model import ParsedFile, ProgressCallback
from ..core.run_settings import ollama_url
from ..dense.leases import CurrentVectorStore, lazy_lease
from ..dense.sync import (
    collect_garbage,
    count_pending_vectors,
    embed_pending,
    embed_with_cache,
    prepare_model_in_background,
    record_vector_backend,
    record_vector_namespace,
    same_vector_models,
    vector_model_ids,
    view_token_limit,
)
from ..parse.parallel import parse_many
from ..source.freshness import record_git_head
from ..source.scan import scan_changes
from .commit import commit_changes
from .database import INDEX_FORMAT, open_store, same_fingerprint, stored_form
from .embedded_views import embedded_views, embeds_tests
from .generations import remove_unleased_generations
from .lock import indexer_lock
from .segments import load_segments
from .status import index_status
from .trust import index_location, own_index_dir, refusal, verdict

log = logging.getLogger(__name__)

@dataclass
class IndexSummary:
    """What an indexing run did."""

    files: int = 0
    files_changed: int = 0
    files_removed: int = 0
    chunks: int = 0
    chunks_added: int = 0
    vectors_embedded: int = 0
    vectors_pending: int = 0
    edges: int = 0
    parse_errors: int = 0
    skipped: dict = field(default_factory=dict)
    skipped_paths: dict = field(default_factory=dict)  # reason -> the first paths skipped for it (folders end in /)
    seconds: float = 0.0
    phases: dict = field(default_factory=dict)
    rebuilt: bool = False

    def to_dict(self) -> dict:
        """As a plain dict (for ``--json``)."""
        return asdict(self)


def default_index_dir(repo: Path) -> Path:
    """Where the index of ``repo`` lives unless told otherwise (:func:`~retrievers.store.trust.index_location`).

    ``<repo>/.grepgraph``, or the user's cache when that folder is not one this user made.
    """
    return index_location(repo)


class CodeIndex:
    """One repository's index: an SQLite store, BM25 segments and Chroma vectors."""

    def __init__(self, repo: Path | str, index_dir: Path | str | None = None,
                 settings: IndexSettings | None = None, embedder=None, chroma_url: str | None = None) -> None:
        """Point at a repository (nothing is read or written until used).

        Args:
            repo: The repository root.
            index_dir: Where the index lives (default ``<repo>/.grepgraph``).
            settings: Build settings. ``None``: reading uses the ones the index was built with, and
                :meth:`update` those with the environment's and ``grepgraph.toml``'s changes (see
                :mod:`retrievers.core.settings`).
            embedder: Anything with ``model_id``, ``dimension``, ``embed(texts)``; default MiniLM.
            chroma_url: Use a Chroma server at this URL instead of the embedded database. ``None``: the
                server the index was built with (recorded in its meta), else the embedded database;
                ``""``: the embedded database.
        """
        self.repo = Path(repo).expanduser().resolve()
        if index_dir:
            self.index_dir = Path(index_dir).expanduser().resolve()
            if not verdict(self.index_dir).trusted:
                raise IndexError_(refusal(self.index_dir))
        else:
            self.index_dir = default_index_dir(self.repo)
        # Without explicit settings, an existing index is read (and updated) with the ones it was built with.
        self._given_settings = settings
        self.settings = settings or self.stored_settings() or IndexSettings()
        self._embedder = embedder
        self._embedder_given = embedder is not None
        self._chroma_url = chroma_url
        self._vectors = CurrentVectorStore(self._open_vector_store)
        self._embedding_cache: Any = None

    # ---------------------------------------------------------------- paths and connections
    @property
    def db_path(self) -> Path:  # noqa: D102
        return self.index_dir / "index.sqlite"

    def exists(self) -> bool:
        """Whether a committed index is on disk."""
        return self.db_path.is_file() and self._meta_value("bm25_generation") is not None

    def connect(self) -> sqlite3.Connection:
        """A new SQLite connection (WAL, so readers never block the indexer)."""
        return open_store(self.db_path)

    def _meta_value(self, key: str) -> str | None:
        if not self.db_path.is_file():
            return None
        with closing_connection(self) as connection:
            row = connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def stored_settings(self) -> IndexSettings | None:
        """The settings the index on disk was built with (``None``: no index, or another format's)."""
        try:
            stored = json.loads(self._meta_value("settings") or "null")
        except (sqlite3.Error, ValueError) as error:
            log.warning("the settings of the index at %s are unreadable (%s); using the defaults",
                        self.index_dir, error)
            return None
        if not isinstance(stored, dict) or stored.get("format") != INDEX_FORMAT:
            return None
        # Indexes written before views and embed_tests were kept have them at their defaults.
        known = IndexSettings().to_dict().keys()
        return IndexSettings(**{key: value for key, value in stored.items() if key in known})

    @property
    def chroma_url(self) -> str | None:
        """The Chroma server in use: the one given, else the one the index was built with (``None``: embedded)."""
        if self._chroma_url is not None:
            return self._chroma_url or None
        return self._meta_value("chroma_url") or None

    @property
    def embedder(self):  # noqa: D102
        if self._embedder is None:
            from ..dense.embeddings import embedder_for

            self._embedder = embedder_for(self.settings.embedding_model, ollama_url(self.repo))
        return self._embedder

    def views(self, chunk_count: int) -> tuple[str, ...]:
        """The embedded views for an index of ``chunk_count`` chunks (see :mod:`retrievers.store.embedded_views`)."""
        return embedded_views(self.settings, chunk_count)

    def embeds_tests(self, chunk_count: int, view: str = "card") -> bool:
        """Whether test-file chunks get a ``view`` vector in an index of ``chunk_count`` chunks."""
        return embeds_tests(self.settings, chunk_count, view)

    def test_views(self, chunk_count: int) -> dict[str, bool]:
        """:meth:`embeds_tests` for each embedded view."""
        return {view: self.embeds_tests(chunk_count, view) for view in self.views(chunk_count)}

    def using_vectors(self, views: tuple[str, ...] = ("card", "code")) -> AbstractContextManager[Any]:
        """The Chroma collections of this index (a :class:`~.vectors.VectorStore`), held for one call.

        A :meth:`reopen_vectors` meanwhile loads a new store for later calls and frees this one once
        the call ends.
        """
        return self._vectors.using(views)

    def vector_store(self, views: tuple[str, ...] = ("card", "code")) -> Any:
        """The current vector store, not held: for one-thread callers (tools, tests) that reopen nothing."""
        with self.using_vectors(views) as store:
            return store

    def _open_vector_store(self, views: tuple[str, ...]) -> Any:
        from ..dense.vectors import VectorStore, open_chroma_client

        url = self.chroma_url
        namespace = self.vector_namespace()
        holds = self._meta_value("vectors_version") or ""  # read first: every change committed by now is in Chroma
        try:
            store = VectorStore(open_chroma_client(self.index_dir / "chroma", url), self.embedder, namespace, views)
            store.holds_version = holds
            return store
        except Exception as error:  # chromadb: ValueError("Could not connect ..."), httpx errors
            if not url or not isinstance(error, (ValueError, *vector_backend_errors())):
                raise
            raise VectorsUnavailable(f"the Chroma server at {url} is not reachable ({error})") from error

    # ---------------------------------------------------------------- locking
    @contextmanager
    def lock(self, wait: bool = False) -> Iterator[None]:
        """Hold the indexer lock; raise :class:`IndexBusy` (or wait) if another run holds it."""
        own_index_dir(self.index_dir)
        with indexer_lock(self.index_dir / "lock", self.repo, wait):
            yield

    # ---------------------------------------------------------------- building
    def update(self, progress: ProgressCallback | None = None, rebuild: bool = False,
               embed: bool = True, wait_for_lock: bool = False) -> IndexSummary:
        """Bring the index up to date with the repository; only changed files are parsed and embedded."""
        if not self.repo.is_dir():
            raise IndexError_(f"repository not found: {self.repo}")
        progress = progress or (lambda phase, done, total: None)
        started = time.perf_counter()
        if self._given_settings is None:
            self._use_settings(self.upcoming_settings()[0])
        summary = IndexSummary()
        # The vector keys written with the lexical index name the model: find or make its file meanwhile.
        prepare_model_in_background(self.settings.embedding_model, self.embedder)
        with self.lock(wait=wait_for_lock):
            if self.stored_format() not in (None, INDEX_FORMAT):
                # Another format's tables can't be migrated in place; vectors in Chroma survive.
                log.info("the index at %s has format %s, not %s: rebuilding it", self.index_dir,
                         self.stored_format(), INDEX_FORMAT)
                self._discard_store()
                summary.rebuilt = True
            connection = self.connect()
            try:
                self._update_locked(connection, summary, progress, rebuild, embed)
            finally:
                connection.close()
        summary.seconds = round(time.perf_counter() - started, 3)
        return summary

    def stored_format(self) -> int | None:
        """The format number of the index on disk (``None`` when there is none)."""
        if not self.db_path.is_file():
            return None
        try:
            connection = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=30)
            try:
                row = connection.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
            finally:
                connection.close()
        except sqlite3.DatabaseError:
            return -1
        return json.loads(row[0]).get("format") if row else None

    def _discard_store(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.db_path}{suffix}").unlink(missing_ok=True)
        shutil.rmtree(self.index_dir / "bm25", ignore_errors=True)

    def _settings_match(self, connection: sqlite3.Connection) -> bool:
        row = connection.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        return row is not None and same_fingerprint(json.loads(row[0]), self.settings)

    def _check_new_embedder(self, connection: sqlite3.Connection, has_index: bool) -> None:
        """Before a first index or a switch of embedding model changes anything, make sure the model answers.

        Raises:
            VectorsUnavailable: The model's server can't be reached; the index is left as it was.
        """
        row = connection.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        previous = json.loads(row[0]).get("embedding_model") if row and has_index else None
        if previous == self.settings.embedding_model:
            return
        try:
            self.embedder.embed(["grepgraph"])
        except EmbeddingUnavailable as error:
            state = (f"the index of {self.repo} is unchanged (embedding {previous})" if previous
                     else "nothing was indexed")
            raise VectorsUnavailable(f"{error}; {state}") from error

    def _vector_model_ids(self) -> tuple[str, str]:
        """The models named in the card and code views' vector keys."""
        return vector_model_ids(self.settings.embedding_model, self.embedder)

    def _record_settings(self, connection: sqlite3.Connection) -> None:
        """Keep this run's settings, vector settings included, so the next run and searches reopen with them."""
        connection.execute("INSERT OR REPLACE INTO meta VALUES ('settings', ?)",
                           (json.dumps(stored_form(self.settings)),))
        connection.commit()

    def _update_locked(self, connection: sqlite3.Connection, summary: IndexSummary,
                       progress: ProgressCallback, rebuild: bool, embed: bool) -> None:
        phase_start = time.perf_counter()
        has_index = connection.execute("SELECT value FROM meta WHERE key = 'bm25_generation'").fetchone()
        if embed:
            self._check_new_embedder(connection, bool(has_index))
        if has_index and not self._settings_match(connection):
            log.info("the index at %s was built with other settings: rebuilding it", self.index_dir)
            rebuild = True
        elif has_index and not same_vector_models(connection, self._vector_model_ids()):
            # Same setting, other model file (e.g. minilm, now quantized): every vector key changes.
            log.info("the index at %s was embedded with another model: rebuilding it", self.index_dir)
            rebuild = True
        record_vector_namespace(connection, self.vector_namespace)
        record_vector_backend(connection, self.chroma_url or "")
        summary.rebuilt = summary.rebuilt or bool(rebuild and has_index)
        known = {} if rebuild else {
            row[0]: row[1:] for row in connection.execute("SELECT path, hash, size, mtime_ns FROM files")
        }
        scan = scan_changes(self.repo, self.settings.max_file_bytes, known, progress)
        changed, touched, removed = scan.changed, scan.touched, scan.removed
        summary.skipped = dict(scan.skipped)
        summary.skipped_paths = scan.skipped.named
        summary.files = len(scan.present)
        summary.files_changed = len(changed)
        summary.files_removed = len(removed)
        summary.phases["scan"] = round(time.perf_counter() - phase_start, 3)

        phase_start = time.perf_counter()
        parsed: list[tuple[tuple, ParsedFile]] = []
        jobs = [(source.path, data, source.language) for source, data, _, _ in changed]
        for number, (item, result) in enumerate(zip(changed, parse_many(jobs))):
            if number % 50 == 0:
                progress("parse", number, len(changed))
            summary.parse_errors += bool(result.error)
            if result.error:
                log.info("%s: %s", item[0].path, result.error)
            parsed.append((item, result))
        progress("parse", len(changed), len(changed))
        summary.phases["parse"] = round(time.perf_counter() - phase_start, 3)

        if not has_index or rebuild or changed or removed or touched:
            phase_start = time.perf_counter()
            generation, summary.chunks_added = commit_changes(
                connection, self.index_dir, self.repo, self.settings, self._vector_model_ids(), parsed, removed,
                touched, rebuild, progress)
            self._remove_old_generations(keep=generation)
            summary.phases["store+bm25"] = round(time.perf_counter() - phase_start, 3)
        elif has_index:
            # Nothing to commit: still delete the generations readers held during earlier runs.
            self._remove_old_generations(keep=has_index[0])
        self._record_settings(connection)
        record_git_head(connection, self.repo)
        summary.chunks = connection.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        summary.edges = connection.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
        views = self.views(summary.chunks)
        with_tests = self.test_views(summary.chunks)
        if embed:
            phase_start = time.perf_counter()
            try:
                # A flag left by a killed run: its last vectors may be in Chroma but not in the vectors table.
                sweep = connection.execute("SELECT 1 FROM meta WHERE key = 'vectors_unrecorded'").fetchone()
                with ExitStack() as leases:  # a run with nothing to embed never opens Chroma
                    store = lazy_lease(lambda: self.using_vectors(views), leases)
                    summary.vectors_embedded = embed_pending(connection, views, with_tests, progress, store,
                                                             self._embed_with_cache)
                    collect_garbage(connection, views, store, sweep=sweep is not None)
                connection.execute("DELETE FROM meta WHERE key = 'vectors_unrecorded'")
                connection.commit()
                if summary.vectors_embedded and hasattr(self.embedder, "release_helpers"):
                    self.embedder.release_helpers()  # a resident process keeps one model session, not one per core
            except vector_backend_errors() as error:
                raise VectorsUnavailable(
                    f"{error}; the lexical index of {self.repo} is up to date, and the vectors not stored yet "
                    "are added by the next `grepgraph index` once the server answers"
                ) from error
            summary.phases["embed"] = round(time.perf_counter() - phase_start, 3)
        summary.vectors_pending = sum(count_pending_vectors(connection, view, with_tests[view]) for view in views)

    def vector_namespace(self) -> str:
        """The Chroma collection prefix of this index: one per index, so indexes sharing a server never meet.

        It is an id minted when the index is first built and kept in its meta, so moving or
        renaming the repository keeps its vectors. Indexes built before the id existed keep the
        prefix they were created with (a hash of the repository path and the model).
        """
        stored = self._meta_value("vector_namespace")
        if stored:
            return stored
        return "gg-" + hashlib.blake2b(f"{self.repo}|{self.embedder.model_id}".encode(), digest_size=6).hexdigest()

    def _remove_old_generations(self, keep: str) -> None:
        """Delete the generations no reader leases (see :mod:`retrievers.store.generations`); the rest go next run."""
        remove_unleased_generations(self.index_dir / "bm25", keep)

    # ---------------------------------------------------------------- vectors
    def _embed_with_cache(self, keys: list[str], texts: list[str], view: str) -> np.ndarray:
        """Embed texts of one view, taking what the machine-wide cache already has."""
        if self._embedding_cache is None:
            from ..dense.cache import EmbeddingCache

            self._embedding_cache = EmbeddingCache.open_default() or False
        return embed_with_cache(self.embedder, self._embedding_cache or None, keys, texts,
                                view_token_limit(view, self.embedder))

    def vectors_hold(self, version: str) -> bool:
        """Whether the vector store in use already holds the change ``version`` (made through this index)."""
        return self._vectors.holds(version)

    def reopen_vectors(self) -> None:
        """Load the Chroma database afresh on the next use; the old client is freed once no call uses it."""
        self._vectors.reload()

    # ---------------------------------------------------------------- reading
    def require(self) -> None:
        """Raise :class:`IndexMissing` with a next step when there is no index."""
        if not self.repo.exists():
            raise IndexError_(f"repository not found: {self.repo}")
        if not self.repo.is_dir():
            raise IndexError_(f"not a directory: {self.repo}")
        if self.stored_format() not in (None, INDEX_FORMAT):
            raise IndexMissing(
                f"the index of {self.repo} was built by another grepgraph version; run: grepgraph index {self.repo}"
            )
        if not self.exists():
            raise no_index_yet(self.repo)

    def status(self) -> dict:
        """Counts, settings, versions and freshness of the index (:func:`~retrievers.store.status.index_status`)."""
        return index_status(self)

    def upcoming_settings(self) -> tuple[IndexSettings, dict[str, str]]:
        """The settings the next :meth:`update` builds with, and the layer each came from."""
        given = self._given_settings.to_dict() if self._given_settings else None
        return resolve_index_settings(self.repo, given, stored=self.stored_settings())

    def follow_stored_settings(self) -> bool:
        """Take the settings the index on disk was last built with; ``True`` when they changed.

        A reader that stays open (``serve``, MCP) calls it when a new generation or new vectors are
        committed: the re-index may have switched the embedded views or the embedding model.
        """
        stored = self.stored_settings()
        if stored is None or stored == self.settings:
            return False
        self._use_settings(stored)
        self.reopen_vectors()  # the vector store was opened for the old views (or model)
        return True

    def _use_settings(self, settings: IndexSettings) -> None:
        if settings.embedding_model != self.settings.embedding_model and not self._embedder_given:
            self._embedder = None
            self.reopen_vectors()
        self.settings = settings

    def bm25_generation_dir(self, connection: sqlite3.Connection) -> Path:
        """The BM25 generation the committed index points at."""
        row = connection.execute("SELECT value FROM meta WHERE key = 'bm25_generation'").fetchone()
        if not row:
            raise no_index_yet(self.repo)
        return self.index_dir / "bm25" / row[0]


@contextmanager
def closing_connection(index: CodeIndex) -> Iterator[sqlite3.Connection]:
    """A connection that is closed on exit."""
    connection = index.connect()
    try:
        yield connection
    finally:
        connection.close()


# Names other modules and tests import from here; they live in the modules of their jobs.
__all__ = ["INDEX_FORMAT", "CodeIndex", "IndexBusy", "IndexError_", "IndexMissing", "IndexSettings", "IndexSummary",
           "ProgressCallback", "VectorsUnavailable", "closing_connection", "default_index_dir", "load_segments",
           "vector_backend_errors"]
