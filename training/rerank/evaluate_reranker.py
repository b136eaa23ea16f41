#!/usr/bin/env python3
"""The validation pools reordered by an exported reranker, against the ranking that made them, with intervals.

Every validation query's pool (``pools.py``: what the shipped ranking returned) has its first
:data:`RERANKED` results reordered by ``--model`` through onnxruntime (``reranker_input.CrossEncoder``), one query
at a time as a search would (``--other-query``: also with the next pool's query, the check that the reranker reads the
query at all). MRR@10 by the definition itself (what the blend is fitted to find) and by the rulers'
rule, per language, per query kind and overall (the mean of the package means), each with the paired difference
and its 95% bootstrap interval (``training/evaluate.py``'s), and the reranking's time a query (median, p95).

    .venv/bin/python training/rerank/evaluate_reranker.py --model training/data/rerank/run1/reranker-dynint8.onnx
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))

from evaluate import cell  # noqa: E402
from features import DATA, say  # noqa: E402
from reranker_input import RERANKED, CrossEncoder, reciprocal_rank, reordered  # noqa: E402

RULES = {"definition": "label", "rulers' rule": "ruler_label"}


def reordered_pool(encoder: CrossEncoder, pool: dict, depth: int, query: str,
                   keep_comments: bool = False) -> list[dict]:
    """The pool with its first ``depth`` candidates in the reranker's order, read with ``query``."""
    return reordered(pool["candidates"], lambda head: encoder.scores(query, head, keep_comments), depth)


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--pools", type=Path, default=DATA / "rerank" / "pools-validation.jsonl")
    parser.add_argument("--kinds", help="comma-separated query kinds (all by default)")
    parser.add_argument("--depth", type=int, default=RERANKED)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--other-query", action="store_true",
                        help="also read each pool with the next pool's query: a reranker that reads the query loses")
    parser.add_argument("--keep-comments", action="store_true",
                        help="candidates with their comments, as the first reranker (run1) was trained on them")
    parser.add_argument("--json", type=Path, help="also write every query's reciprocal ranks here")
    args = parser.parse_args()
    encoder = CrossEncoder(args.model, threads=args.threads)
    pools = [json.loads(line) for line in args.pools.read_text().splitlines()]
    if args.kinds:
        pools = [pool for pool in pools if pool["kind"] in args.kinds.split(",")]
    columns = ["ranking", "reranked"] + (["other query"] if args.other_query else [])
    # scores[rule][row][package][column]: one package's reciprocal ranks of the row's queries
    scores: dict[str, dict[str, dict[str, dict[str, list[float]]]]] = {
        rule: defaultdict(lambda: defaultdict(lambda: defaultdict(list))) for rule in RULES}
    seconds, records = [], []
    for number, pool in enumerate(pools):
        started = time.perf_counter()
        orders = {"ranking": pool["candidates"],
                  "reranked": reordered_pool(encoder, pool, args.depth, pool["query"], args.keep_comments)}
        seconds.append(time.perf_counter() - started)
        if args.other_query:
            other = pools[(number + 1) % len(pools)]["query"]
            orders["other query"] = reordered_pool(encoder, pool, args.depth, other, args.keep_comments)
        record = {"id": pool["id"], "package": pool["package"], "kind": pool["kind"]}
        for rule, label in RULES.items():
            record[rule] = {column: reciprocal_rank(order, label) for column, order in orders.items()}
            for row in ("all (mean of packages)", f"language {pool['language']}", f"kind {pool['kind']}"):
                for column, value in record[rule].items():
                    scores[rule][row][pool["package"]][column].append(value)
        records.append(record)
    rng = np.random.default_rng(0)
    for rule in RULES:
        say(f"\nMRR@10, {rule} ({len(pools)} queries, the first {args.depth} reordered)")
        say(f"{'':<32} {'n':>5}  " + "  ".join(f"{column:<22}" for column in columns)
            + "  " + "  ".join(f"{column + ' - ranking':<22}  up/down" for column in columns[1:]))
        for row, packages in sorted(scores[rule].items()):
            groups = [{key: np.array(values) for key, values in by_column.items()} for by_column in packages.values()]
            cells = [cell([group[column] for group in groups], rng) for column in columns]
            line = f"{row:<32} {sum(len(group['ranking']) for group in groups):>5}  " + "  ".join(
                f"{value:<22}" for value in cells)
            for column in columns[1:]:
                differences = [group[column] - group["ranking"] for group in groups]
                up = sum(int((difference > 0).sum()) for difference in differences)
                down = sum(int((difference < 0).sum()) for difference in differences)
                line += f"  {cell(differences, rng):<22}  {up}/{down}"
            say(line)
    milliseconds = np.array(seconds) * 1000
    say(f"\nreranking a query: median {np.median(milliseconds):.1f} ms, p95 {np.percentile(milliseconds, 95):.1f} ms "
        f"({args.threads} threads)")
    if args.json:
        args.json.write_text(json.dumps(records))


if __name__ == "__main__":
    main()
