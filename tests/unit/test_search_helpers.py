"""The pure query-parsing helpers of the searcher: which query tokens name code, which files a query mentions."""

import pytest
from grepgraph.retrievers.lexical.tokenize import repeated_by_frequency, tokenize_query
from grepgraph.retrievers.query.parsing import (
    code_tokens,
    mentioned_paths,
    name_evidence,
    reads_as_prose,
    without_environment_listing,
)
from grepgraph.retrievers.query.shape import is_question


@pytest.mark.parametrize(("query", "tokens"), [
    ("store_parse_result", ["store_parse_result"]),
    ("who calls GraphStore.callers_of?", ["GraphStore.callers_of"]),
    ("Searcher", ["Searcher"]),
    ("Searcher search", ["Searcher"]),
    ("parseHTTP and a::b", ["parseHTTP", "a.b"]),
    # A capital that only starts a sentence names nothing ...
    ("Returns the value for a given key.", []),
    ("Register a method to invoke. Raised when it fails", []),
    # ... unless the word is code-like on its own.
    ("GraphStore keeps the edges in SQLite", ["GraphStore", "SQLite"]),
    ("Why does the Searcher rank tests first?", ["Searcher"]),
])
def test_code_tokens(query, tokens):
    assert code_tokens(query) == tokens


def test_mentioned_paths_come_from_traceback_frames_and_plain_mentions():
    query = ('Traceback:\n  File "/home/me/src/pkg/core.py", line 12, in run\nsee also pkg/util.py')
    assert mentioned_paths(query) == ["/home/me/src/pkg/core.py", "pkg/util.py"]


def test_a_questions_framing_words_are_no_name_evidence():
    question = "which class represents an object schema?"
    assert name_evidence(question, tokenize_query(question)) == ["object", "schema", "obj"]


def test_a_descriptions_words_all_count_as_name_evidence():
    description = "A class for the minimum type."
    assert set(name_evidence(description, tokenize_query(description))) == {"class", "minimum", "typ", "min"}


@pytest.mark.parametrize(("query", "statement"), [
    ("store_parse_result", False),  # a bare name asks for itself
    ("GraphStore.store_parse_result edges", False),  # mostly code
    ("how does store_parse_result write the edges?", False),  # a question about a named function
    ("Settings of openConnection for a pooled database client.", True),  # names code as context
])
def test_a_statement_is_told_from_bare_names_and_questions(query, statement):
    # The learned blend's ``statement`` column: the names a statement spells out are context, not what it asks for.
    assert (reads_as_prose(query) and not is_question(query)) == statement


def test_a_pasted_environment_listing_is_dropped_and_the_report_kept():
    listing = ["Package        Version", "-------------- -------"]
    listing += [f"widgetlib{i}     {i}.2.0" for i in range(8)] + ["OS: Linux", "zipcodes: None", "colorsys==0.4.1"]
    report = "\n".join(["Saving a frame loses its tags", "", *listing, "", "frame.save() drops tags"])
    cleaned = without_environment_listing(report)
    assert "widgetlib" not in cleaned and "zipcodes" not in cleaned and "OS: Linux" not in cleaned
    assert cleaned.startswith("Saving a frame loses its tags") and cleaned.endswith("frame.save() drops tags")


def test_a_few_version_lines_are_the_reports_words():
    report = "Fails since 2.0\npython 3.11\nlibfoo 1.2\nit raises KeyError in load_config"
    assert without_environment_listing(report) == report


def test_a_long_reports_recurring_words_count_more_by_the_log_of_their_count():
    report = "tagging " * 9 + "frame save"
    tokens = tokenize_query(report)
    tag, frame, save = tokens
    assert repeated_by_frequency(tokens, report) == [tag] * 4 + [frame, save]  # 1 + log2(9), rounded down
    assert repeated_by_frequency(tokens, "tagging frame save") == tokens
