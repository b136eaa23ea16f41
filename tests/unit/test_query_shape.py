"""The kind of symbol a description asks for, read from its opening words."""

import pytest

from retrievers.query_shape import described_kind, head_phrase


@pytest.mark.parametrize("query", [
    "A field that infers how to serialize, based on the value type.",
    "An abstract class for objects with key-value pairs.",
    "Raised if click attempted to handle an option that does not exist.",
    "Thrown when the connection pool is exhausted",
    "Metaclass for the Schema class.",
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
    "Return the value for a given key from an object.",
    "Check whether all elements compare equal.",
    "Converts from a borrowed pair to a pair of borrows.",
    "Groups records by key and counts each group.",
    "Create an iterator that skips blank lines",
])
def test_a_verb_and_its_object_describe_a_callable(query):
    assert described_kind(query) == "callable"


@pytest.mark.parametrize("query", [
    "Options of the parser that reads the config.",  # a plural noun, then "of"
    "Hooks that run before exit",
    "Field that applies no formatting.",
    "Validator which succeeds if the value is positive.",
    "Parser",
])
def test_a_noun_is_no_verb(query):
    assert described_kind(query) != "callable"


def test_represents_opens_a_types_description():
    assert described_kind("Represents a single retry attempt.") == "type"


@pytest.mark.parametrize("query", [
    "how are edges inserted into the graph?",
    "store_parse_result",
    "The (standard) output as unicode string.",
    "",
    "   ",
    "... !!! 42",
    # An issue report that happens to open with an article is not a one-sentence description.
    "A crash when " + "the parser reads a file with a BOM and then " * 10,
])
def test_no_opinion(query):
    assert described_kind(query) is None


@pytest.mark.parametrize(("query", "head"), [
    ("Validator which succeeds if value matches regex.", ["validator"]),
    ("A IPv4 Network Interface field.", ["a", "ipv4", "network", "interface", "field"]),
    ("Basic field from which other fields should extend.", ["basic", "field"]),
    ("Raised when a string is passed", ["raised"]),
    ("", []),
    ("Session objects " + "lose their cookies after a redirect and then " * 10, []),  # an issue report
])
def test_head_phrase_ends_where_the_description_begins(query, head):
    assert head_phrase(query) == head
