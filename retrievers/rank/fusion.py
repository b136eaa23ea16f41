"""Merging ranked lists: the learned blend's chances across queries, Reciprocal Rank Fusion and a weighted blend.

The graph merges lists that come from *different queries* (a multi-part question, its parts, an LLM's rewrite):
each list is the learned blend's, whose scores give every hit its chance of answering that list's query, so the
lists compare on one scale (:func:`chance_fusion`; measured against the rank fusion it replaced by
``training/compare_fusion.py``). Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, 2009) stays for a caller's
own weights (``Searcher.search(..., fusion="rrf")``, the benchmarks' ``rrf`` method), as stock hybrids fuse;
within one query a weighted blend of normalised scores is the other choice for a caller's weights.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

# The published constant of Reciprocal Rank Fusion (a caller's own weights only, see above).
RRF_K = 60


def chance_fusion(ranked_lists: Sequence[Sequence[tuple[K, float]]]) -> list[tuple[K, float]]:
    """Merge the learned blend's lists of ``(id, score)`` by the best chance any of them gives an id, best first.

    A learned list scores each hit ``exp(its log-score - the best one's)``; a hit's share of its list's scores is
    the blend's softmax chance that it answers that list's query (what the listwise fit learned), over the hits the
    list kept. A part's clear answer keeps its place whatever the other lists hold, without rank constants or
    list weights. Ties keep first appearance.
    """
    best: dict[K, float] = {}
    for ranked in ranked_lists:
        total = sum(score for _, score in ranked)
        if total <= 0:
            continue
        for item, score in ranked:
            best[item] = max(best.get(item, 0.0), score / total)
    return sorted(best.items(), key=lambda pair: -pair[1])


def best_values(lists: Sequence[Sequence[tuple[K, float]]]) -> dict[K, float]:
    """Each id's largest value in any of ``lists`` of ``(id, value)``: the evidence a merge keeps for a hit."""
    best: dict[K, float] = {}
    for pairs in lists:
        for item, value in pairs:
            best[item] = max(best.get(item, value), value)
    return best


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[K]],
    weights: Sequence[float] | None = None,
    k: int = RRF_K,
) -> list[tuple[K, float]]:
    """Fuse ranked lists of ids: ``score(d) = sum_i w_i / (k + rank_i(d))``, best first.

    Args:
        ranked_lists: Each a list of ids, best first; an id may appear in any subset.
        weights: One weight per list (default 1.0 each).
        k: The RRF constant; larger flattens the difference between ranks.

    Returns:
        ``(id, score)`` pairs sorted by descending score, ties by first appearance.
    """
    if weights is None:
        weights = [1.0] * len(ranked_lists)
    if len(weights) != len(ranked_lists):
        raise ValueError("one weight per ranked list is required")
    scores: dict[K, float] = {}
    for ranked, weight in zip(ranked_lists, weights):
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])


def max_normalise(values: dict[K, float]) -> dict[K, float]:
    """Divide by the maximum (scores in [0, 1], zero stays zero); all-zero input stays zero."""
    top = max(values.values(), default=0.0)
    if top <= 0:
        return {key: 0.0 for key in values}
    return {key: max(value, 0.0) / top for key, value in values.items()}


def weighted_blend(
    components: dict[str, dict[K, float]], weights: dict[str, float]
) -> list[tuple[K, float]]:
    """``score(d) = sum_c weights[c] * components[c][d]`` over the union of ids, best first.

    Missing entries count as zero; components are expected to be pre-normalised.
    """
    totals: dict[K, float] = {}
    for name, values in components.items():
        weight = weights.get(name, 0.0)
        if not weight:
            continue
        for item, value in values.items():
            totals[item] = totals.get(item, 0.0) + weight * value
    return sorted(totals.items(), key=lambda pair: -pair[1])
