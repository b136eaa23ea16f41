#!/usr/bin/env python3
"""What the shipped ranking returns for every mined query: the pools a reranker learns to reorder.

For each table ``features.py`` made (a package's mined queries, its pasted ones, its failing tests, its
docstrings among kept doc comments, a history's commit messages), every query is searched again through
:meth:`Searcher.search` on the table's own index, and its first :data:`DEPTH` results are written with the texts a
reranker reads (the chunk's path, symbol and code), the ranking's score and both labels (the definition itself, and
the rulers' rule). One line a query in ``data/rerank/pools-<split>.jsonl``.

    GREPGRAPH_EMBEDDING_MODEL=code-minilm .venv/bin/python training/rerank/pools.py      # ~4 min, both splits
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

TRAINING = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TRAINING))
sys.path.insert(0, str(TRAINING.parent))

from features import DATA, FEATURES, INDEXES, is_answer, is_hit, say  # noqa: E402
from grepgraph.retrievers.rank.search import Searcher  # noqa: E402
from grepgraph.retrievers.store.index import CodeIndex  # noqa: E402

OUT = DATA / "rerank"
# Results kept a query: the reranker reorders fewer (reranker_input.RERANKED); the pool shows what deeper would gain.
DEPTH = 20
# A chunk's code is cut here in the pool file; the reranker reads far less (its word-piece budget).
MAX_TEXT_CHARS = 1500


def table_pools(table: Path) -> list[dict]:
    """Every query of one features table with its searched pool."""
    with np.load(table) as data:
        queries = json.loads(str(data["queries_json"]))
        meta = {key: str(data[key]) for key in ("package", "language", "split")}
        corpus = DATA / str(data["corpus_dir"])
        index = CodeIndex(corpus, INDEXES / str(data["index"]))
    searcher = Searcher(index)
    pools = []
    try:
        for query in queries:
            hits, _ = searcher.search(query["query"], DEPTH)
            candidates = []
            for hit in hits:
                result = {"path": hit.path, "start_line": hit.start_line, "end_line": hit.end_line,
                          "symbol": hit.symbol, "kind": hit.kind}
                candidates.append({
                    "path": hit.path, "symbol": hit.symbol, "kind": hit.kind, "score": hit.score,
                    "label": any(is_answer(result, gold) for gold in query["gold"]),
                    "ruler_label": any(is_hit(result, gold) for gold in query["gold"]),
                    "text": hit.text[:MAX_TEXT_CHARS]})
            pools.append({**meta, "table": table.name, "id": query["id"], "kind": query["kind"],
                          "query": query["query"], "candidates": candidates})
    finally:
        searcher.close()
    return pools


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated table names (e.g. afero.npz)")
    parser.add_argument("--out", type=Path, default=OUT, help="the folder of the pool files (rewritten)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tables = sorted(FEATURES.glob("*.npz"))
    if args.only:
        tables = [table for table in tables if table.name in args.only.split(",")]
    outs = {}
    started = time.perf_counter()
    try:
        for number, table in enumerate(tables, start=1):
            pools = table_pools(table)
            for pool in pools:
                split = pool["split"]
                if split not in outs:
                    outs[split] = (args.out / f"pools-{split}.jsonl").open("w")
                outs[split].write(json.dumps(pool) + "\n")
            say(f"{number}/{len(tables)} {table.name}: {len(pools)} queries, {time.perf_counter() - started:.0f}s")
    finally:
        for out in outs.values():
            out.close()


if __name__ == "__main__":
    main()
