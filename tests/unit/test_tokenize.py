"""Code-aware tokenisation: identifier splitting, light stemming, document and query tokens."""

from __future__ import annotations

import pytest
from grepgraph.retrievers.lexical.tokenize import (
    compound_words,
    content_words,
    is_exception_name,
    split_identifier,
    stem,
    tokenize_code,
    tokenize_query,
    with_abbreviations,
)


@pytest.mark.parametrize(
    ("identifier", "parts"),
    [
        ("store_parse_result", ("store", "parse", "result")),
        ("storeParseResult", ("store", "parse", "result")),
        ("StoreParseResult", ("store", "parse", "result")),
        ("parseHTTPResponse", ("parse", "http", "response")),
        ("HTTPServer", ("http", "server")),
        ("_insert_edges", ("insert", "edges")),
        ("__init__", ("init",)),
        ("MAX_FILE_BYTES", ("max", "file", "bytes")),
        ("utf8Decode", ("utf", "8", "decode")),
        ("x", ("x",)),
    ],
)
def test_split_identifier(identifier, parts):
    assert split_identifier(identifier) == parts


@pytest.mark.parametrize("forms", [
    ("parse", "parses", "parsed", "parsing"),
    ("edge", "edges"),
    ("query", "queries"),
    ("run", "runs", "running"),
    ("stop", "stopped", "stopping"),
    ("index", "indexes"),
    ("insert", "inserted", "inserting", "inserts"),
])
def test_stem_brings_inflections_together(forms):
    assert len({stem(form) for form in forms}) == 1, {form: stem(form) for form in forms}


@pytest.mark.parametrize("word", ["class", "status", "analysis", "is", "db", "get", "v2", "x86"])
def test_stem_leaves_short_non_alphabetic_and_latin_endings_alone(word):
    assert stem(word) == word


def test_tokenize_code_keeps_identifiers_whole_and_split():
    tokens = tokenize_code("def storeParseResult(self, result): return self._insert_edges(rows)")
    assert "storeparseresult" in tokens
    assert "insert_edges" in tokens  # leading underscores do not make a different word
    assert {stem("store"), stem("parse"), "result", "insert", stem("edges"), "row"} <= set(tokens)


def test_tokenize_code_drops_keywords_and_one_letter_names():
    tokens = tokenize_code("def f(self, x): return None")
    assert tokens == []


def test_tokenize_query_drops_stop_words():
    assert tokenize_query("how are edges inserted into the graph?") == [stem("edges"), "insert", "graph"]
    assert tokenize_query("what is the") == []


def test_tokenize_query_keeps_identifiers_whole_and_split_without_duplicates():
    tokens = tokenize_query("where is store_parse_result called? store_parse_result")
    assert tokens == ["store_parse_result", stem("store"), stem("parse"), "result", stem("called")]


def test_query_spelling_meets_code_spelling():
    code = set(tokenize_code("def store_parse_result(result): ..."))
    for query in ("storeParseResult", "store parse result", "parsing results"):
        parts = set(tokenize_query(query)) - {"storeparseresult"}
        assert parts <= code, (query, parts - code)


def test_prose_meets_code_through_stemming():
    code = set(tokenize_code("def parse_header(raw_headers): return raw_headers.split()"))
    assert {stem("parses"), stem("headers")} <= set(tokenize_query("where does it parse the headers"))
    assert set(tokenize_query("parses the headers")) <= code


def test_content_words_lowercases_and_drops_stop_words():
    assert content_words("How does the Searcher rank store_parse_result?") == [
        "searcher", "rank", "store_parse_result"
    ]


def test_abbreviations_join_the_prose_words_they_shorten():
    tokens = with_abbreviations(tokenize_query("the position of the minimum in the messages"))
    assert tokens[:3] == ["position", "minimum", "messag"]  # the query's own tokens first
    assert {"pos", "min", "msg"} <= set(tokens)


def test_abbreviations_add_nothing_to_words_without_one():
    tokens = tokenize_query("walk the tree")
    assert with_abbreviations(tokens) == tokens


VOCABULARY = {"get", "send", "buffer", "show", "fixtur", "read", "line", "in", "ion"}


@pytest.mark.parametrize(("word", "query_words", "expected"), [
    ("getsendbuffer", {"send", "buffer"}, (2, 3)),   # get | send | buffer
    ("showfixtures", {"fixtur", "scope"}, (1, 2)),  # a stemmed query word takes its ending back
    ("readline", {"line"}, (1, 2)),
    ("information", {"format"}, (0, 0)),            # "in" and "ion" are too short to be its words
    ("frange", {"rang"}, (0, 0)),                   # "f" is no word
    ("sendmail", {"send"}, (0, 0)),                 # "mail" is not in the repository's vocabulary
    ("buffer", {"buffer"}, (0, 0)),                 # one word is no compound
])
def test_compound_words_split_a_run_together_name_by_the_querys_words_and_the_vocabulary(word, query_words, expected):
    assert compound_words(word, query_words, VOCABULARY.__contains__) == expected


def test_a_type_is_an_exception_by_its_name_ending():
    for name in ("ValueError", "IOException", "DeprecationWarning", "Throwable", "KeyboardInterrupt", "Error"):
        assert is_exception_name(name), name
    for name in ("ErrorHandler", "ExceptionGroupFormatter", "Parser", "interrupt"):
        assert not is_exception_name(name), name
