"""The offline comparison of two fits: paired by package, and only on the same queries."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compare_blends import compare, interval  # noqa: E402


def ranks(*values: float, kinds=("docstring", "name")) -> tuple[str, np.ndarray, np.ndarray]:
    """A Python package's queries: their kinds and reciprocal ranks."""
    return "python", np.array(kinds[:len(values)]), np.array(values)


def test_the_difference_is_the_mean_of_package_differences(capsys):
    """Package means first (a small package weighs as much as a large one), then their difference."""
    old = {"a": ranks(1.0, 0.5), "b": ranks(0.0, 0.0)}
    new = {"a": ranks(1.0, 1.0), "b": ranks(0.5, 0.0)}
    compare(old, new, "label")
    printed = capsys.readouterr().out
    assert "old 0.3750  new 0.6250  difference +0.2500" in printed
    assert "kind docstring" in printed and "0.500 -> 0.750" in printed


def test_different_queries_are_refused():
    """Features made with other queries would pair unlike with unlike."""
    with pytest.raises(SystemExit):
        compare({"a": ranks(1.0, 0.5)}, {"a": ranks(1.0)}, "label")


def test_an_interval_holds_the_mean():
    """The bootstrap interval brackets the sample's mean."""
    low, high = interval(np.array([0.1, 0.2, 0.3, 0.0]))
    assert low <= 0.15 <= high
