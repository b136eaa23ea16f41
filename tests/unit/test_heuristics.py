"""The graph's pure decisions (``graphs/heuristics.py``), tested without mocks."""

from __future__ import annotations

import pytest
from grepgraph.graphs.heuristics import (
    GraphQuestion,
    blend_rerank,
    classify_graph_question,
    clean_terms,
    decompose,
    parse_json_object,
    should_rerank,
    should_rewrite,
    snippet,
    strip_think,
)

# Fixed thresholds (not the calibrated ``Context`` defaults), so these tests check the logic, not the tuning.
REWRITE_SETTINGS = dict(min_content_words=3, stopword_share=0.45, long_words=60, strong_score=12.0, strong_gap=0.3)
RERANK_SETTINGS = dict(strong_score=12.0, strong_gap=0.3)


# --------------------------------------------------------------------------- classify_graph_question
@pytest.mark.parametrize(
    ("query", "relation", "symbol"),
    [
        # callers
        ("who calls store_parse_result", "callers", "store_parse_result"),
        ("Who calls store_parse_result?", "callers", "store_parse_result"),
        ("what uses parse_file", "callers", "parse_file"),
        ("which function invokes delete_file?", "callers", "delete_file"),
        ("callers of store_parse_result", "callers", "store_parse_result"),
        ("find the call sites of parse_file", "callers", "parse_file"),
        ("where is parse_file called?", "callers", "parse_file"),
        ("where is `parse_file` used", "callers", "parse_file"),
        ("who calls store_parse_result()", "callers", "store_parse_result"),
        ("who calls Client.#send", "callers", "Client.#send"),
        ("what does $reset call", "callees", "$reset"),
        # callees
        ("what does parse_file call?", "callees", "parse_file"),
        ("callees of parse_file", "callees", "parse_file"),
        ("show the functions called by parse_file", "callees", "parse_file"),
        # subclasses
        ("subclasses of BaseParser", "subclasses", "BaseParser"),
        ("which classes inherit from BaseParser?", "subclasses", "BaseParser"),
        ("what implements BaseParser", "subclasses", "BaseParser"),
        ("classes that extend BaseParser", "subclasses", "BaseParser"),
        # bases
        ("base classes of PythonParser", "bases", "PythonParser"),
        ("what does PythonParser inherit from?", "bases", "PythonParser"),
        ("superclasses of PythonParser", "bases", "PythonParser"),
        # importers
        ("what imports graphstore.store", "importers", "graphstore.store"),
        ("where is sqlite3 imported?", "importers", "sqlite3"),
        ("importers of graphstore.store", "importers", "graphstore.store"),
        ("which files import os.path", "importers", "os.path"),
        # definition
        ("where is GraphStore defined?", "definition", "GraphStore"),
        ("where is ParseResult declared", "definition", "ParseResult"),
        ("definition of GraphStore.store_parse_result", "definition", "GraphStore.store_parse_result"),
        ("go to definition of `GraphStore`", "definition", "GraphStore"),
    ],
)
def test_graph_questions_name_their_relation_and_symbol(query, relation, symbol):
    assert classify_graph_question(query) == GraphQuestion(relation, symbol)


@pytest.mark.parametrize("query", ["which functions call delete_file?", "what methods use parse_file"])
def test_plural_subjects_are_graph_questions_too(query):
    question = classify_graph_question(query)
    assert question is not None and question.relation == "callers"


def test_backticks_and_dotted_or_rust_paths_keep_the_qualified_name():
    assert classify_graph_question("who calls `GraphStore.store_parse_result`?") == GraphQuestion(
        "callers", "GraphStore.store_parse_result")
    # ``a::b`` is normalised to ``a.b`` so the symbol graph sees one spelling.
    assert classify_graph_question("Who invokes store::GraphStore::store_parse_result()?") == GraphQuestion(
        "callers", "store.GraphStore.store_parse_result")
    assert classify_graph_question("what does `a::b` call") == GraphQuestion("callees", "a.b")


def test_extra_whitespace_does_not_matter():
    assert classify_graph_question("  who   calls\tparse_file  ?  ") == GraphQuestion("callers", "parse_file")


@pytest.mark.parametrize(
    "query",
    [
        "how are call edges stored?",
        "what calls are made when a file is parsed",
        "store_parse_result",
        "who calls",
        "callers of the function that stores edges",
        "where is the database connection opened and closed",
        "",
        "who calls " + "x " * 300,  # a name, then more words: the patterns match a whole question only
    ],
)
def test_other_questions_are_not_graph_questions(query):
    assert classify_graph_question(query) is None


