"""The snapshots a long-lived reader holds on one index, from opening to closing.

Each call holds one :class:`~retrievers.store.snapshot.IndexSnapshot` from start to end: the newest committed
generation's, or one a caller pins by name (a graph run keeps the generation its first search saw). Before
handing one out, the newest committed generation is looked up and opened if it is new; a snapshot it replaced
stays open while in use and for ``RETIRED_KEEP_S`` after, so a pinned run can finish on it. Once nothing older
is open, the write-ahead log is checkpointed and let restart (see ``WAL_RESTART_FRAMES``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..core.errors import IndexMissing
from ..core.memory import return_freed_memory
from ..dense.sync import vectors_version
from .index import CodeIndex
from .snapshot import IndexSnapshot, committed_generation, open_snapshot

if TYPE_CHECKING:
    import sqlite3

# A snapshot a newer commit replaced stays open this long (at most this many), so a graph run pinned to
# it (LLM calls included: up to twice the LLM timeout) can finish on it; one in use is never closed.
RETIRED_KEEP_S = 30.0
RETIRED_KEEP = 8
# SQLite restarts its write-ahead log only when no reader's snapshot reaches into it. A searcher always holds
# one, so past this many log frames (~4 MB) and once nothing older is open, the log is checkpointed and the
# current generation re-opened on the checkpointed file; the next commit then writes the log from its start.
WAL_RESTART_FRAMES = 1000


class LiveSnapshots:
    """The open snapshots of one index: the newest committed generation's and the replaced ones still kept.

    Safe to share between threads. Calls on the same snapshot are serialised by its lock.
    """

    def __init__(self, index: CodeIndex, vectors_lock: threading.RLock) -> None:
        """Open the newest committed generation of ``index``.

        Args:
            index: The index to read (it must exist).
            vectors_lock: Guards ``index``'s Chroma client, which a refresh re-opens when the vectors or the
                database changed under it; the caller queries the vectors under the same lock.
        """
        self.index = index
        self._vectors_lock = vectors_lock
        # Guards the snapshots and the probe connection; never held while searching.
        self._lock = threading.Lock()
        self._probe = index.connect()
        self._identity = self._database_identity()
        self._loaded_vectors_version = vectors_version(self._probe)
        self._current = open_snapshot(index)
        self._retired: list[IndexSnapshot] = []
        self._log_checkpoint_due = True
        self._pinned = threading.local()

    def close(self) -> None:
        """Close every snapshot (ending its read transaction and lease) and the probe connection."""
        with self._lock:
            for snapshot in [self._current, *self._retired]:
                snapshot.close()
            self._retired = []
            self._probe.close()

    @contextmanager
    def hold(self, generation: str | None = None) -> Iterator[IndexSnapshot]:
        """Hold one snapshot for a call: ``generation`` if still open, else the newest.

        A call nested in another on the same thread (``chunk_text`` inside ``connection_lock``) gets the
        snapshot the outer call holds.
        """
        pinned: list[IndexSnapshot] = self._pinned.__dict__.setdefault("stack", [])
        if pinned and generation in (None, pinned[-1].generation):
            yield pinned[-1]
            return
        with self._lock:
            self._refresh_locked()
            snapshot = next((s for s in self._retired if s.generation == generation), self._current)
            snapshot.users += 1
        try:
            with snapshot.lock:
                pinned.append(snapshot)
                try:
                    yield snapshot
                finally:
                    pinned.pop()
        finally:
            with self._lock:
                snapshot.users -= 1
                self._close_unused_locked()

    @property
    def connection(self) -> sqlite3.Connection:
        """The connection of the snapshot this thread holds, else the newest snapshot's (without holding it)."""
        pinned = self._pinned.__dict__.get("stack")
        if pinned:
            return pinned[-1].connection
        with self._lock:
            return self._current.connection

    def _database_identity(self) -> tuple[int, int] | None:
        try:
            stat = self.index.db_path.stat()
        except OSError:
            return None
        return (stat.st_dev, stat.st_ino)

    def _refresh_locked(self) -> None:
        """Open a snapshot of a newer committed generation, if there is one (caller holds ``_lock``)."""
        identity = self._database_identity()
        if identity is None:
            repo = self.index.repo
            raise IndexMissing(f"the index of {repo} was deleted; run: grepgraph index {repo}")
        if identity != self._identity:
            # Rebuilt from scratch (another format, or deleted and re-indexed): a new database file.
            self._probe.close()
            self._probe = self.index.connect()
            self._identity = identity
            with self._vectors_lock:
                self.index.reopen_vectors()
        stored_vectors = vectors_version(self._probe)
        generation = committed_generation(self._probe)
        settings_changed = False
        if stored_vectors != self._loaded_vectors_version or generation != self._current.generation:
            # A re-index may have switched the views or the embedding model: the next snapshot reads with those.
            with self._vectors_lock:
                settings_changed = self.index.follow_stored_settings()
        if stored_vectors != self._loaded_vectors_version:
            if not self.index.vectors_hold(stored_vectors):  # changes made through our own store are in it
                with self._vectors_lock:
                    self.index.reopen_vectors()
            self._loaded_vectors_version = stored_vectors
        if settings_changed or generation != self._current.generation:
            fresh = open_snapshot(self.index)
            self._current.retired_at = time.monotonic()
            self._retired.insert(0, self._current)
            self._current = fresh
            self._log_checkpoint_due = True
        self._close_unused_locked()

    def _close_unused_locked(self) -> None:
        now = time.monotonic()
        keep = []
        for number, snapshot in enumerate(self._retired):
            expired = number >= RETIRED_KEEP or now - (snapshot.retired_at or now) > RETIRED_KEEP_S
            if expired and snapshot.users == 0:
                snapshot.close()
            else:
                keep.append(snapshot)
        if len(keep) < len(self._retired):
            return_freed_memory()  # a generation's segments and caches: tens of MB on a large index
        self._retired = keep
        if self._log_checkpoint_due and not self._retired and self._current.users == 0:
            self._let_the_log_restart_locked()

    def _let_the_log_restart_locked(self) -> None:
        """Checkpoint the log and, when it is long and all in the file, re-open the generation on the file."""
        self._log_checkpoint_due = False
        busy, frames, checkpointed = self._probe.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if busy or frames < WAL_RESTART_FRAMES or checkpointed != frames:
            return
        fresh = open_snapshot(self.index)
        self._current.close()
        self._current = fresh
