"""One indexing run's changes committed at once: chunk, edge, file and text rows, and a new BM25 generation.

The BM25 build writes only new files; one SQLite transaction then switches the tables and the
generation together, so a run killed before the commit leaves the previous index untouched (the
crash-safety order :mod:`retrievers.store.index` describes).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

from .. import __version__
from ..core.index_settings import IndexSettings
from ..core.model import ProgressCallback
from ..parse.parallel import decode_source
from .database import stored_form
from .rows import documented_types, table_rows
from .segments import build_generation
from .textstore import clear_texts, remove_texts, replace_texts, stored_bytes

STALE_BATCH = 500  # paths per ``DELETE ... IN``


def commit_changes(connection: sqlite3.Connection, index_dir: Path, repo: Path, settings: IndexSettings,
                   model_ids: tuple[str, str], parsed: list, removed: list[str], touched: list[tuple[str, int, int]],
                   rebuild: bool, progress: ProgressCallback) -> tuple[str, int]:
    """Write the rows of ``parsed`` files, drop ``removed`` ones and build a BM25 generation, in one transaction.

    Args:
        connection: The index's connection (no transaction open).
        index_dir: The index folder (BM25 generations go under ``bm25/``).
        repo: The repository, recorded in the meta table.
        settings: The run's settings (recorded; ``bm25_backend`` builds the generation).
        model_ids: The models named in the card and code views' vector keys.
        parsed: ``(changed file, parse result)`` pairs.
        removed: Paths no longer in the repository.
        touched: ``(path, size, mtime_ns)`` of files whose content did not change.
        rebuild: Replace every row instead of the changed files' only.
        progress: Told of the BM25 build.

    Returns:
        The new generation's name and the number of chunk rows written. The previous generations
        stay on disk: a reader may still lease one.
    """
    card_model, code_model = model_ids
    summaries = documented_types(connection, parsed, removed, rebuild)
    rows, edge_rows, file_rows = table_rows(parsed, summaries, card_model, code_model)
    generation = f"{time.time_ns():x}"
    old_generation = connection.execute("SELECT value FROM meta WHERE key = 'bm25_generation'").fetchone()
    connection.execute("BEGIN IMMEDIATE")
    try:
        if rebuild:
            for table in ("files", "chunks", "edges"):
                connection.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
            clear_texts(connection)
        stale = [path for path in removed] + [item[0].path for item, *_ in parsed]
        # The text store (literal, regex and exact-line search) changes with the chunks.
        remove_texts(connection, removed)
        replace_texts(connection, ((source.path, stored_bytes(decode_source(data)))
                                   for (source, data, *_), *_ in parsed))
        for start in range(0, len(stale), STALE_BATCH):
            batch = stale[start : start + STALE_BATCH]
            marks = ",".join("?" * len(batch))
            for table in ("files", "chunks", "edges"):
                connection.execute(f"DELETE FROM {table} WHERE path IN ({marks})", batch)  # noqa: S608
        connection.executemany(
            "INSERT INTO chunks (path, language, kind, symbol, name, start_line, end_line, signature,"
            " docstring, parent, is_test, text, tokens, card, card_key, code_key, part)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        connection.executemany("INSERT INTO edges VALUES (?, ?, ?, ?, ?)", edge_rows)
        connection.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)", file_rows)
        connection.executemany("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
                               [(size, mtime, path) for path, size, mtime in touched])
        progress("bm25", 0, 1)
        build_generation(connection, index_dir / "bm25", generation, rebuild or not old_generation,
                         settings.bm25_backend)
        progress("bm25", 1, 1)
        for key, value in (
            ("bm25_generation", generation),
            ("settings", json.dumps(stored_form(settings))),
            ("versions", json.dumps({"grepgraph": __version__, "embedding": card_model,
                                     "embedding_code": code_model})),
            ("repo", str(repo)),
            ("updated_at", str(time.time())),
        ):
            connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        shutil.rmtree(index_dir / "bm25" / generation, ignore_errors=True)
        raise
    return generation, len(rows)
