"""The connections of one snapshot: a thread each, only ones that see its generation, a bounded wait otherwise."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from grepgraph.retrievers.core.deadline import Deadline, SearchDeadlineExceeded
from grepgraph.retrievers.store.readers import GenerationReaders, committed_generation


def commit_generation(db_path, name: str) -> None:
    with sqlite3.connect(db_path) as connection:
        connection.execute("INSERT OR REPLACE INTO meta VALUES ('bm25_generation', ?)", (name,))


@pytest.fixture
def readers(tmp_path):
    db_path = tmp_path / "index.sqlite"
    with sqlite3.connect(db_path) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    commit_generation(db_path, "g1")
    first = sqlite3.connect(db_path, check_same_thread=False)
    first.execute("BEGIN")
    assert committed_generation(first) == "g1"
    readers = GenerationReaders(db_path, "g1", first)
    yield readers
    readers.close()


def borrow_on_another_thread(readers: GenerationReaders, deadline: Deadline = Deadline()) -> object:
    """What a borrow on a new thread gets: the connection, or the exception it raised."""
    got: list = []

    def borrow() -> None:
        try:
            with readers.borrow(deadline) as reader:
                got.append(reader.connection)
        except Exception as error:  # noqa: BLE001 - the caller looks at it
            got.append(error)

    thread = threading.Thread(target=borrow)
    thread.start()
    thread.join()
    return got[0]


def test_threads_side_by_side_read_the_same_generation_through_their_own_connections(readers):
    with readers.borrow() as mine:
        assert mine is readers.first
        with readers.borrow() as nested:
            assert nested is mine
        other = borrow_on_another_thread(readers)
        assert isinstance(other, sqlite3.Connection) and other is not mine.connection
        assert committed_generation(other) == "g1"
        assert readers.borrowed == 1
    assert readers.borrowed == 0


def test_after_a_newer_commit_no_connection_joins_and_a_waiting_borrow_stops_at_its_deadline(readers):
    commit_generation(readers.db_path, "g2")
    with readers.borrow():
        stopped = borrow_on_another_thread(readers, Deadline(at=0.0))
        assert isinstance(stopped, SearchDeadlineExceeded)
        assert readers.borrowed == 1
    # Given back, the first connection (still on g1) serves the next thread.
    again = borrow_on_another_thread(readers)
    assert again is readers.first.connection and committed_generation(again) == "g1"
