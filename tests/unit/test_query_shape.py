"""The kind of symbol a description asks for, read from its opening words."""

import pytest
from grepgraph.retrievers.query.shape import described_kind, head_phrase


@pytest.mark.parametrize("query", [
    "A column that guesses how to store a value from its runtime type.",
    "An abstract class for containers of named settings.",
    "Raised if the parser meets a flag nobody declared.",
    "Thrown when the connection pool is exhausted",
    "Metaclass for the Model class.",
    "where is the class that parses options",
    "which exception is raised for a missing parameter",
])
def test_type_descriptions(query):
    assert described_kind(query) == "type"


@pytest.mark.parametrize("query", [
    "A decorator that registers a method to run before loading",
    "a function that parses ISO dates",
    "Helper method to make a ValidationError",
])
def test_a_named_callable_wins_over_the_article(query):
    assert described_kind(query) == "callable"


@pytest.mark.parametrize("query", [
    "Return the entry stored under a key in the cache.",
    "Check whether the cache holds a fresh entry.",
    "Converts from a borrowed pair to a pair of borrows.",
    "Groups records by key and counts each group.",
    "Create an iterator that skips blank lines",
])
def test_a_verb_and_its_object_describe_a_callable(query):
    assert described_kind(query) == "callable"


@pytest.mark.parametrize("query", [
    "Options of the parser that reads the config.",  # a plural noun, then "of"
    "Hooks that run before exit",
    "Column that applies no conversion.",
    "Checker which passes if the number is positive.",
    "Parser",
])
def test_a_noun_is_no_verb(query):
    assert described_kind(query) != "callable"


def test_represents_opens_a_types_description():
    assert described_kind("Represents a parsed configuration file.") == "type"


@pytest.mark.parametrize("query", [
    "how are edges inserted into the graph?",
    "store_parse_result",
    "The (captured) error stream as a decoded string.",
    "",
    "   ",
    "... !!! 42",
    # An issue report that happens to open with an article is not a one-sentence description.
    "A crash when " + "the parser reads a file with a BOM and then " * 10,
])
def test_no_opinion(query):
    assert described_kind(query) is None


@pytest.mark.parametrize(("query", "head"), [
    ("Checker which passes if the input matches a pattern.", ["checker"]),
    ("A IPv6 Socket Address column.", ["a", "ipv6", "socket", "address", "column"]),
    ("Basic column from which other columns should derive.", ["basic", "column"]),
    ("Raised when a string is passed", ["raised"]),
    ("", []),
    ("Session objects " + "lose their cookies after a redirect and then " * 10, []),  # an issue report
])
def test_head_phrase_ends_where_the_description_begins(query, head):
    assert head_phrase(query) == head
