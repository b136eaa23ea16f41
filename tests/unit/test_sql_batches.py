"""IN (...) lists of any length stay under SQLite's limit on bound variables (999 on older SQLite)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from grepgraph.retrievers.core.sql import batched
from grepgraph.retrievers.query.scope import chunk_ids_in
from grepgraph.retrievers.rank.evidence import mention_matches, name_coverage
from grepgraph.retrievers.store.snapshot import open_snapshot

from tests.conftest import lexical_searcher

needs_setlimit = pytest.mark.skipif(not hasattr(sqlite3.Connection, "setlimit"), reason="Python 3.11+")
OLD_LIMIT = 999  # SQLite before 3.32


def test_batches_and_their_placeholders():
    assert list(batched(range(5), size=2)) == [([0, 1], "?,?"), ([2, 3], "?,?"), ([4], "?")]
    assert list(batched([])) == []


@needs_setlimit
def test_a_scope_of_more_paths_than_sqlite_binds_at_once():
    connection = sqlite3.connect(":memory:")
    connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, OLD_LIMIT)
    connection.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, path TEXT)")
    connection.executemany("INSERT INTO chunks (path) VALUES (?)", [(f"f{n}.py",) for n in range(3_000)])
    assert chunk_ids_in(connection, [f"f{n}.py" for n in range(0, 3_000, 2)]).tolist() == list(range(1, 3_001, 2))


@needs_setlimit
def test_a_query_that_names_more_files_than_sqlite_binds_at_once(tmp_path: Path):
    files = {f"pkg/mod_{n}.py": f"def handler_{n}():\n    return {n}\n" for n in range(OLD_LIMIT + 100)}
    with lexical_searcher(tmp_path, files) as searcher:
        snapshot = open_snapshot(searcher.index)
        try:
            snapshot.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, OLD_LIMIT)
            query = "Traceback: " + " ".join(files)
            matched, frames = mention_matches(snapshot, query)
            paths = {path for (path,) in snapshot.connection.execute("SELECT path FROM chunks")}
            assert paths == set(files)
            assert len(matched) == len(list(snapshot.connection.execute("SELECT id FROM chunks")))
            assert not frames  # no traceback frame names a handler
            names = name_coverage(snapshot, ["handler"], set(matched))
            assert len(names) == len(files)  # each handler_<n> uses the word
        finally:
            snapshot.close()
