"""The SQLite connections that read one index generation: one per thread reading it at the same time.

A sqlite3 connection must not serve two threads at once, so searches side by side on one snapshot
each borrow a connection of their own. The snapshot's first connection is the one whose read
transaction its generation was read in; a thread that finds none idle opens another, which is kept
only if its own read transaction sees the same generation. Every change to the rows a search reads
(chunks, files, edges, texts) commits a new generation, so the same generation name means the same
rows. Once a newer commit makes that impossible, threads wait for an idle connection instead, until
their deadline.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.deadline import NO_DEADLINE, Deadline

# Idle connections kept (the first one always): enough for a server's searches side by side; others are closed.
IDLE_KEPT = 4


def committed_generation(connection: sqlite3.Connection) -> str:
    """The BM25 generation the connection's view of the index points at (empty: none yet)."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'bm25_generation'").fetchone()
    return row[0] if row else ""


@dataclass(eq=False)
class Reader:
    """One connection on a generation, and what callers computed over it (used by one thread at a time)."""

    connection: sqlite3.Connection
    cache: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        """End the read transaction and close the connection."""
        with suppress(sqlite3.Error):
            self.connection.rollback()
        self.connection.close()


class GenerationReaders:
    """The connections reading one generation; a thread borrows one for as long as it reads."""

    def __init__(self, db_path: Path, generation: str, first: sqlite3.Connection) -> None:
        """Start with ``first``, whose read transaction (already begun) sees ``generation`` of ``db_path``."""
        self.db_path = db_path
        self.generation = generation
        self.first = Reader(first)
        self._idle: list[Reader] = [self.first]
        self._open = 1
        self._can_grow = True  # until a new connection saw a newer generation
        self._closed = False
        # Guards the lists above; waited on (released meanwhile) for a connection to come back.
        self._returned = threading.Condition(threading.Lock())
        self._local = threading.local()

    @property
    def borrowed(self) -> int:
        """Connections lent out now."""
        with self._returned:
            return self._open - len(self._idle) if not self._closed else 0

    def current(self) -> Reader | None:
        """The reader this thread borrowed (``None``: none)."""
        return getattr(self._local, "held", None)

    @contextmanager
    def borrow(self, deadline: Deadline = NO_DEADLINE) -> Iterator[Reader]:
        """A reader for this thread until the block ends; a nested borrow on the same thread gets the same one.

        Raises:
            SearchDeadlineExceeded: ``deadline`` passed while every connection was in use.
        """
        held = self.current()
        if held is not None:
            yield held
            return
        reader = self._take(deadline)
        self._local.held = reader
        try:
            yield reader
        finally:
            self._local.held = None
            self._give_back(reader)

    def close(self) -> None:
        """Close the idle connections now and the borrowed ones when they come back (idempotent)."""
        with self._returned:
            self._closed = True
            idle, self._idle = self._idle, []
            self._returned.notify_all()
        for reader in idle:
            reader.close()

    def _take(self, deadline: Deadline) -> Reader:
        while True:
            with self._returned:
                while True:
                    if self._closed:
                        raise RuntimeError(f"the snapshot of generation {self.generation} was closed")
                    if self._idle:
                        return self._idle.pop()
                    if self._can_grow:
                        self._open += 1
                        break
                    deadline.check("waiting for a database connection")
                    self._returned.wait(deadline.left())
            reader = self._join()  # opened outside the lock: other threads give back and take meanwhile
            if reader is not None:
                return reader
            with self._returned:
                self._open -= 1
                self._can_grow = False

    def _join(self) -> Reader | None:
        """A new connection whose read transaction sees this generation (``None``: it sees another)."""
        try:
            # mode=rw: a deleted index is not created again by a reader.
            connection = sqlite3.connect(f"{self.db_path.as_uri()}?mode=rw", uri=True, timeout=30,
                                         check_same_thread=False)
        except sqlite3.Error:
            return None
        reader = Reader(connection)
        try:
            connection.execute("BEGIN")
            if committed_generation(connection) == self.generation:
                return reader
        except sqlite3.Error:
            pass
        reader.close()
        return None

    def _give_back(self, reader: Reader) -> None:
        with self._returned:
            keep = not self._closed and (reader is self.first or len(self._idle) < IDLE_KEPT)
            if keep:
                self._idle.append(reader)
            else:
                self._open -= 1
            self._returned.notify()
        if not keep:
            reader.close()
