"""The learned model of what a description asks for: a type or a function (retrievers/query/described.py)."""

import json

import pytest
from grepgraph.retrievers.query.described import (
    WEIGHTS_FILE,
    description_features,
    type_probability,
)
from grepgraph.retrievers.rank.learned import QueryShape

TYPE_DESCRIPTIONS = [
    "An abstract class for containers of named settings.",
    "Represents a parsed configuration file.",
    "Metaclass for the Model class.",
    "Thrown when the connection pool is exhausted",
    "which exception is raised for a missing parameter",
]
CALLABLE_DESCRIPTIONS = [
    "Return the entry stored under a key in the cache.",
    "Check whether the cache holds a fresh entry.",
    "Converts from a borrowed pair to a pair of borrows.",
    "Helper method to make a ValidationError",
    "Create an iterator that skips blank lines",
]


def test_a_types_description_reads_as_a_type_and_a_functions_as_a_function():
    types = [type_probability(query) for query in TYPE_DESCRIPTIONS]
    callables = [type_probability(query) for query in CALLABLE_DESCRIPTIONS]
    assert min(types) > 0.5 > max(callables), (types, callables)


@pytest.mark.parametrize("query", ["", "   ", "... !!! 42"])
def test_no_opinion_on_a_text_without_words(query):
    assert not description_features(query)
    assert type_probability(query) is None


def test_a_long_report_is_read_by_its_opening():
    report = "A crash when " + "the parser reads a file with a BOM and " * 40
    assert type_probability(report) is not None
    assert type_probability(report) == type_probability(report[:300])


def test_the_features_are_the_opening_words_by_position_and_the_clauses_words():
    found = description_features("Return the Entry stored under a key.")
    assert found[:4] == ["at0:return", "at1:the", "at2:entry", "pair:return the"]
    assert {"ends:n", "ends:rn", "ends:urn", "word:stored", "word:key"} <= set(found)
    assert len(found) == len(set(found))


def test_the_shipped_weights_say_how_they_were_made():
    data = json.loads(WEIGHTS_FILE.read_text())
    assert data["command"].startswith("python training/fit_described_kind.py")
    assert len(data["manifest_sha256"]) == 64 and data["training"]["docstrings"] > 1000
    assert data["weights"] and all(name.split(":", 1)[0] in {"at0", "at1", "at2", "pair", "ends", "word"}
                                   for name in data["weights"])


def test_the_learned_columns_read_the_probability_and_nothing_without_one():
    shape = dict(multiline=False, statement=True, question=False, described="type", wants_type=True,
                 describes_exception=False, pasted_block=False)
    flags = QueryShape(**shape, type_probability=0.8).flags()
    assert flags["described_type"] == pytest.approx(0.8) and flags["described_callable"] == pytest.approx(0.2)
    silent = QueryShape(**shape).flags()  # the hand-set blend's opinion is no learned column
    assert silent["described_type"] == silent["described_callable"] == 0.0
    assert silent["wants_type"] == 1.0
