"""What the hand-set count counts: the issue's measure of how much of the ranking is still chosen by hand."""

from __future__ import annotations

import ast

from benchmarks.hand_constants import count, hand_set_numbers

MODULE = '''
"""A docstring's 42 is prose."""
import re

WEIGHT = 0.4
CAP = -3
WORDS = ("alpha", "beta", "gamma")
PATTERN = re.compile(r"x+")


def f(values, limit=10):
    """Another docstring: 7."""
    return values[2:5] + [1, 0, -1]
'''


def test_numbers_other_than_zero_and_one_outside_docstrings_and_indices_count():
    found = sorted(node.value for node in hand_set_numbers(ast.parse(MODULE)))
    assert found == [0.4, 3, 10]  # -3 once, as its operand; a slice's bounds and 0, 1, -1 not at all


def test_a_module_counts_its_numbers_regexes_and_word_lists():
    assert count(MODULE) == (3, 1, 1)
