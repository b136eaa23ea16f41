"""Keep an index in step with the working tree: follow file changes and re-index what changed.

One thread follows the repository (``watchfiles``: inotify on Linux) and collects changes, debounced;
another re-indexes. A re-index is :meth:`CodeIndex.update` in two steps: first the lexical index
(only changed files are parsed; a new function is searchable as soon as that commits, well under a
second for an edit), then the vectors. New changes interrupt the vector step between batches: the
vectors stored so far are kept (they are content-addressed) and the rest follow the next lexical
step. A branch switch is one burst of changes, so it is one re-index of the files it changed.

The resident service's searchers read through the watcher's :class:`CodeIndex` (so they see the vectors
it stores in the Chroma client that stored them). An update switches that object's settings to the ones
it builds with before it commits them, so it runs inside :func:`retrievers.store.live.updating`: the
searchers meanwhile read on with their snapshots and follow the stored settings once it is done.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from grepgraph.retrievers.core.errors import IndexBusy, IndexError_
from grepgraph.retrievers.core.memory import return_freed_memory
from grepgraph.retrievers.store.index import CodeIndex
from grepgraph.retrievers.store.live import updating

log = logging.getLogger(__name__)

# Another indexer (``grepgraph index``) holds the lock: try again after this long.
BUSY_RETRY_S = 0.5
# watchfiles checks for a stop request this often (ms).
STOP_CHECK_MS = 200


class _NewChanges(Exception):
    """Files changed again while vectors were being embedded: index those first."""


@dataclass
class WatchState:
    """What the watcher has done, for ``grepgraph status``."""

    watching: bool = False
    updates: int = 0
    last_update_at: float = 0.0
    last_update_s: float = 0.0
    last_files_changed: int = 0
    vectors_pending: int = 0
    embedding: bool = False
    last_error: str = ""

    def to_dict(self) -> dict:  # noqa: D102
        return dict(self.__dict__)


class IndexWatcher:
    """Follows one repository and keeps its index current (start it with :meth:`start`)."""

    def __init__(self, index: CodeIndex, debounce_ms: int = 200) -> None:
        """Watch ``index.repo`` and update ``index`` (changes within ``debounce_ms`` are indexed together)."""
        self.index = index
        self.debounce_ms = debounce_ms
        self.state = WatchState()
        self._changes: queue.SimpleQueue[set] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # ---------------------------------------------------------------- life cycle
    def start(self) -> None:
        """Catch up with changes made while nobody watched, then follow new ones (background threads)."""
        self.state.watching = True
        for target, name in ((self._follow, "grepgraph-watch"), (self._reindex_loop, "grepgraph-reindex")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop following and re-indexing (a re-index under way is interrupted between vector batches)."""
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout_s)
        self.state.watching = False

    def catch_up(self) -> None:
        """Look for changes and pending vectors now (another process indexed: its vectors may be pending)."""
        self._wake.set()

    # ---------------------------------------------------------------- following
    def _follow(self) -> None:
        import watchfiles

        ignored = str(self.index.index_dir)

        class RepositoryFilter(watchfiles.DefaultFilter):
            def __call__(self, change: watchfiles.Change, path: str) -> bool:
                return not path.startswith(ignored) and super().__call__(change, path)

        caught_up = False
        try:
            for changes in watchfiles.watch(self.index.repo, watch_filter=RepositoryFilter(),
                                            debounce=self.debounce_ms, step=50, stop_event=self._stop,
                                            rust_timeout=STOP_CHECK_MS, yield_on_timeout=True,
                                            raise_interrupt=False):
                if changes or not caught_up:
                    # The first pass (files changed since the last index, vectors left pending) waits until
                    # the watcher runs, so nothing changed between that scan and the first event is missed.
                    caught_up = True
                    log.debug("%d changes in %s", len(changes), self.index.repo)
                    self._changes.put(changes)
                    self._wake.set()
        except Exception as error:  # the repository vanished, inotify limits reached
            log.warning("stopped following %s: %s", self.index.repo, error)
            self.state.last_error = f"not following changes: {error}"
            self.state.watching = False

    # ---------------------------------------------------------------- re-indexing
    def _reindex_loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            if self._stop.is_set():
                return
            self._wake.clear()
            self._drain()
            try:
                self._reindex()
            except Exception as error:  # an index error must not end the watcher
                log.exception("re-index of %s failed", self.index.repo)
                self.state.last_error = str(error)
            return_freed_memory()  # this process lives on: the memory the run freed goes back to the system

    def _drain(self) -> int:
        count = 0
        while True:
            try:
                count += len(self._changes.get_nowait())
            except queue.Empty:
                return count

    def _reindex(self) -> None:
        started = time.perf_counter()
        summary = self._locked_update(embed=False)
        if summary is None:
            return
        self.state.updates += 1
        self.state.last_update_at = time.time()
        self.state.last_update_s = round(time.perf_counter() - started, 3)
        self.state.last_files_changed = summary.files_changed + summary.files_removed
        self.state.vectors_pending = summary.vectors_pending
        self.state.last_error = ""
        if summary.files_changed or summary.files_removed:
            log.info("re-indexed %s: %d changed, %d removed in %.2f s", self.index.repo, summary.files_changed,
                     summary.files_removed, self.state.last_update_s)
        if summary.vectors_pending:
            self._embed_pending()

    def _embed_pending(self) -> None:
        def interrupt_on_change(phase: str, done: int, total: int) -> None:
            if self._wake.is_set() or self._stop.is_set():
                raise _NewChanges

        self.state.embedding = True
        try:
            summary = self._locked_update(embed=True, progress=interrupt_on_change)
        except _NewChanges:
            log.info("vectors of %s interrupted by new changes", self.index.repo)
            return
        finally:
            self.state.embedding = False
        if summary is not None:
            self.state.vectors_pending = summary.vectors_pending
            log.info("embedded %d vectors of %s", summary.vectors_embedded, self.index.repo)

    def _locked_update(self, embed: bool, progress=None):
        """``CodeIndex.update``, waiting while another indexer runs (``None``: stopped while waiting)."""
        while not self._stop.is_set():
            try:
                with updating(self.index):
                    return self.index.update(embed=embed, progress=progress)
            except IndexBusy:
                self._stop.wait(BUSY_RETRY_S)
            except IndexError_ as error:
                self.state.last_error = str(error)
                log.warning("%s", error)
                return None
        return None


def watched_repository(repo: Path | str, index_dir: Path | str | None = None, debounce_ms: int = 200) -> IndexWatcher:
    """A watcher of ``repo`` updating its index (not started)."""
    return IndexWatcher(CodeIndex(repo, index_dir), debounce_ms)
