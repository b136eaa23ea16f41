"""The snapshots a long-lived reader holds on one index, from opening to closing.

Each call holds one :class:`~retrievers.store.snapshot.IndexSnapshot` from start to end: the newest committed
generation's, or one a caller pins by name (a graph run keeps the generation its first search saw). Before
handing one out, the newest committed generation is looked up and opened if it is new; a snapshot it replaced
stays open while in use and for ``RETIRED_KEEP_S`` after, so a pinned run can finish on it. Once nothing older
is open, the write-ahead log is checkpointed and let restart (see ``WAL_RESTART_FRAMES``).

Threads hold snapshots side by side, each reading through a connection of its own (see
:mod:`retrievers.store.readers`); the lock here guards only the list of snapshots, never a search.
A reader may share its :class:`CodeIndex` with a writer in the same process (the resident service's
watcher, so searches see the vectors it stores in the Chroma client that stored them): the writer
updates inside :func:`updating`, and meanwhile readers leave the index's settings to it.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..core.deadline import NO_DEADLINE, Deadline
from ..core.errors import IndexMissing
from ..core.memory import return_freed_memory
from ..dense.sync import vectors_version
from .index import CodeIndex
from .readers import committed_generation
from .snapshot import IndexSnapshot, open_snapshot

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

_update_locks: weakref.WeakKeyDictionary[CodeIndex, threading.Lock] = weakref.WeakKeyDictionary()
_update_locks_guard = threading.Lock()


def _update_lock(index: CodeIndex) -> threading.Lock:
    with _update_locks_guard:
        return _update_locks.setdefault(index, threading.Lock())


@contextmanager
def updating(index: CodeIndex) -> Iterator[None]:
    """An update made through ``index`` itself: readers sharing the object leave its settings alone meanwhile.

    :meth:`CodeIndex.update` switches the object's settings to the ones it builds with before it commits
    them; a reader following the stored settings in between would switch them back under it.
    """
    with _update_lock(index):
        yield


class LiveSnapshots:
    """The open snapshots of one index: the newest committed generation's and the replaced ones still kept.

    Safe to share between threads, which read side by side (each through a connection of its own).
    """

    def __init__(self, index: CodeIndex) -> None:
        """Open the newest committed generation of ``index`` (it must exist)."""
        self.index = index
        # Guards the snapshots and the probe connection; never held while searching.
        self._lock = threading.Lock()
        self._probe = index.connect()
        self._identity = self._database_identity()
        self._loaded_vectors_version = vectors_version(self._probe)
        # The index's settings are followed after every commit seen, once no update through it is under way.
        self._settings_due = False
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
    def hold(self, generation: str | None = None, deadline: Deadline = NO_DEADLINE) -> Iterator[IndexSnapshot]:
        """Hold one snapshot for a call: ``generation`` if still open, else the newest.

        The snapshot's :attr:`~IndexSnapshot.connection` is this thread's own until the block ends. A call
        nested in another on the same thread (``chunk_count`` inside ``connection_lock``) gets the snapshot
        the outer call holds.

        Raises:
            SearchDeadlineExceeded: ``deadline`` passed while waiting for a connection.
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
            with snapshot.reading(deadline):
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
    def in_use(self) -> int:
        """Calls holding a snapshot now (nested calls count once)."""
        with self._lock:
            return sum(snapshot.users for snapshot in [self._current, *self._retired])

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
            self.index.reopen_vectors()
        stored_vectors = vectors_version(self._probe)
        generation = committed_generation(self._probe)
        if stored_vectors != self._loaded_vectors_version or generation != self._current.generation:
            # A re-index may have switched the views or the embedding model: the next snapshot reads with those.
            self._settings_due = True
        settings_changed = self._settings_due and self._follow_stored_settings()
        if stored_vectors != self._loaded_vectors_version:
            if not self.index.vectors_hold(stored_vectors):  # changes made through our own store are in it
                self.index.reopen_vectors()
            self._loaded_vectors_version = stored_vectors
        if settings_changed or generation != self._current.generation:
            fresh = open_snapshot(self.index)
            self._current.retired_at = time.monotonic()
            self._retired.insert(0, self._current)
            self._current = fresh
            self._log_checkpoint_due = True
        self._close_unused_locked()

    def _follow_stored_settings(self) -> bool:
        """Take the index's stored settings unless an update through the same object is under way (then later)."""
        lock = _update_lock(self.index)
        if not lock.acquire(blocking=False):
            return False  # the update builds with its own settings and commits them: followed once it is done
        try:
            self._settings_due = False
            return self.index.follow_stored_settings()
        finally:
            lock.release()

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
