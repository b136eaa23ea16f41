"""BM25 generations on disk: a reader leases the one it uses, the indexer deletes only unleased ones.

Each commit of the index names one generation directory under ``bm25/``. A reader (``serve``, MCP,
a CLI search: other processes than the indexer) may be between reading that name and loading the
files when an indexer commits the next generation. So a reader holds a shared ``flock`` on the
generation's lease file while it uses the generation, and the indexer deletes an old generation
only when it can lock that file exclusively; one still leased stays for a later run to delete.
A lock dies with its process, so a crashed reader never pins a generation.

Deleting removes the manifest first: a reader that was waiting for the lock finds it missing,
knows the generation is gone and reads the committed name again.
"""

from __future__ import annotations

import fcntl
import shutil
from pathlib import Path
from typing import IO

LEASE_FILE = "lease"
MANIFEST = "manifest.json"


class GenerationGone(RuntimeError):
    """The generation was deleted (an indexer replaced it) before the reader could lease it."""


class GenerationLease:
    """A shared lock on one generation directory: while held, no indexer deletes it."""

    def __init__(self, directory: Path) -> None:
        """Lease ``directory`` (waits only while an indexer is deleting it; then raises :class:`GenerationGone`)."""
        self.directory = directory
        self._handle: IO[str] | None = None
        try:
            handle = open(directory / LEASE_FILE, "a")
        except FileNotFoundError:
            raise GenerationGone(str(directory)) from None
        except OSError:
            # A read-only index (a mounted copy): no indexer can delete anything there either.
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_SH)
            if not (directory / MANIFEST).is_file():
                raise GenerationGone(str(directory))
        except BaseException:
            handle.close()
            raise
        self._handle = handle

    def release(self) -> None:
        """Let the indexer delete the generation (idempotent)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def remove_unleased_generations(root: Path, keep: str) -> list[str]:
    """Delete every generation under ``root`` but ``keep`` that no reader leases; the names still leased."""
    leased = []
    for child in sorted(root.iterdir()) if root.is_dir() else []:
        if child.name != keep and child.is_dir() and not _remove_if_unleased(child):
            leased.append(child.name)
    return leased


def _remove_if_unleased(directory: Path) -> bool:
    try:
        handle = open(directory / LEASE_FILE, "a")
    except OSError:
        shutil.rmtree(directory, ignore_errors=True)  # half deleted already
        return True
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        (directory / MANIFEST).unlink(missing_ok=True)
        shutil.rmtree(directory, ignore_errors=True)
    return True
