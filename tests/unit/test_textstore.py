"""The text store on a real SQLite database: writes, removals and trigram candidates."""

from __future__ import annotations

import sqlite3

import pytest
from grepgraph.retrievers.store.textstore import (
    MAX_QUERY_TRIGRAMS,
    TEXT_SCHEMA,
    TextStore,
    clear_texts,
    remove_texts,
    replace_texts,
    stored_bytes,
    trigrams,
)


@pytest.fixture
def connection():
    connection = sqlite3.connect(":memory:")
    connection.executescript(TEXT_SCHEMA)
    replace_texts(connection, [("a.py", stored_bytes("def alpha():\n    return 'needle here'\n")),
                               ("b.py", stored_bytes("def beta():\n    return 'haystack'\n")),
                               ("c.txt", stored_bytes("caf\u00e9 needle\n"))])
    yield connection
    connection.close()


def paths_of(store: TextStore, *literals: str) -> set[str]:
    ids = store.candidate_ids(list(literals))
    return {path for path, _ in store.iter_texts(ids)}


def test_candidates_hold_every_trigram_and_are_case_sensitive(connection):
    store = TextStore(connection)
    assert paths_of(store, "needle") == {"a.py", "c.txt"}
    assert paths_of(store, "needle", "return") == {"a.py"}
    assert paths_of(store, "Needle") == set()
    assert paths_of(store, "caf\u00e9") == {"c.txt"}
    assert store.candidate_ids(["ab"]) is None  # too short to narrow by: the caller scans everything


def test_replacing_and_removing_keep_the_trigram_index_in_step(connection):
    store = TextStore(connection)
    replace_texts(connection, [("a.py", stored_bytes("def alpha():\n    return 1\n"))])
    assert paths_of(store, "needle") == {"c.txt"}
    remove_texts(connection, ["c.txt", "missing.py"])
    assert paths_of(store, "needle") == set() and store.text_of("c.txt") is None
    connection.execute("INSERT INTO texts_fts (texts_fts) VALUES ('integrity-check')")
    clear_texts(connection)
    assert not store.has_texts() and paths_of(store, "def") == set()


def test_only_the_paths_asked_for_are_read(connection):
    store = TextStore(connection)
    assert [path for path, _ in store.iter_texts(None, ["b.py"])] == ["b.py"]
    assert store.text_of("b.py").startswith(b"def beta")


def test_long_literals_are_narrowed_by_a_sample_of_their_trigrams():
    grams = trigrams(["abcdefghijklmnopqrstuvwxyz" * 3])
    assert len(grams) <= MAX_QUERY_TRIGRAMS and grams[0] == "abc"
    assert trigrams(["ab", "xyz", "xyz"]) == ["xyz"]
