"""The indexer lock: one indexing run at a time per index, the holder's PID in the lock file."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.errors import IndexBusy


@contextmanager
def indexer_lock(path: Path, repo: Path, wait: bool = False) -> Iterator[None]:
    """Hold the lock file ``path`` of ``repo``'s index; raise :class:`IndexBusy` (or wait) if another run holds it."""
    # "a", not "w": a refused second indexer must not erase the holder's PID.
    handle = open(path, "a")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise IndexBusy(
                f"another grepgraph indexer is running on {repo} (lock {path}); wait for it to finish"
            ) from None
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()