# --------------------------------------------------------------------------- should_rewrite
def rewrite_decision(query, *, top=0.0, second=0.0, intent=None):
    return should_rewrite(query, top=top, second=second, intent=intent, **REWRITE_SETTINGS)


@pytest.mark.parametrize("query", ["GraphStore.store_parse_result", "store_parse_result",
                                   "who calls no_such_symbol_xyz", "parseHTTP", "`GraphStore::delete_file`"])
def test_code_like_queries_are_not_rewritten(query):
    decision, reason = rewrite_decision(query)
    assert decision is False
    assert reason == "code-like query"


@pytest.mark.parametrize("query", ["parser", "store edges", "how edges?"])
def test_queries_with_few_content_words_are_not_rewritten(query):
    decision, reason = rewrite_decision(query)
    assert decision is False
    assert "content word" in reason


def test_a_strong_lexical_match_is_not_rewritten():
    decision, reason = rewrite_decision("how are call edges saved into the database?", top=20.0, second=5.0)
    assert decision is False
    assert reason.startswith("strong lexical match")


def test_a_strong_score_without_a_clear_gap_does_not_bypass_the_rewrite():
    decision, _ = rewrite_decision("how are call edges saved into the database?", top=20.0, second=19.0)
    assert decision is True


def test_a_caller_intent_disables_the_strong_lexical_bypass():
    decision, reason = rewrite_decision("how are call edges saved into the database?", top=20.0, second=5.0,
                                        intent="I am fixing duplicated edges after a re-parse")
    assert decision is True
    assert reason == "natural-language question"


@pytest.mark.parametrize("query", ["how are call edges saved into the database?",
                                   "where do parse results get persisted", "database edges persisted where?"])
def test_questions_are_rewritten(query):
    decision, reason = rewrite_decision(query)
    assert decision is True
    assert reason == "natural-language question"


def test_wordy_prose_is_rewritten():
    decision, reason = rewrite_decision("the code that is used for the saving of all of the edges into the store")
    assert decision is True
    assert reason.startswith("prose")


def test_a_keyword_query_is_not_rewritten():
    assert rewrite_decision("edges sqlite insert batch") == (False, "keyword query")


def test_a_long_issue_report_is_rewritten_even_when_it_is_full_of_code():
    issue = ("After upgrading, re-indexing a repository duplicates every call edge. Steps: run "
             "GraphStore.store_parse_result twice on the same ParseResult and count the rows in the calls table; "
             "expected 2, got 4. The traceback "
             "points at graphstore/store.py line 30 in _insert_edges, and delete_file does not seem to run first. "
             "This happens with Python 3.12 on Linux and macOS, with both the in-memory and the on-disk databases, "
             "and it started after the batching change.")
    assert len(issue.split()) > REWRITE_SETTINGS["long_words"]
    decision, reason = rewrite_decision(issue, top=30.0, second=2.0)
    assert decision is True
    assert reason.startswith("long input")


# --------------------------------------------------------------------------- decompose
@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("how are edges stored and how are callers found", ["how are edges stored", "how are callers found"]),
        ("find the parser code also the store code", ["find the parser code", "the store code"]),
        ("edge storage as well as caller lookup", ["edge storage", "caller lookup"]),
        ("how are edges stored; how are callers found?", ["how are edges stored", "how are callers found"]),
        ("find the parser code; find the store code", ["find the parser code", "find the store code"]),
    ],
)
def test_union_questions_split_into_parts(query, parts):
    assert decompose(query, 4) == (parts, "union")


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("how do we parse the file then store the edges?", ["how do we parse the file", "store the edges"]),
        ("where are edges stored after parsing the file?", ["where are edges stored", "parsing the file"]),
        ("how is the source file parsed, and then how are the call edges stored?",
         ["how is the source file parsed", "how are the call edges stored"]),
    ],
)
def test_sequential_questions_split_in_order(query, parts):
    assert decompose(query, 4) == (parts, "sequential")


@pytest.mark.parametrize("query", ["parse the file then store the edges",
                                   "Called when the context closes and the store is flushed"])
def test_a_statement_without_explicit_markers_stays_whole(query):
    # "and" / "then" / "when" inside a statement join clauses of one topic.
    assert decompose(query, 4) == ([query], "single")


