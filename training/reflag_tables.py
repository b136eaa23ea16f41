#!/usr/bin/env python3
"""Copy the features tables with the ``multiline`` query flag read another way, to compare definitions offline.

A table keeps each query's text, so a flag that depends on the query alone can be recomputed without searching
again (a remake of every table takes ~25 minutes; this, seconds). The search's own definition is ``lines``: more
than one non-blank line (:func:`retrievers.query.shape.is_multiline`). The others, for comparison:
``words:N`` (more than N words, the long-query flag the search had until 2026-11-30 at N = 60) and ``pieces:N``
(more than N word pieces of the code model's tokenizer: the query overflows the embedder's window at its 256).

    python training/reflag_tables.py training/data/features-code-minilm /tmp/words60 words:60
    python training/fit_blend.py ... --tables /tmp/words60 --out /tmp/words60.json
    python training/compare_blends.py SHIPPED.json training/data/features-code-minilm /tmp/words60.json /tmp/words60

Tables without the flag column (made before it existed) are left out of the copy.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

TRAINING = Path(__file__).resolve().parent
sys.path.insert(0, str(TRAINING.parent))

from grepgraph.retrievers.query.shape import is_multiline  # noqa: E402

FLAG = "multiline"


def flag_reader(definition: str) -> Callable[[str], bool]:
    """``lines``, ``words:N`` or ``pieces:N`` as a function of the query text."""
    kind, _, limit = definition.partition(":")
    if kind == "lines":
        return is_multiline
    if kind == "words":
        return lambda query: len(query.split()) > int(limit)
    if kind == "pieces":
        from grepgraph.retrievers.dense.minilm import minilm_files
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(minilm_files()[1]))
        tokenizer.no_truncation()
        # [CLS] and [SEP] are not the query's.
        return lambda query: len(tokenizer.encode(query).ids) - 2 > int(limit)
    raise ValueError(f"unknown definition {definition!r}: lines, words:N or pieces:N")


def reflag(source: Path, target: Path, flagged: Callable[[str], bool]) -> tuple[int, int, int]:
    """Write each table of ``source`` with its flag recomputed into ``target``: (tables, rows, rows changed)."""
    target.mkdir(parents=True, exist_ok=True)
    tables = rows = changed = 0
    for path in sorted(source.glob("*.npz")):
        with np.load(path, allow_pickle=False) as table:
            data = {key: table[key] for key in table.files}
        names = [str(name) for name in data["column_names"]]
        if FLAG not in names:
            continue
        queries = json.loads(str(data["queries_json"]))
        per_row = np.array([flagged(query["query"]) for query in queries], dtype=bool)[data["query"]]
        column = names.index(FLAG)
        changed += int((data["columns"][:, column] != per_row).sum())
        data["columns"] = data["columns"].copy()
        data["columns"][:, column] = per_row
        np.savez_compressed(target / path.name, **data)
        tables, rows = tables + 1, rows + len(per_row)
    return tables, rows, changed


def main() -> None:
    """Parse the arguments and copy the tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="a features directory")
    parser.add_argument("target", type=Path, help="where the copies go")
    parser.add_argument("definition", help="lines, words:N or pieces:N")
    args = parser.parse_args()
    tables, rows, changed = reflag(args.source, args.target, flag_reader(args.definition))
    sys.stdout.write(f"{args.definition}: {tables} tables, {changed:,} of {rows:,} candidate rows flagged otherwise\n")


if __name__ == "__main__":
    main()
