"""Chance fusion, Reciprocal Rank Fusion, the weighted blend and max-normalisation, against hand-computed numbers."""

from __future__ import annotations

import pytest
from grepgraph.retrievers.rank.fusion import (
    best_values,
    chance_fusion,
    max_normalise,
    reciprocal_rank_fusion,
    weighted_blend,
)

LISTS = [["a", "b", "c"], ["c", "b"]]


def test_chance_fusion_takes_each_hits_best_share_of_its_list():
    whole = [("x", 1.0), ("y", 0.5), ("z", 0.5)]          # shares 0.5, 0.25, 0.25
    part = [("z", 1.0), ("w", 0.25)]                      # shares 0.8, 0.2
    fused = chance_fusion([whole, part])
    assert dict(fused) == pytest.approx({"x": 0.5, "y": 0.25, "z": 0.8, "w": 0.2})
    assert [item for item, _ in fused] == ["z", "x", "y", "w"]


def test_chance_fusion_keeps_a_parts_clear_answer_above_middling_agreement():
    # "m" is second everywhere; each part is sure of its own answer, which rank fusion would put below "m".
    whole = [("m", 1.0), ("a", 0.9), ("b", 0.9)]
    first = [("a", 1.0), ("m", 0.05)]
    second = [("b", 1.0), ("m", 0.05)]
    by_rank = reciprocal_rank_fusion([[item for item, _ in ranked] for ranked in (whole, first, second)])
    assert by_rank[0][0] == "m"
    assert [item for item, _ in chance_fusion([whole, first, second])][:2] == ["a", "b"]


def test_chance_fusion_edge_cases():
    assert chance_fusion([]) == []
    assert chance_fusion([[], [("a", 0.0)]]) == []  # a list with no score to share gives no chance
    assert [item for item, _ in chance_fusion([[(3, 1.0)], [(1, 1.0)]])] == [3, 1]  # ties: first appearance


def test_rrf_matches_the_formula():
    fused = dict(reciprocal_rank_fusion(LISTS))
    assert fused == pytest.approx({
        "a": 1 / 61,            # 0.016393
        "b": 1 / 62 + 1 / 62,   # 0.032258
        "c": 1 / 63 + 1 / 61,   # 0.032266
    })
    assert [item for item, _ in reciprocal_rank_fusion(LISTS)] == ["c", "b", "a"]


def test_rrf_weights_scale_each_list():
    fused = dict(reciprocal_rank_fusion(LISTS, weights=[1.0, 0.5]))
    assert fused == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 0.5 / 62, "c": 1 / 63 + 0.5 / 61})


def test_rrf_weight_zero_ignores_a_list():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "a"]], weights=[1.0, 0.0])
    assert [item for item, _ in fused] == ["a", "b"]


def test_rrf_ties_keep_first_appearance_and_other_hashables():
    fused = reciprocal_rank_fusion([[3, 1], [1, 3]])
    assert [item for item, _ in fused] == [3, 1]
    assert fused[0][1] == pytest.approx(fused[1][1])


def test_rrf_edge_cases():
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []]) == []
    with pytest.raises(ValueError, match="one weight per ranked list"):
        reciprocal_rank_fusion(LISTS, weights=[1.0])


def test_larger_k_flattens_rank_differences():
    sharp = dict(reciprocal_rank_fusion([["a", "b"]], k=1))
    flat = dict(reciprocal_rank_fusion([["a", "b"]], k=1000))
    assert sharp["a"] / sharp["b"] > flat["a"] / flat["b"]


def test_max_normalise():
    assert max_normalise({"a": 4.0, "b": 1.0, "c": 0.0}) == {"a": 1.0, "b": 0.25, "c": 0.0}
    assert max_normalise({"a": 2.0, "b": -1.0}) == {"a": 1.0, "b": 0.0}  # negatives clip to zero
    assert max_normalise({"a": 0.0, "b": 0.0}) == {"a": 0.0, "b": 0.0}
    assert max_normalise({"a": -3.0}) == {"a": 0.0}
    assert max_normalise({}) == {}


def test_weighted_blend_sums_weighted_components():
    components = {
        "bm25": {1: 1.0, 2: 0.5},
        "card": {2: 1.0, 3: 0.8},
        "symbol": {3: 1.0},
    }
    blended = weighted_blend(components, {"bm25": 0.1, "card": 0.5, "symbol": 0.25})
    assert dict(blended) == pytest.approx({1: 0.1, 2: 0.05 + 0.5, 3: 0.4 + 0.25})
    assert [item for item, _ in blended] == [3, 2, 1]


def test_weighted_blend_ignores_unweighted_components():
    blended = weighted_blend({"bm25": {1: 1.0}, "code": {2: 1.0}}, {"bm25": 0.3, "code": 0.0})
    assert blended == [(1, pytest.approx(0.3))]
    assert weighted_blend({"bm25": {1: 1.0}}, {}) == []
    assert weighted_blend({}, {"bm25": 1.0}) == []


def test_best_values_keeps_each_ids_largest_value_in_any_list():
    assert best_values([[("a", 0.0), ("b", 1.0)], [("a", 0.5), ("c", -1.0)], []]) == {"a": 0.5, "b": 1.0, "c": -1.0}
    assert best_values([]) == {}