@pytest.mark.parametrize("query", ["read and write files", "how are call edges stored?", "search and rank"])
def test_a_conjunction_inside_one_idea_keeps_the_query_whole(query):
    assert decompose(query, 4) == ([" ".join(query.split())], "single")


def test_several_code_names_get_one_sub_query_each():
    assert decompose("what do store_parse_result delete_file callers_of have in common?", 4) == (
        ["store_parse_result", "delete_file", "callers_of"], "union")
    assert decompose("compare GraphStore.delete_file with parse_file?", 4) == (
        ["GraphStore.delete_file", "parse_file"], "union")


def test_max_parts_is_respected():
    query = "how are edges stored and how are callers found and how are imports parsed and where is config loaded"
    assert decompose(query, 4)[0] == ["how are edges stored", "how are callers found", "how are imports parsed",
                                      "where is config loaded"]
    assert decompose(query, 2) == (["how are edges stored", "how are callers found"], "union")
    assert decompose("where are a_b c_d e_f g_h i_j?", 3) == (["a_b", "c_d", "e_f"], "union")
    assert decompose(query, 1) == ([query], "single")


@pytest.mark.parametrize("query", [
    "invalid frame size; expected a positive integer",
    'ValueError: unknown option "--x"; see the docs',
    "retries = max(1, count); timeout = limit * 2",
    'Traceback (most recent call last): File "a/b.py", line 3, in run; KeyError: name',
])
def test_a_pasted_message_or_code_line_stays_whole(query):
    assert decompose(query, 4) == ([query], "single")


def test_quoted_text_and_code_spans_are_never_split():
    query = 'why does "read; write" fail and how are callers found?'
    assert decompose(query, 4) == (['why does "read; write" fail', "how are callers found"], "union")
    query = "where is `load and store` called and how are edges stored?"
    assert decompose(query, 4)[0] == ["where is `load and store` called", "how are edges stored"]


def test_long_inputs_are_not_decomposed():
    text = " and ".join(f"how is thing{number} stored" for number in range(20)) + "?"
    assert decompose(text, 4) == ([text], "single")


# --------------------------------------------------------------------------- should_rerank
def test_no_rerank_when_the_candidates_fit_in_the_limit():
    decision, reason = should_rerank("how are edges stored?", top=1.0, second=0.9, candidates=10, limit=10,
                                     **RERANK_SETTINGS)
    assert decision is False
    assert "<= limit" in reason


def test_no_rerank_for_a_strong_lexical_match():
    decision, reason = should_rerank("store edges", top=20.0, second=2.0, candidates=50, limit=10, **RERANK_SETTINGS)
    assert decision is False
    assert reason.startswith("strong lexical match")


def test_rerank_a_question_about_a_code_entity():
    assert should_rerank("what parameters does store_parse_result take?", top=8.0, second=7.5, candidates=50,
                         limit=10, **RERANK_SETTINGS) == (True, "question about a specific code entity")


def test_rerank_when_the_lexical_evidence_is_weak():
    decision, reason = should_rerank("edge storage", top=2.0, second=1.9, candidates=50, limit=10, **RERANK_SETTINGS)
    assert decision is True
    assert reason.startswith("weak lexical evidence")


def test_no_rerank_when_the_lexical_evidence_is_adequate():
    assert should_rerank("edge storage", top=8.0, second=7.9, candidates=50, limit=10,
                         **RERANK_SETTINGS) == (False, "lexical evidence adequate")


# --------------------------------------------------------------------------- blend_rerank
def test_the_top_fused_rank_keeps_most_of_its_weight():
    # The LLM puts the fused #1 last; with keep 0.7 it stays first.
    assert blend_rerank(["a", "b", "c", "d"], ["d", "c", "b", "a"], 0.7)[0] == "a"


def test_the_llm_order_moves_lower_ranks():
    # a: .7 + 0; b: .35; c: .233 + .15; d: .175 + .3
    assert blend_rerank(["a", "b", "c", "d"], ["d", "c"], 0.7) == ["a", "d", "c", "b"]


def test_keep_weight_bounds():
    fused, llm = ["a", "b", "c"], ["c", "b", "a"]
    assert blend_rerank(fused, llm, 1.0) == fused
    assert blend_rerank(fused, llm, 0.0) == llm


def test_unknown_ids_from_the_llm_are_ignored():
    blended = blend_rerank(["a", "b", "c"], ["zzz", "c", "yyy"], 0.7)
    assert sorted(blended) == ["a", "b", "c"]
    assert blended == ["a", "c", "b"]


