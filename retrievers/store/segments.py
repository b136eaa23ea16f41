"""BM25 segments of a generation: ``main`` plus a small ``delta`` of recent chunks, written once, never modified.

A one-file change rebuilds only the delta; the new generation hard-links the previous ``main``.
Leasing and deleting generations is :mod:`retrievers.store.generations`' job.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import numpy as np

from ..lexical.bm25 import LexicalIndex, build_lexical_index, load_lexical_index, save_lexical_index
from .generations import MANIFEST

# Rebuild the main BM25 segment once the delta grows past this share of it.
DELTA_COMPACT_RATIO = 0.10


def build_generation(connection: sqlite3.Connection, bm25_dir: Path, generation: str, full: bool,
                     backend: str) -> None:
    """Write BM25 segments for ``generation``: reuse ``main`` when only a small delta changed."""
    target = bm25_dir / generation
    previous = connection.execute("SELECT value FROM meta WHERE key = 'bm25_generation'").fetchone()
    main_max_id = None
    if previous and not full:
        manifest_path = bm25_dir / previous[0] / MANIFEST
        if manifest_path.is_file():
            main_max_id = json.loads(manifest_path.read_text())["main_max_id"]
    if main_max_id is not None:
        main_count = connection.execute("SELECT COUNT(*) FROM chunks WHERE id <= ?", (main_max_id,)).fetchone()[0]
        delta_count = connection.execute("SELECT COUNT(*) FROM chunks WHERE id > ?", (main_max_id,)).fetchone()[0]
        if delta_count > DELTA_COMPACT_RATIO * max(main_count, 1):
            main_max_id = None
    target.mkdir(parents=True, exist_ok=True)
    if main_max_id is None:
        main_max_id = connection.execute("SELECT COALESCE(MAX(id), 0) FROM chunks").fetchone()[0]
        write_segment(connection, target / "main", "id <= ?", main_max_id, backend)
    else:
        # Segment files are never modified in place, so the new generation can share them.
        shutil.copytree(bm25_dir / previous[0] / "main", target / "main", copy_function=os.link)
    write_segment(connection, target / "delta", "id > ?", main_max_id, backend)
    (target / MANIFEST).write_text(json.dumps({"main_max_id": main_max_id}))


def write_segment(connection: sqlite3.Connection, directory: Path, condition: str, bound: int, backend: str) -> None:
    """Write the BM25 index and chunk ids of the chunks ``condition`` (with ``bound``) selects."""
    ids, documents = [], []
    for chunk_id, tokens in connection.execute(
        f"SELECT id, tokens FROM chunks WHERE {condition} ORDER BY id", (bound,)  # noqa: S608
    ):
        ids.append(chunk_id)
        documents.append(tokens.split())
    directory.mkdir(parents=True, exist_ok=True)
    if documents:
        save_lexical_index(build_lexical_index(backend, documents), directory / "bm25")
    np.save(directory / "ids.npy", np.asarray(ids, dtype=np.int64))


def load_segments(generation_dir: Path) -> list[tuple[np.ndarray, LexicalIndex]]:
    """The ``(chunk ids, BM25 index)`` pairs of a generation; empty segments are left out."""
    segments = []
    for name in ("main", "delta"):
        directory = generation_dir / name
        ids = np.load(directory / "ids.npy")
        if ids.size:
            segments.append((ids, load_lexical_index(directory / "bm25")))
    return segments
