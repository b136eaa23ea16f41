"""The index's SQLite store: its schema, how it is opened, and the fingerprint of the settings it was built with."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..core.index_settings import IndexSettings
from .textstore import TEXT_SCHEMA
from .trust import own_index_dir

INDEX_FORMAT = 11  # 11: a Python docstring reaches the indexes once, through the card (as a doc comment does)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    language TEXT NOT NULL, chunks INTEGER NOT NULL, error TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, language TEXT NOT NULL,
    kind TEXT NOT NULL, symbol TEXT NOT NULL, name TEXT NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, signature TEXT NOT NULL, docstring TEXT NOT NULL,
    parent TEXT NOT NULL, is_test INTEGER NOT NULL, text TEXT NOT NULL, tokens TEXT NOT NULL,
    card TEXT NOT NULL, card_key TEXT NOT NULL, code_key TEXT NOT NULL, part INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_name ON chunks(name COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS chunks_symbol ON chunks(symbol COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS chunks_card_key ON chunks(card_key);
CREATE INDEX IF NOT EXISTS chunks_code_key ON chunks(code_key);
CREATE TABLE IF NOT EXISTS edges (
    path TEXT NOT NULL, source TEXT NOT NULL, target TEXT NOT NULL, kind TEXT NOT NULL,
    line INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS edges_path ON edges(path);
CREATE INDEX IF NOT EXISTS edges_target ON edges(target COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS edges_source ON edges(source COLLATE NOCASE);
CREATE TABLE IF NOT EXISTS vectors (key TEXT NOT NULL, view TEXT NOT NULL, PRIMARY KEY (key, view));
"""


WAL_SIZE_LIMIT = 4 << 20


def open_store(db_path: Path) -> sqlite3.Connection:
    """A new SQLite connection to the store, its tables created if missing (WAL, so readers never block the indexer)."""
    own_index_dir(db_path.parent)
    connection = sqlite3.connect(db_path, timeout=30, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    # When the log restarts, its file shrinks back to this size instead of keeping its largest.
    connection.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
    connection.executescript(SCHEMA + TEXT_SCHEMA)
    return connection


def fingerprint(settings: IndexSettings) -> dict:
    """What must match between the index on disk and this run (else the index is rebuilt)."""
    return {"format": INDEX_FORMAT, **settings.rebuild_key()}


def stored_form(settings: IndexSettings) -> dict:
    """The settings as the index keeps them: the fingerprint and the vector settings."""
    return {**fingerprint(settings), **settings.to_dict()}


def same_fingerprint(stored: dict, settings: IndexSettings) -> bool:
    """Whether an index stored with ``stored`` settings can be updated with ``settings`` without a rebuild."""
    return {key: stored.get(key) for key in fingerprint(settings)} == fingerprint(settings)
