#!/usr/bin/env python3
"""How the graph merges a question that asks for two things: variants of its fusion, paired, on mined queries.

Without an LLM the graph splits a question with a second request ("...; also ...") into sub-queries
(``graphs/heuristics.decompose``), searches the whole question and each part, and merges the lists
(``graphs/nodes.merge``: Reciprocal Rank Fusion with one weight for the whole question's list and one for the
parts', plus the exact-text bonus). Two of a package's sampled docstring queries joined as "A; also B" make such
a question with both answers known; the parts are what ``decompose`` returns. Each variant merges the same lists;
a question scores the mean over A and B of the reciprocal rank of its answer (the definition itself) in the merged
top 10. Printed: each variant's mean of package means, its paired difference from the first variant with a 95%
bootstrap interval over packages, and the share of questions with both answers in the top 10.

A variant is ``chances`` (the merge's :func:`retrievers.rank.fusion.chance_fusion`: the best share of its list's
scores a hit has in any list), ``chances:sum`` (those shares added), ``whole`` (the whole question's list alone, no
split) or ``WHOLE:PARTS:FIRST:TOP3``, rank fusion: the whole question's list weight, the parts' weight, and the
bonus for a list's first (and second or third) place.

    python training/compare_fusion.py --split train            # choose on the training packages
    python training/compare_fusion.py --split validation       # read once to check
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

TRAINING = Path(__file__).resolve().parent
sys.path.insert(0, str(TRAINING))
sys.path.insert(0, str(TRAINING.parent))

from compare_blends import interval  # noqa: E402
from evaluate import table_index  # noqa: E402
from features import FEATURES, LIMIT, is_answer, package_records, say  # noqa: E402
from grepgraph.graphs.heuristics import decompose  # noqa: E402
from grepgraph.graphs.nodes import EXACT_MERGE_BONUS  # noqa: E402
from grepgraph.retrievers.rank.fusion import RRF_K, best_values, chance_fusion  # noqa: E402
from grepgraph.retrievers.rank.ranking import candidate_depth  # noqa: E402
from grepgraph.retrievers.rank.search import Searcher  # noqa: E402

# The rank fusion the graph merged with until 2026-11-30 (weights 1 and 0.6, bonuses 0.05 and 0.02 for a list's
# first and second or third place), it without the bonuses, both with equal weights, the chances, the whole alone.
VARIANTS = ("1:0.6:0.05:0.02", "1:0.6:0:0", "1:1:0:0", "1:1:0.05:0.02", "chances", "chances:sum", "whole")
MAX_SUB_QUERIES = 4  # the graph's default (graphs/context.py)
SEED = 0


def merged(lists: list[list], variant: str) -> list:
    """The hits of ``lists`` (the whole question's first) in the order ``variant`` merges them."""
    if variant == "whole":
        return lists[0]
    scores: dict[int, float] = {}
    hits: dict[int, object] = {}
    if variant == "chances":  # the graph's merge
        scores = dict(chance_fusion([[(hit.chunk_id, hit.score) for hit in ranked] for ranked in lists]))
        hits = {hit.chunk_id: hit for ranked in lists for hit in ranked}
    elif variant == "chances:sum":  # its alternative: each hit's chances added over the lists
        for ranked in lists:
            total = sum(hit.score for hit in ranked) or 1.0
            for hit in ranked:
                scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + hit.score / total
                hits.setdefault(hit.chunk_id, hit)
    else:
        whole, parts, first, top3 = (float(value) for value in variant.split(":"))
        for number, ranked in enumerate(lists):
            weight = whole if number == 0 else parts
            for rank, hit in enumerate(ranked, start=1):
                bonus = first if rank == 1 else top3 if rank <= 3 else 0.0
                scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight * (1.0 / (RRF_K + rank) + bonus)
                hits.setdefault(hit.chunk_id, hit)
    # As the graph's merge adds it: the best exact-text evidence any list gives the hit.
    exact = best_values([[(hit.chunk_id, hit.components.get("exact", 0.0)) for hit in ranked] for ranked in lists])
    order = sorted(scores, key=lambda c: -(scores[c] + EXACT_MERGE_BONUS * exact[c]))
    return [hits[chunk_id] for chunk_id in order]


def reciprocal_rank(hits: list, golds: list[dict]) -> float:
    """1 / the rank of the first of the top ``LIMIT`` hits that is one of ``golds`` (0 if none is)."""
    for rank, hit in enumerate(hits[:LIMIT], start=1):
        found = {"path": hit.path, "start_line": hit.start_line, "end_line": hit.end_line, "symbol": hit.symbol,
                 "kind": hit.kind}
        if any(is_answer(found, gold) for gold in golds):
            return 1.0 / rank
    return 0.0


def questions(queries: list[dict], rng: random.Random) -> list[tuple[str, list[dict], list[dict]]]:
    """Docstring queries joined two by two as "A; also B", kept where ``decompose`` splits them."""
    described = [q for q in queries if q["kind"] == "docstring"]
    rng.shuffle(described)
    joined = []
    for first, second in zip(described[::2], described[1::2]):
        question = f"{first['query'].rstrip(' .')}; also {second['query'][:1].lower()}{second['query'][1:]}"
        _, mode = decompose(question, MAX_SUB_QUERIES)
        if mode != "single":
            joined.append((question, first["gold"], second["gold"]))
    return joined


def package_scores(record: dict, variants: list[str], per_package: int) -> dict[str, np.ndarray]:
    """Per variant, each joined question's score (the mean reciprocal rank of its two answers), and both-found."""
    index, queries = table_index(np.load(FEATURES / f"{record['name']}.npz"), record)
    searcher = Searcher(index)
    depth = candidate_depth(LIMIT)
    scores: dict[str, list[float]] = {variant: [] for variant in variants}
    both: dict[str, list[float]] = {variant: [] for variant in variants}
    try:
        for question, first, second in questions(queries, random.Random(f"{SEED}-{record['name']}"))[:per_package]:
            parts, _ = decompose(question, MAX_SUB_QUERIES)
            lists = [searcher.search(text, depth, depth=depth)[0] for text in (question, *parts)]
            for variant in variants:
                hits = merged(lists, variant)
                ranks = (reciprocal_rank(hits, first), reciprocal_rank(hits, second))
                scores[variant].append(sum(ranks) / 2)
                both[variant].append(float(all(ranks)))
    finally:
        searcher.close()
    return {variant: np.array(scores[variant]) for variant in variants} | \
        {f"both {variant}": np.array(both[variant]) for variant in variants}


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("train", "validation"), default="train")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), help="the first is the one compared with")
    parser.add_argument("--per-package", type=int, default=20, help="joined questions per package at most")
    parser.add_argument("--only", help="comma-separated package names")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    records = [r for r in package_records() if r["split"] == args.split and (FEATURES / f"{r['name']}.npz").exists()
               and (wanted is None or r["name"] in wanted)]
    results = {}
    for record in records:
        found = package_scores(record, args.variants, args.per_package)
        if len(found[args.variants[0]]):
            results[record["name"]] = found
            say(f"{record['name']:<28} {record['language']:<11} {len(found[args.variants[0]]):>3} questions  "
                + "  ".join(f"{found[v].mean():.3f}" for v in args.variants))
    names = sorted(results)
    count = sum(len(results[n][args.variants[0]]) for n in names)
    say(f"{len(names)} {args.split} packages, {count} joined questions; MRR@10 of both answers, mean of packages")
    base = args.variants[0]
    for variant in args.variants:
        differences = np.array([results[n][variant].mean() - results[n][base].mean() for n in names])
        low, high = interval(differences)
        say(f"  {variant:<16} {np.mean([results[n][variant].mean() for n in names]):.4f}  "
            f"both in top 10 {np.mean([results[n]['both ' + variant].mean() for n in names]):.3f}  "
            f"vs {base} {differences.mean():+.4f} [{low:+.4f}, {high:+.4f}]")


if __name__ == "__main__":
    main()
