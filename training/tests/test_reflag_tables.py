"""The query flag recomputed from the tables' own query texts, every other value copied as it was."""

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reflag_tables import flag_reader, reflag  # noqa: E402


def write_table(path: Path, queries: list[str], rows_per_query: int = 2) -> None:
    """A table of two columns, ``bm25`` and ``multiline`` (as the search set it: one line each)."""
    query = np.repeat(np.arange(len(queries)), rows_per_query)
    columns = np.stack([np.linspace(0.0, 1.0, len(query)), np.zeros(len(query))], axis=1).astype(np.float32)
    np.savez_compressed(path, columns=columns, column_names=np.array(["bm25", "multiline"]), query=query,
                        queries_json=json.dumps([{"query": text} for text in queries]))


def test_a_flag_is_recomputed_per_query_and_nothing_else_changes(tmp_path):
    """More than three words, then more than one line: each query's rows take its flag; bm25 is untouched."""
    source, target = tmp_path / "source", tmp_path / "target"
    source.mkdir()
    write_table(source / "a.npz", ["one line", "two\nlines", "a b c d e"])
    tables, rows, changed = reflag(source, target, flag_reader("words:3"))
    assert (tables, rows, changed) == (1, 6, 2)
    with np.load(target / "a.npz") as copy, np.load(source / "a.npz") as original:
        assert copy["columns"][:, 1].tolist() == [0, 0, 0, 0, 1, 1]
        assert copy["columns"][:, 0].tolist() == original["columns"][:, 0].tolist()
    reflag(source, tmp_path / "lines", flag_reader("lines"))
    with np.load(tmp_path / "lines" / "a.npz") as copy:
        assert copy["columns"][:, 1].tolist() == [0, 0, 1, 1, 0, 0]


def test_a_table_without_the_flag_is_left_out(tmp_path):
    """A table made before the flag existed has nothing to recompute."""
    np.savez_compressed(tmp_path / "old.npz", columns=np.zeros((1, 1)), column_names=np.array(["long"]),
                        query=np.zeros(1, dtype=int), queries_json=json.dumps([{"query": "q"}]))
    assert reflag(tmp_path, tmp_path / "out", flag_reader("lines")) == (0, 0, 0)
