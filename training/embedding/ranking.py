"""Vectors-only ranking of a validation package's chunks, scored as the rulers score (MRR@10).

Each view is ranked by cosine (cards of every chunk; the raw-code view of non-test chunks, as an index of this
size embeds them, ``retrievers.store.embedded_views``), and the two lists are fused by weighted reciprocal rank
with the search's own view weights and k, so "vectors only" means what it means in the benchmarks.
"""

from __future__ import annotations

import random

import numpy as np

LIMIT = 10
RRF_K = 60  # retrievers/rank/fusion.py
VIEW_WEIGHTS = {"card": 0.5, "code": 0.4}  # retrievers/rank/ranking.py WEIGHTS
DEPTH = 100  # candidates taken from each view's list


def view_texts(package: dict) -> dict[str, tuple[list[int], list[str]]]:
    """Per view, the chunk indices that get a vector and their texts."""
    chunks = package["chunks"]
    code = [i for i, chunk in enumerate(chunks) if not chunk["is_test"]]
    return {"card": (list(range(len(chunks))), [chunk["card"] for chunk in chunks]),
            "code": (code, [chunks[i]["code"] for i in code])}


def ranked(scores: np.ndarray, indices: list[int], depth: int = DEPTH) -> list[int]:
    """Chunk indices of the ``depth`` best scores, best first."""
    order = np.argsort(-scores, kind="stable")[:depth]
    return [indices[i] for i in order]


def fused(lists: dict[str, list[int]]) -> list[int]:
    """Weighted reciprocal-rank fusion of the views' lists."""
    scores: dict[int, float] = {}
    for view, chunks in lists.items():
        for rank, chunk in enumerate(chunks, start=1):
            scores[chunk] = scores.get(chunk, 0.0) + VIEW_WEIGHTS[view] / (RRF_K + rank)
    return sorted(scores, key=lambda chunk: -scores[chunk])


def reciprocal_rank(order: list[int], gold: set[int]) -> float:
    """1/rank of the first gold chunk in the top :data:`LIMIT`, 0 if none."""
    for rank, chunk in enumerate(order[:LIMIT], start=1):
        if chunk in gold:
            return 1.0 / rank
    return 0.0


def package_scores(package: dict, query_vectors: np.ndarray, view_vectors: dict[str, np.ndarray]) -> dict:
    """Per query reciprocal ranks of the card view, the code view and their fusion, with the query kinds."""
    texts = view_texts(package)
    out: dict[str, list] = {"card": [], "code": [], "fused": [], "kind": []}
    for query, vector in zip(package["queries"], query_vectors, strict=True):
        gold = set(query["gold"])
        lists = {view: ranked(view_vectors[view] @ vector, texts[view][0]) for view in ("card", "code")}
        out["card"].append(reciprocal_rank(lists["card"], gold))
        out["code"].append(reciprocal_rank(lists["code"], gold))
        out["fused"].append(reciprocal_rank(fused(lists), gold))
        out["kind"].append(query["kind"])
    return out


def trimmed(package: dict, limit: int, seed: int = 0) -> dict:
    """The package with at most ``limit`` chunks: every gold chunk, then a seeded sample of the others."""
    gold_set = {chunk for query in package["queries"] for chunk in query["gold"]}
    golds = sorted(gold_set)
    others = [i for i in range(len(package["chunks"])) if i not in gold_set]
    random.Random(f"{seed}-{package['package']}").shuffle(others)
    kept = sorted(golds + others[: max(0, limit - len(golds))])
    position = {chunk: number for number, chunk in enumerate(kept)}
    queries = [{**query, "gold": [position[chunk] for chunk in query["gold"]]} for query in package["queries"]]
    return {**package, "chunks": [package["chunks"][i] for i in kept], "queries": queries}
