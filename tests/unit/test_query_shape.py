"""The kind of definition a description asks for (the learned model's likelier kind), and a description's head."""

import pytest
from grepgraph.retrievers.query.described import described_kind, kind_of
from grepgraph.retrievers.query.shape import head_phrase, is_multiline


@pytest.mark.parametrize("query", [
    "A column that guesses how to store a value from its runtime type.",
    "An abstract class for containers of named settings.",
    "Raised if the parser meets a flag nobody declared.",
    "Thrown when the connection pool is exhausted",
    "Metaclass for the Model class.",
    "Represents a parsed configuration file.",
    "which exception is raised for a missing parameter",
])
def test_type_descriptions(query):
    assert described_kind(query) == "type"


@pytest.mark.parametrize("query", [
    "Return the entry stored under a key in the cache.",
    "Check whether the cache holds a fresh entry.",
    "Converts from a borrowed pair to a pair of borrows.",
    "Create an iterator that skips blank lines",
    "Helper method to make a ValidationError",
    "A decorator that registers a method to run before loading",
])
def test_callable_descriptions(query):
    assert described_kind(query) == "callable"


@pytest.mark.parametrize("query", [
    "",
    "   ",
    "... !!! 42",
])
def test_no_opinion(query):
    assert described_kind(query) is None


def test_the_likelier_kind_of_a_probability():
    assert (kind_of(0.7), kind_of(0.3), kind_of(None)) == ("type", "callable", None)


@pytest.mark.parametrize(("query", "head"), [
    ("Checker which passes if the input matches a pattern.", ["checker"]),
    ("A IPv6 Socket Address column.", ["a", "ipv6", "socket", "address", "column"]),
    ("Basic column from which other columns should derive.", ["basic", "column"]),
    ("Raised when a string is passed", ["raised"]),
    ("", []),
])
def test_head_phrase_ends_where_the_description_begins(query, head):
    assert head_phrase(query) == head


def test_a_long_report_is_read_by_its_opening():
    report = "Session objects lose their cookies when " + "a redirect follows a redirect and then " * 40
    assert head_phrase(report) == ["session", "objects", "lose", "their", "cookies"]
    assert described_kind(report) == described_kind(report[:300])


@pytest.mark.parametrize(("query", "multiline"), [
    ("parse the config file", False),
    ("\n\n  parse the config file  \n\n", False),  # blank lines around one line are one line
    ("Fix crash on empty config\n\nThe loader indexed None.", True),
    ("x = load()\ny = x.read()", True),
    ("word " * 500, False),  # length is not lines
])
def test_a_text_of_several_lines_is_read_by_its_non_blank_lines(query, multiline):
    assert is_multiline(query) is multiline
