"""Merging ranked lists: Reciprocal Rank Fusion and a weighted score blend.

Every tuning constant lives here, named. RRF (Cormack, Clarke & Büttcher, 2009)
merges lists that come from *different queries* (sub-queries, LLM rewrites), whose
scores are not comparable. Within one query, BM25 and vector scores *are* available
side by side, and a weighted blend of normalised scores measured better than RRF on
our benchmark (see BENCHMARKS.md), so the searcher uses the blend there.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

RRF_K = 60
ORIGINAL_QUERY_WEIGHT = 1.0
DERIVED_QUERY_WEIGHT = 0.6
FIRST_RANK_BONUS = 0.05
SECOND_THIRD_RANK_BONUS = 0.02


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[K]],
    weights: Sequence[float] | None = None,
    k: int = RRF_K,
    top_rank_bonus: bool = True,
) -> list[tuple[K, float]]:
    """Fuse ranked lists of ids: ``score(d) = sum_i w_i / (k + rank_i(d))``, best first.

    Args:
        ranked_lists: Each a list of ids, best first; an id may appear in any subset.
        weights: One weight per list (default 1.0 each).
        k: The RRF constant; larger flattens the difference between ranks.
        top_rank_bonus: Add a small bonus for being first (or 2nd/3rd) in any list, so a
            document one list is sure about is not outvoted by middling agreement.

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
            bonus = 0.0
            if top_rank_bonus:
                bonus = FIRST_RANK_BONUS if rank == 1 else SECOND_THIRD_RANK_BONUS if rank <= 3 else 0.0
            scores[item] = scores.get(item, 0.0) + weight * (1.0 / (k + rank) + bonus)
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
