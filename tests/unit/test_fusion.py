"""Reciprocal Rank Fusion, the weighted blend and max-normalisation, checked against hand-computed numbers."""

from __future__ import annotations

import pytest
from grepgraph.retrievers.rank.fusion import (
    FIRST_RANK_BONUS,
    SECOND_THIRD_RANK_BONUS,
    max_normalise,
    reciprocal_rank_fusion,
    weighted_blend,
)

LISTS = [["a", "b", "c"], ["c", "b"]]


def test_rrf_without_bonus_matches_the_formula():
    fused = dict(reciprocal_rank_fusion(LISTS, top_rank_bonus=False))
    assert fused == pytest.approx({
        "a": 1 / 61,            # 0.016393
        "b": 1 / 62 + 1 / 62,   # 0.032258
        "c": 1 / 63 + 1 / 61,   # 0.032266
    })
    assert [item for item, _ in reciprocal_rank_fusion(LISTS, top_rank_bonus=False)] == ["c", "b", "a"]


def test_rrf_rank_bonus():
    fused = reciprocal_rank_fusion(LISTS)
    expected = {
        "a": 1 / 61 + FIRST_RANK_BONUS,
        "b": (1 / 62 + SECOND_THIRD_RANK_BONUS) * 2,
        "c": 1 / 63 + SECOND_THIRD_RANK_BONUS + 1 / 61 + FIRST_RANK_BONUS,
    }
    assert dict(fused) == pytest.approx(expected)
    assert [item for item, _ in fused] == ["c", "b", "a"]


def test_rrf_weights_scale_each_list():
    fused = dict(reciprocal_rank_fusion(LISTS, weights=[1.0, 0.5], top_rank_bonus=False))
    assert fused == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 0.5 / 62, "c": 1 / 63 + 0.5 / 61})


def test_rrf_weight_zero_ignores_a_list():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "a"]], weights=[1.0, 0.0])
    assert [item for item, _ in fused] == ["a", "b"]


def test_rrf_first_rank_bonus_beats_middling_agreement():
    lists = [["x", "p", "q", "y"], ["r", "s", "t", "y"]]
    # Without the bonus two fourth places (2/64) outvote one first place (1/61) ...
    plain = dict(reciprocal_rank_fusion(lists, top_rank_bonus=False))
    assert plain["y"] > plain["x"]
    # ... with it, the document one list is sure about wins.
    boosted = dict(reciprocal_rank_fusion(lists))
    assert boosted["x"] > boosted["y"]
    assert boosted["y"] == pytest.approx(2 / 64)  # no bonus below rank 3


def test_rrf_ties_keep_first_appearance_and_other_hashables():
    fused = reciprocal_rank_fusion([[3, 1], [1, 3]], top_rank_bonus=False)
    assert [item for item, _ in fused] == [3, 1]
    assert fused[0][1] == pytest.approx(fused[1][1])


def test_rrf_edge_cases():
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []]) == []
    with pytest.raises(ValueError, match="one weight per ranked list"):
        reciprocal_rank_fusion(LISTS, weights=[1.0])


def test_larger_k_flattens_rank_differences():
    sharp = dict(reciprocal_rank_fusion([["a", "b"]], k=1, top_rank_bonus=False))
    flat = dict(reciprocal_rank_fusion([["a", "b"]], k=1000, top_rank_bonus=False))
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
