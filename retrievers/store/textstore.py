"""The text store: every indexed file's contents in SQLite, with a trigram index to find candidates fast.

Literal, regex and exact-line search read files from here, never from the working tree, so
they see what the index saw. Two tables:

    texts       (id, path, data)  the file as UTF-8 bytes (decoded like the parser does, re-encoded),
                                  so matching runs on bytes: no decoding, and RE2 needs none
    texts_fts   a contentless FTS5 table, trigram tokenizer, case-sensitive, ``detail=none``

A query is turned into the trigrams its matches must contain; ``texts_fts`` returns the files
holding all of them (a superset: trigram order is not checked), and the caller verifies each
candidate with the real matcher. Measured on the CPython standard library (1,996 files, 32 MB):
the trigram table adds 7.5 MB and answers in 0.2-2 ms; fetching and verifying candidates takes
1-35 ms, against 10-30 ms for scanning every text in memory and 35-80 ms for reading every text
from SQLite. ``detail=full`` (exact phrase candidates) was no faster end to end and 8x larger.

A contentless table can only forget a row given the exact text it indexed, so rows are removed
through :func:`remove_texts`, which reads the stored bytes back first.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence

TEXT_SCHEMA = """
CREATE TABLE IF NOT EXISTS texts (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL UNIQUE,
                                  data BLOB NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS texts_fts USING fts5(
    text, content='', tokenize='trigram case_sensitive 1', detail='none');
"""
TRIGRAM = 3
# A search that needs more texts than this reads them all once into memory (if they fit the budget)
# and keeps them until the index changes: SQLite reads cost 20-70 ms for the 32 MB standard library.
CACHE_AFTER_TEXTS = 200
CACHE_MAX_BYTES = 256_000_000
# A long literal has hundreds of trigrams; a spread-out sample of them narrows the candidates as well.
MAX_QUERY_TRIGRAMS = 32
SQL_BATCH = 500


def stored_bytes(source: str) -> bytes:
    """What the store keeps for a file's decoded text (valid UTF-8, so FTS sees the same characters)."""
    return source.encode("utf-8", "replace")


def replace_texts(connection: sqlite3.Connection, files: Iterable[tuple[str, bytes]]) -> None:
    """Store ``(path, stored_bytes)`` pairs, replacing older versions of the same paths.

    Runs inside the caller's transaction (the index commits chunks and texts together).
    """
    files = list(files)
    remove_texts(connection, [path for path, _ in files])
    for path, data in files:
        cursor = connection.execute("INSERT INTO texts (path, data) VALUES (?, ?)", (path, data))
        connection.execute("INSERT INTO texts_fts (rowid, text) VALUES (?, ?)",
                           (cursor.lastrowid, data.decode("utf-8")))


def remove_texts(connection: sqlite3.Connection, paths: Sequence[str]) -> None:
    """Forget the texts of ``paths`` (the trigram rows first: they are deleted by their indexed text)."""
    for start in range(0, len(paths), SQL_BATCH):
        batch = list(paths[start : start + SQL_BATCH])
        marks = ",".join("?" * len(batch))
        rows = connection.execute(f"SELECT id, data FROM texts WHERE path IN ({marks})", batch).fetchall()  # noqa: S608
        connection.executemany("INSERT INTO texts_fts (texts_fts, rowid, text) VALUES ('delete', ?, ?)",
                               [(row_id, data.decode("utf-8")) for row_id, data in rows])
        connection.execute(f"DELETE FROM texts WHERE path IN ({marks})", batch)  # noqa: S608


def clear_texts(connection: sqlite3.Connection) -> None:
    """Forget every text (a rebuild)."""
    connection.execute("DELETE FROM texts")
    connection.execute("INSERT INTO texts_fts (texts_fts) VALUES ('delete-all')")


def trigrams(literals: Iterable[str], most: int = MAX_QUERY_TRIGRAMS) -> list[str]:
    """The distinct trigrams of the literals, at most ``most`` of them spread evenly (short literals have none)."""
    found: dict[str, None] = {}
    for literal in literals:
        for start in range(len(literal) - TRIGRAM + 1):
            found.setdefault(literal[start : start + TRIGRAM])
    grams = list(found)
    if len(grams) > most:
        step = len(grams) / most
        grams = [grams[int(i * step)] for i in range(most)]
    return grams


def fts_query(grams: Sequence[str]) -> str:
    """An FTS5 query requiring every trigram (each quoted, so punctuation and keywords are literal)."""
    return " AND ".join('"' + gram.replace('"', '""') + '"' for gram in grams)


class TextCache:
    """Every stored text in memory, ``{id: (path, data)}``, loaded on first need; one per index generation."""

    def __init__(self) -> None:
        self.texts: dict[int, tuple[str, bytes]] | None = None
        self.too_big = False

    def load(self, connection: sqlite3.Connection) -> dict[int, tuple[str, bytes]] | None:
        """The texts (``None`` when they exceed ``CACHE_MAX_BYTES``: callers read SQLite instead)."""
        if self.texts is None and not self.too_big:
            total = connection.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM texts").fetchone()[0]
            if total > CACHE_MAX_BYTES:
                self.too_big = True
            else:
                self.texts = {row_id: (path, data) for row_id, path, data in connection.execute(
                    "SELECT id, path, data FROM texts ORDER BY id")}
        return self.texts


class TextStore:
    """Read access to the stored texts over an open connection (the caller serialises its use)."""

    def __init__(self, connection: sqlite3.Connection, cache: TextCache | None = None) -> None:
        """Wrap ``connection``, an index database with the text tables (``cache``: keep texts in memory)."""
        self.connection = connection
        self.cache = cache

    def candidate_ids(self, literals: Sequence[str], most: int = MAX_QUERY_TRIGRAMS) -> list[int] | None:
        """Ids of the texts that contain every trigram of ``literals`` (``most`` of them at most).

        ``None``: no trigram to narrow by.
        """
        grams = trigrams(literals, most)
        if not grams:
            return None
        return [row[0] for row in self.connection.execute(
            "SELECT rowid FROM texts_fts WHERE texts_fts MATCH ? ORDER BY rowid", (fts_query(grams),))]

    def iter_texts(self, ids: Sequence[int] | None = None,
                   paths: Sequence[str] | None = None) -> Iterator[tuple[str, bytes]]:
        """``(path, data)`` of the given ids (all texts when ``None``), optionally only among ``paths``."""
        wanted = set(paths) if paths is not None else None
        cached = self._cached(ids)
        if cached is not None:
            for row_id in sorted(cached) if ids is None else ids:
                path, data = cached[row_id]
                if wanted is None or path in wanted:
                    yield path, data
            return
        if ids is None:
            rows: Iterable[tuple[str, bytes]] = self.connection.execute("SELECT path, data FROM texts ORDER BY id")
            for path, data in rows:
                if wanted is None or path in wanted:
                    yield path, data
            return
        for start in range(0, len(ids), SQL_BATCH):
            batch = list(ids[start : start + SQL_BATCH])
            marks = ",".join("?" * len(batch))
            for path, data in self.connection.execute(
                    f"SELECT path, data FROM texts WHERE id IN ({marks}) ORDER BY id", batch):  # noqa: S608
                if wanted is None or path in wanted:
                    yield path, data

    def _cached(self, ids: Sequence[int] | None) -> dict[int, tuple[str, bytes]] | None:
        """The in-memory texts, loading them when this read is large enough to pay for it."""
        if self.cache is None:
            return None
        if self.cache.texts is None and (ids is None or len(ids) > CACHE_AFTER_TEXTS):
            self.cache.load(self.connection)
        return self.cache.texts

    def has_texts(self) -> bool:
        """Whether any text is stored (an index built before the store existed has none)."""
        return self.connection.execute("SELECT 1 FROM texts LIMIT 1").fetchone() is not None

    def text_of(self, path: str) -> bytes | None:
        """The stored bytes of one file (``None`` if it is not indexed)."""
        row = self.connection.execute("SELECT data FROM texts WHERE path = ?", (path,)).fetchone()
        return row[0] if row else None
