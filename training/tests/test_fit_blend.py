"""The listwise loss with graded targets: an answer counts fully, a container around it by its credit."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fit_blend import Package, Stacked, listwise_loss, stack  # noqa: E402


def stacked(labels: list[float]) -> Stacked:
    """One query of three candidates, one feature each (the candidate's score is its weight times the feature)."""
    matrix = np.array([[1.0], [2.0], [3.0]])
    return Stacked(matrix, np.zeros(3), np.array(labels), np.array([0]), np.array([3]), np.array([1.0]))


def test_a_graded_target_weighs_each_gold_by_its_credit():
    """-log((e^s0 + 0.1 e^s1) / sum e^s): the container's share counts a tenth of the answer's."""
    weights = np.array([0.5])
    scores = stacked([0.0] * 3).matrix[:, 0] * weights[0]
    loss, _ = listwise_loss(weights, stacked([1.0, 0.1, 0.0]), penalty=0.0)
    expected = -np.log((np.exp(scores[0]) + 0.1 * np.exp(scores[1])) / np.exp(scores).sum())
    assert np.isclose(loss, expected)
    binary, _ = listwise_loss(weights, stacked([1.0, 0.0, 0.0]), penalty=0.0)
    assert np.isclose(binary, -np.log(np.exp(scores[0]) / np.exp(scores).sum()))


def test_the_gradient_of_a_graded_target_matches_the_loss():
    """The analytic gradient against a central difference."""
    data, weights, step = stacked([1.0, 0.3, 0.0]), np.array([0.2]), 1e-6
    _, gradient = listwise_loss(weights, data, penalty=1e-3)
    ahead, _ = listwise_loss(weights + step, data, penalty=1e-3)
    behind, _ = listwise_loss(weights - step, data, penalty=1e-3)
    assert np.isclose(gradient[0], (ahead - behind) / (2 * step), rtol=1e-5)


def package_of(kinds: list[str], query_weight: np.ndarray | None = None) -> Package:
    """One candidate-pair per query (the first the answer), a feature each: enough for stack's bookkeeping."""
    rows = 2 * len(kinds)
    columns = {"card": np.arange(rows, dtype=float), "one": np.ones(rows)}
    return Package(name="p", language="python", split="train", columns=columns,
                   label=np.array([1, 0] * len(kinds)), offset=np.zeros(rows), group=np.arange(rows),
                   query=np.repeat(np.arange(len(kinds)), 2), kinds=np.array(kinds), hand_rank=np.zeros(len(kinds)),
                   bm25_rank=np.zeros(len(kinds)), digest="", project="p", query_weight=query_weight)


def test_kind_weights_scale_a_query_within_its_package_and_packages_stay_equal():
    """A docstring weighing 3 is three times a code line; the other package still weighs half of the whole."""
    weighted = package_of(["docstring", "code_line"], np.array([3.0, 1.0]))
    plain = package_of(["docstring", "code_line"])
    data = stack([weighted, plain], ("card",))
    assert np.allclose(data.weight, [0.375, 0.125, 0.25, 0.25])