def test_an_empty_llm_order_keeps_the_fused_order():
    assert blend_rerank(["a", "b", "c"], [], 0.7) == ["a", "b", "c"]


# --------------------------------------------------------------------------- strip_think / parse_json_object
def test_strip_think_removes_reasoning_blocks():
    assert strip_think('<think>\nLet me see {"a": 0}\n</think>\n\n{"terms": ["x"]}') == '{"terms": ["x"]}'
    assert strip_think("<THINK>a</THINK>one<think>b</think>two") == "onetwo"
    assert strip_think("<think>cut off mid-thought") == ""
    assert strip_think("no reasoning here") == "no reasoning here"
    assert strip_think(None) == ""


@pytest.mark.parametrize(
    "text",
    [
        '{"terms": ["store_parse_result", "edges"]}',
        '  {"terms": ["store_parse_result", "edges"]}\n',
        '```json\n{"terms": ["store_parse_result", "edges"]}\n```',
        '```\n{"terms": ["store_parse_result", "edges"]}\n```',
        'Here you go:\n```json\n{"terms": ["store_parse_result", "edges"]}\n```\nHope this helps.',
        'Sure! The terms are {"terms": ["store_parse_result", "edges"]} - good luck.',
        'Sure! {not json} then {"terms": ["store_parse_result", "edges"]}',
        '<think>The user wants {"terms": []}?</think>\n{"terms": ["store_parse_result", "edges"]}',
        '{"terms": ["store_parse_result", "edges"]} and also {"terms": ["other"]}',
    ],
)
def test_parse_json_object_finds_the_object(text):
    assert parse_json_object(text) == {"terms": ["store_parse_result", "edges"]}


def test_parse_json_object_keeps_braces_inside_strings_when_the_whole_reply_is_json():
    assert parse_json_object('{"terms": ["f\\"{name}\\"", "}"]}') == {"terms": ['f"{name}"', "}"]}


def test_parse_json_object_in_prose_with_a_brace_inside_a_string():
    assert parse_json_object('Sure: {"terms": ["dict}", "edges"]} ok') == {"terms": ["dict}", "edges"]}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Sure! Here are a few ideas you could try when searching the code base.",
        '{"terms": ["store_parse_result"',  # truncated
        "{terms: [store_parse_result]}",
        "<think>only thinking {\"terms\": [\"x\"]}",
    ],
)
def test_parse_json_object_gives_none_for_invalid_replies(text):
    assert parse_json_object(text) is None


@pytest.mark.parametrize("text", ["[1, 2, 3]", '["store_parse_result"]', '[{"terms": ["x"]}]', '"terms"', "42", "null"])
def test_parse_json_object_gives_none_for_non_objects(text):
    assert parse_json_object(text) is None


# --------------------------------------------------------------------------- clean_terms
def test_clean_terms_keeps_short_distinct_strings():
    assert clean_terms([" store_parse_result ", "edges", "edges", "", "   ", 3, None, ["x"], "x" * 61, "sqlite"]) == [
        "store_parse_result", "edges", "sqlite"]


def test_clean_terms_caps_the_count():
    assert clean_terms([f"t{number}" for number in range(10)]) == [f"t{number}" for number in range(6)]
    assert clean_terms(["a", "b", "c"], max_terms=2) == ["a", "b"]


@pytest.mark.parametrize("value", [None, "store_parse_result edges", {"terms": ["a"]}, 42])
def test_clean_terms_rejects_non_lists(value):
    assert clean_terms(value) == []


# --------------------------------------------------------------------------- snippet
def test_snippet_of_a_short_chunk_is_the_chunk():
    assert snippet("\ndef f():\n    return 1\n", ["f"]) == "def f():\n    return 1"


def test_snippet_picks_the_window_with_the_terms():
    lines = ["def store_parse_result(self, result):"] + [f"    step_{n} = prepare({n})" for n in range(10)]
    lines += ["    calls = collect_calls(result)", "    written = insert_edges(calls)", "    return written"]
    text = "\n".join(lines)
    chosen = snippet(text, ["insert edges", "calls"], max_lines=2)
    assert chosen.splitlines() == lines[-3:-1]


def test_snippet_prefers_the_first_lines_when_nothing_matches():
    text = "\n".join(f"line {n}" for n in range(20))
    assert snippet(text, ["unrelated"], max_lines=4) == "line 0\nline 1\nline 2\nline 3"
