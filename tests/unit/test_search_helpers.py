"""The pure query-parsing helpers of the searcher: which query tokens name code, which files a query mentions."""

import pytest

from retrievers.query_parsing import code_tokens, mentioned_paths, name_evidence
from retrievers.tokenize import tokenize_query


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
