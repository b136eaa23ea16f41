"""The code-search graph's nodes and routes, over a real index of the fixture repository.

Nodes run through ``compiled.nodes[name].invoke(state, runtime=Runtime(context=...))``: LangGraph's
node callable takes an explicit ``runtime`` keyword, which is how a single node receives its context
outside a graph run. The LLM is always a fake chat model from ``langchain_core``; nothing here opens a
network connection.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from grepgraph.graphs import code_search
from grepgraph.graphs.code_search import build_graph
from grepgraph.graphs.llm import reset_llm_state
from grepgraph.graphs.nodes import InvalidSearchInput, validate_input
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from langgraph.types import Send
from pydantic import Field

from tests.conftest import indexed_sample_repo

RESULT_KEYS = {"path", "start_line", "end_line", "symbol", "kind", "score", "snippet"}
NODE_NAMES = ("classify_intent", "grep", "lookup_symbol_graph", "should_rewrite", "rewrite", "decompose", "retrieve",
              "merge", "should_rerank", "rerank", "finalize")
QUESTION = "how are call edges saved into the database?"


class ScriptedChatModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` that also keeps the text of every prompt it was sent."""

    prompts: list[str] = Field(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.prompts.append("\n".join(str(message.content) for message in messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def scripted(*replies: str) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter([AIMessage(content=reply) for reply in replies]))


def is_rerank_prompt(prompt: str) -> bool:
    return "Candidates, numbered" in prompt


# --------------------------------------------------------------------------- fixtures
# The heuristic gates are off by default (they did not pay on a real 1.5B model); these tests exercise them.
GATES_ON = {"auto_rewrite": True, "auto_rerank": True}


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory) -> dict[str, str]:
    """The fixture repository copied and indexed (real MiniLM vectors, embedded Chroma), once per session."""
    return indexed_sample_repo(tmp_path_factory)


@pytest.fixture(scope="module")
def empty_index(tmp_path_factory) -> dict[str, str]:
    """An index with no chunks at all: every search comes back empty."""
    root = tmp_path_factory.mktemp("empty_repo")
    (root / "repo").mkdir()
    (root / "repo" / "notes.txt").write_text("", encoding="utf-8")
    CodeIndex(root / "repo", root / "index").update()
    return {"repo": str(root / "repo"), "index_dir": str(root / "index")}


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No outside settings, and no searcher or LLM state carried between tests."""
    for name in list(os.environ):
        if name.startswith("GREPGRAPH_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    forget_searchers()
    reset_llm_state()
    yield
    forget_searchers()
    reset_llm_state()


def run_node(compiled, name: str, state: dict, context: dict) -> dict:
    return compiled.nodes[name].invoke(state, runtime=Runtime(context=context))


def trace_of(output: dict, node: str) -> list[dict]:
    return [entry for entry in output["trace"] if entry["node"] == node]


def candidate(ident: int, path: str, symbol: str, *, score: float = 1.0, is_test: bool = False,
              kind: str = "function", text: str = "") -> dict[str, Any]:
    return {"id": ident, "path": path, "start_line": 1, "end_line": 3, "symbol": symbol, "kind": kind,
            "is_test": is_test, "score": score, "text": text or f"def {symbol}():\n    pass\n"}


# --------------------------------------------------------------------------- classify_intent
@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"query": ""}, "query is empty"),
        ({"query": "   \n\t "}, "query is empty"),
        ({"query": 42}, "query must be a string"),
        ({"query": "x" * 100_001}, "limit is 100,000"),
        ({"query": "edges", "limit": 0}, "limit must be an integer from 1 to 100"),
        ({"query": "edges", "limit": 101}, "limit must be an integer from 1 to 100"),
        ({"query": "edges", "limit": "5"}, "limit must be an integer"),
        ({"query": "edges", "limit": True}, "limit must be an integer"),
        ({"query": "edges", "focus": "docs"}, "focus must be one of implementation, tests, all, got 'docs'"),
    ],
)
def test_classify_intent_rejects_bad_input(state, message):
    with pytest.raises(InvalidSearchInput, match=message):
        run_node(build_graph(), "classify_intent", state, {})


def test_a_bad_input_fails_the_whole_graph_with_the_same_error(sample_index):
    with pytest.raises(InvalidSearchInput, match="focus must be one of"):
        build_graph(scripted()).invoke({"query": "edges", "focus": "everything"}, context=sample_index)


def test_classify_intent_normalises_the_input():
    update = run_node(build_graph(), "classify_intent", {"query": "  who calls `store_parse_result`?\x00 "},
                      {"limit": 7})
    assert update["query"] == "who calls `store_parse_result`?"
    assert update["limit"] == 7  # the context's default limit
    assert update["focus"] == "implementation"
    assert update["graph_question"] == {"relation": "callers", "symbol": "store_parse_result"}
    assert update["trace"][0]["decision"] == "graph question: callers of store_parse_result"


def test_classify_intent_widens_the_focus_for_questions_about_tests():
    update = run_node(build_graph(), "classify_intent", {"query": "tests for the edge store", "limit": 3}, {})
    assert (update["focus"], update["limit"], update["graph_question"]) == ("all", 3, None)


# --------------------------------------------------------------------------- routes
def test_routes():
    assert code_search.route_after_classify({"graph_question": {"relation": "callers", "symbol": "f"}}) == \
        "lookup_symbol_graph"
    assert code_search.route_after_classify({"graph_question": None}) == "should_rewrite"
    assert code_search.route_after_lookup({"graph_question": {"relation": "callers", "symbol": "f"}}) == "__end__"
    assert code_search.route_after_lookup({"graph_question": None}) == "should_rewrite"
    assert code_search.route_after_should_rewrite({"rewrite_decision": True}) == "rewrite"
    assert code_search.route_after_should_rewrite({"rewrite_decision": False}) == "decompose"
    assert code_search.route_after_should_rerank({"rerank_decision": True}) == "rerank"
    assert code_search.route_after_should_rerank({"rerank_decision": False}) == "finalize"


def test_literal_and_regex_modes_are_routed_to_grep():
    for mode in ("literal", "regex"):
        assert code_search.route_after_classify({"mode": mode, "graph_question": None}) == "grep"
    assert code_search.route_after_classify({"mode": "auto", "graph_question": None}) == "should_rewrite"


def test_classify_intent_validates_patterns_and_filters():
    update = validate_input({"query": "  a.b( ", "mode": "literal", "limit": 500, "paths": "src/**,lib/**",
                             "languages": ["ts"]}, 10)
    # The pattern keeps its whitespace; limits go to 1000; filters are split and named canonically.
    assert update == {"query": "  a.b( ", "limit": 500, "focus": "implementation", "mode": "literal",
                      "paths": ["src/**", "lib/**"], "languages": ["typescript"]}
    with pytest.raises(InvalidSearchInput, match="invalid regex"):
        validate_input({"query": "(", "mode": "regex"}, 10)
    with pytest.raises(InvalidSearchInput, match="limit must be an integer from 1 to 100,"):
        validate_input({"query": "x", "limit": 500}, 10)


def test_merge_keeps_text_pasted_from_the_code_first_and_the_rerank_away():
    pasted = {**candidate(9, "t/test_x.py", "test_x", is_test=True), "exact": 1.0}
    lists = [{"label": "original", "hits": [candidate(1, "a.py", "a"), pasted]},
             {"label": "sub-query 1", "hits": [candidate(1, "a.py", "a"), candidate(2, "b.py", "b")]},
             {"label": "sub-query 2", "hits": [candidate(1, "a.py", "a")]}]
    compiled = build_graph()
    fused = run_node(compiled, "merge", {"candidate_lists": lists}, {})["fused"]
    assert [hit["id"] for hit in fused] == [9, 1, 2]  # a.py is all of one list's chance, the pasted text still first
    decided = run_node(compiled, "should_rerank", {"query": "x", "limit": 1, "fused": fused,
                                                   "candidate_lists": lists}, {})
    assert decided["rerank_decision"] is False and "found in the code" in decided["trace"][0]["reason"]


def test_route_after_merge_tries_one_rewrite_when_nothing_was_found():
    hit = candidate(1, "a.py", "f")
    assert code_search.route_after_merge({"fused": [hit], "rewrite_attempts": 0}) == "should_rerank"
    assert code_search.route_after_merge({"fused": [], "rewrite_attempts": 0}) == "rewrite"
    assert code_search.route_after_merge({"fused": [], "rewrite_attempts": 1}) == "finalize"
    assert code_search.route_after_merge({"fused": [], "rewrite_attempts": 0, "rewrite": False}) == "finalize"


def test_fan_out_sends_one_retrieval_per_query_variant():
    sends = code_search.fan_out({"query": "q", "limit": 30, "sub_queries": ["a b", "c d"], "rewrite_terms": ["x", "y"],
                                 "keywords": ["k"], "concepts": ["concept"]})
    assert all(isinstance(send, Send) and send.node == "retrieve" for send in sends)
    tasks = [send.arg for send in sends]
    assert [task["label"] for task in tasks] == ["original", "sub-query 1", "sub-query 2", "rewrite"]
    assert [task["query"] for task in tasks] == ["q", "a b", "c d", "x y"]
    assert tasks[0]["keywords"] == ["k"] and tasks[0]["dense_text"] == "concept"
    assert {task["depth"] for task in tasks} == {60}  # 2 x limit, above the default depth


# --------------------------------------------------------------------------- single nodes
def test_lookup_symbol_graph_node_answers_from_the_call_edges(sample_index):
    update = run_node(build_graph(), "lookup_symbol_graph",
                      {"query": "who calls store_parse_result", "limit": 10,
                       "graph_question": {"relation": "callers", "symbol": "store_parse_result"}}, sample_index)
    callers = {(row["path"], row["symbol"]) for row in update["results"]}
    assert ("graphstore/parser.py", "parse_file") in callers
    assert all(row["relation"] == "callers" for row in update["results"])


def test_graph_answers_keep_to_the_paths_and_languages_asked_for(sample_index):
    question = {"query": "who calls store_parse_result", "limit": 10,
                "graph_question": {"relation": "callers", "symbol": "store_parse_result"}}
    in_tests = run_node(build_graph(), "lookup_symbol_graph", {**question, "paths": ["tests/**"]}, sample_index)
    assert in_tests["results"]
    assert {row["path"].split("/")[0] for row in in_tests["results"]} == {"tests"}
    in_package = run_node(build_graph(), "lookup_symbol_graph", {**question, "paths": ["graphstore/**"],
                                                                 "languages": ["python"]}, sample_index)
    assert ("graphstore/parser.py", "parse_file") in {(row["path"], row["symbol"]) for row in in_package["results"]}
    assert not any(row["path"].startswith("tests/") for row in in_package["results"])


def test_should_rewrite_node_records_the_lexical_probe(sample_index):
    compiled = build_graph()
    update = run_node(compiled, "should_rewrite", {"query": QUESTION, "limit": 10}, {**sample_index, **GATES_ON})
    assert update["rewrite_decision"] is True
    assert set(update["lexical_probe"]) == {"top", "second"}
    assert update["trace"][0]["reason"] == "natural-language question"
    update = run_node(compiled, "should_rewrite", {"query": QUESTION, "limit": 10},
                      {**sample_index, "llm_enabled": False})
    assert (update["rewrite_decision"], update["trace"][0]["reason"]) == (False, "LLM disabled")


def test_decompose_node_respects_max_sub_queries():
    query = "how are edges stored and how are callers found and how are imports parsed"
    update = run_node(build_graph(), "decompose", {"query": query}, {"max_sub_queries": 2})
    assert update["sub_queries"] == ["how are edges stored", "how are callers found"]
    update = run_node(build_graph(), "decompose", {"query": "read and write files"}, {})
    assert update["sub_queries"] == []


def test_merge_node_keeps_a_single_list_and_fuses_several():
    first = [candidate(1, "a.py", "a"), candidate(2, "b.py", "b")]
    second = [candidate(3, "c.py", "c"), candidate(2, "b.py", "b", score=0.1)]
    compiled = build_graph()
    single = run_node(compiled, "merge", {"candidate_lists": [{"label": "original", "hits": first},
                                                              {"label": "rewrite", "hits": []}]}, {})
    assert [hit["id"] for hit in single["fused"]] == [1, 2]
    fused = run_node(compiled, "merge", {"candidate_lists": [{"label": "original", "hits": first},
                                                             {"label": "rewrite", "hits": second}]}, {})
    # c.py is the rewrite's clear answer (10/11 of its list); a.py and b.py share the original's evenly.
    assert [hit["id"] for hit in fused["fused"]] == [3, 1, 2]
    assert [hit["score"] for hit in fused["fused"]] == pytest.approx([1 / 1.1, 0.5, 0.5], abs=1e-6)
    assert fused["trace"][0]["decision"] == "chances of 2 lists"


def test_rerank_drops_out_of_range_and_duplicate_indices():
    fused = [candidate(1, "a.py", "a"), candidate(2, "b.py", "b"), candidate(3, "c.py", "c"),
             candidate(4, "d.py", "d")]
    model = scripted('{"ranking": [3, 99, 0, -1, 3, "2", true, 1.5, "x"]}')
    update = run_node(build_graph(model), "rerank", {"query": "which one", "limit": 2, "fused": fused},
                      {"rerank_top_n": 3})
    entry = update["trace"][0]
    assert entry["decision"] == "reranked"
    assert (entry["ranked"], entry["invalid_indices_dropped"]) == (2, 7)
    # LLM order c, b (a left out) blended with the fused order a, b, c; d was never shown and stays last.
    assert [hit["id"] for hit in update["fused"]] == [1, 3, 2, 4]
    assert "[3] function c (c.py)" in model.prompts[0] and "d.py" not in model.prompts[0]


def test_an_llm_reply_without_json_is_logged_and_traced(caplog):
    fused = [candidate(1, "a.py", "a"), candidate(2, "b.py", "b")]
    with caplog.at_level("WARNING", logger="grepgraph.graphs.llm"):
        update = run_node(build_graph(scripted("Sure! The best one is a.py.")), "rerank",
                          {"query": "which one", "limit": 1, "fused": fused}, {})
    assert update["trace"][0]["decision"] == "fallback: fused order kept"
    assert update["trace"][0]["llm"] == "invalid reply: no JSON object"
    assert "invalid reply: no JSON object" in caplog.text and "going on without it" in caplog.text


def test_rerank_with_no_usable_index_keeps_the_fused_order():
    fused = [candidate(1, "a.py", "a"), candidate(2, "b.py", "b")]
    update = run_node(build_graph(scripted('{"ranking": [7, 0, "none"]}')), "rerank",
                      {"query": "which one", "limit": 1, "fused": fused}, {})
    assert "fused" not in update
    assert update["trace"][0]["decision"] == "fallback: fused order kept"
    assert update["trace"][0]["llm"] == "invalid reply: no valid indices"


def test_finalize_keeps_the_ranked_order_and_cuts_to_the_limit():
    fused = [candidate(1, "a.py", "a", score=1.0), candidate(2, "tests/test_a.py", "test_a", score=0.9, is_test=True),
             candidate(3, "b.py", "b", score=0.1)]
    update = run_node(build_graph(), "finalize", {"query": "a", "limit": 2, "focus": "implementation", "fused": fused},
                      {})
    assert [row["symbol"] for row in update["results"]] == ["a", "test_a"]
    assert [row["score"] for row in update["results"]] == [1.0, 0.9]  # the searcher already applied the focus
    assert all(set(row) == RESULT_KEYS for row in update["results"])
    assert update["trace"][0]["decision"] == "top 2 of 3"
    assert update["files"] == [{"path": "a.py", "score": 1.0, "symbols": ["a"]},
                               {"path": "tests/test_a.py", "score": 0.9, "symbols": ["test_a"]}]


@pytest.mark.parametrize(("query", "focus"),
                         [("how are call edges saved into the database?", "implementation"),
                          ("GraphStore.store_parse_result", "tests"),
                          ("store the parse result", "all")])
def test_without_the_llm_the_graph_answers_what_the_searcher_ranks(sample_index, query, focus):
    """The benchmarks' headline row measures ``Searcher.search``: one focus rule, one candidate depth, one ranking."""
    searcher = Searcher(CodeIndex(sample_index["repo"], sample_index["index_dir"]))
    try:
        hits, _ = searcher.search(query, 5, focus=focus)
    finally:
        searcher.close()
    output = build_graph().invoke({"query": query, "limit": 5, "focus": focus},
                                  context={**sample_index, "llm_enabled": False})
    assert "decompose" in {entry["node"] for entry in output["trace"]}
    (retrieve,) = [entry for entry in output["trace"] if entry["node"] == "retrieve"]  # one list, no fusion
    assert retrieve["ranking"] == "learned"  # what ranked, in the trace
    assert [(row["path"], row["symbol"]) for row in output["results"]] == [(hit.path, hit.symbol) for hit in hits]
    assert [row["score"] for row in output["results"]] == pytest.approx([hit.score for hit in hits], abs=1e-4)


def test_the_focus_demotion_setting_reaches_grep(sample_index):
    def scores(demotion: float) -> dict:  # grep's factor (the learned ranking weighs the focus itself)
        output = build_graph().invoke({"query": "store_parse_result", "mode": "literal", "limit": 50, "focus": "tests"},
                                      context={**sample_index, "llm_enabled": False, "focus_demotion": demotion})
        return {(row["path"], row["start_line"]): row["score"] for row in output["results"]}

    default, halved = scores(0.5), scores(0.25)
    out_of_focus = [key for key in default if not key[0].startswith("tests/") and key in halved]
    assert out_of_focus, default
    for key in out_of_focus:
        assert halved[key] == pytest.approx(default[key] / 2, abs=1e-4)


# --------------------------------------------------------------------------- the whole graph
def test_a_question_is_rewritten_and_answered(sample_index):
    model = scripted('{"terms": ["store_parse_result", "insert edges", "executemany"], "focus": "implementation"}')
    output = build_graph(model).invoke({"query": QUESTION, "rerank": False}, context={**sample_index, **GATES_ON})
    (rewrite,) = trace_of(output, "rewrite")
    assert rewrite["decision"] == "rewritten"
    assert rewrite["terms"] == ["store_parse_result", "insert edges", "executemany"]
    assert rewrite["llm"] == "ok"
    assert {entry["decision"] for entry in trace_of(output, "retrieve")} == {"original", "rewrite"}
    assert QUESTION in model.prompts[0]
    assert output["results"]
    assert output["results"][0]["path"] == "graphstore/store.py"
    assert set(output) == {"results", "files", "trace"}


def test_the_rewrite_is_cached_for_the_same_question(sample_index):
    model = scripted('{"terms": ["store_parse_result", "insert edges"]}')
    compiled = build_graph(model)
    compiled.invoke({"query": QUESTION, "rerank": False}, context={**sample_index, **GATES_ON})
    output = compiled.invoke({"query": QUESTION, "rerank": False}, context={**sample_index, **GATES_ON})
    assert trace_of(output, "rewrite")[0]["decision"] == "cached"
    assert len(model.prompts) == 1


@pytest.mark.parametrize("reply", ["Sure! Look at the store module, it saves the edges.", '{"terms": "edges"}',
                                   '{"terms": []}', '{"focus": "tests"}'])
def test_a_model_talking_nonsense_falls_back_to_the_original_query(sample_index, reply):
    output = build_graph(scripted(reply)).invoke({"query": QUESTION, "rerank": False},
                                                 context={**sample_index, **GATES_ON})
    (rewrite,) = trace_of(output, "rewrite")
    assert rewrite["decision"].startswith("fallback")
    assert rewrite["llm"].startswith("invalid reply")
    assert [entry["decision"] for entry in trace_of(output, "retrieve")] == ["original"]
    assert output["results"]


def test_a_failing_model_falls_back_too(sample_index):
    model = scripted()  # no replies left: invoking it raises
    output = build_graph(model).invoke({"query": QUESTION, "rerank": True}, context={**sample_index, **GATES_ON})
    assert trace_of(output, "rewrite")[0]["llm"].startswith("error:")
    assert trace_of(output, "rerank")[0]["decision"] == "fallback: fused order kept"
    assert output["results"]


def test_rerank_through_the_graph(sample_index):
    model = scripted('{"ranking": [2, 1, 50, 2]}')
    output = build_graph(model).invoke({"query": "where are edges written", "rewrite": False, "rerank": True},
                                       context=sample_index)
    (rerank,) = trace_of(output, "rerank")
    assert rerank["decision"] == "reranked"
    assert (rerank["ranked"], rerank["invalid_indices_dropped"]) == (2, 2)
    assert is_rerank_prompt(model.prompts[0])
    assert output["results"]


def test_the_rerank_changes_the_final_order(sample_index):
    # focus "all": no demotion, so the fused order is the final order.
    query = {"query": "where are call edges written", "rewrite": False, "focus": "all"}
    plain = build_graph(scripted()).invoke({**query, "rerank": False}, context=sample_index)["results"]
    model = scripted('{"ranking": [6, 5, 4, 3]}')
    reranked = build_graph(model).invoke({**query, "rerank": True}, context=sample_index)["results"]
    assert any(is_rerank_prompt(prompt) for prompt in model.prompts)
    # keep 0.7: fused #1 keeps first place, the LLM's favourite (fused #6) moves up to second.
    assert [row["symbol"] for row in reranked[:2]] == [plain[0]["symbol"], plain[5]["symbol"]]


def test_forbidding_rewrite_and_rerank_keeps_the_llm_out(sample_index):
    model = scripted()
    output = build_graph(model).invoke({"query": QUESTION, "rewrite": False, "rerank": False}, context=sample_index)
    assert model.prompts == []
    assert trace_of(output, "should_rewrite")[0]["reason"] == "forbidden by caller"
    assert trace_of(output, "should_rerank")[0]["reason"] == "forbidden by caller"
    assert not trace_of(output, "rewrite") and not trace_of(output, "rerank")
    assert output["results"]


def test_forcing_rewrite_and_rerank_calls_the_llm_for_a_code_query(sample_index):
    model = scripted('{"terms": ["GraphStore", "delete_file"]}', '{"ranking": [1]}')
    output = build_graph(model).invoke({"query": "store_parse_result", "rewrite": True, "rerank": True},
                                       context=sample_index)
    assert trace_of(output, "should_rewrite")[0]["reason"] == "forced by caller"
    assert trace_of(output, "rewrite")[0]["decision"] == "rewritten"
    assert trace_of(output, "rerank")[0]["decision"] == "reranked"
    assert [is_rerank_prompt(prompt) for prompt in model.prompts] == [False, True]


def test_a_graph_question_is_answered_from_the_symbol_graph(sample_index):
    model = scripted()
    output = build_graph(model).invoke({"query": "who calls store_parse_result"}, context=sample_index)
    assert model.prompts == []
    assert [entry["node"] for entry in output["trace"]] == ["classify_intent", "lookup_symbol_graph"]
    first = output["results"][0]
    assert (first["path"], first["symbol"], first["relation"], first["via"]) == (
        "graphstore/parser.py", "parse_file", "callers", "GraphStore.store_parse_result")
    assert RESULT_KEYS <= set(first)
    assert "store_parse_result" in first["snippet"]


def test_a_graph_question_about_an_unknown_symbol_falls_through_to_search(sample_index):
    output = build_graph(scripted()).invoke({"query": "who calls no_such_symbol_xyz", "rerank": False},
                                            context=sample_index)
    (lookup,) = trace_of(output, "lookup_symbol_graph")
    assert lookup["decision"] == "fall through to search"
    assert "no_such_symbol_xyz" in lookup["reason"]
    assert trace_of(output, "retrieve")
    assert output["results"]
    assert all(set(row) == RESULT_KEYS for row in output["results"])


def test_a_structured_query_skips_the_llm_rewrite(sample_index):
    model = scripted()
    output = build_graph(model).invoke(
        {"query": "how are call edges saved?", "keywords": ["store_parse_result", "executemany"],
         "concepts": ["persist call edges in sqlite"]}, context=sample_index)
    assert trace_of(output, "should_rewrite")[0]["reason"] == "structured query given by caller"
    assert not trace_of(output, "rewrite")
    assert not any("translate a developer's question" in prompt for prompt in model.prompts)
    # The method that saves them, or first the class holding it (a class counts as an answer for its methods).
    assert "GraphStore.store_parse_result" in [row["symbol"] for row in output["results"][:2]]


def test_focus_tests_puts_the_tests_first(sample_index):
    compiled = build_graph(scripted())
    output = compiled.invoke({"query": "store_parse_result", "focus": "tests", "rerank": False}, context=sample_index)
    assert output["results"][0]["path"] == "tests/test_store.py"
    implementation = compiled.invoke({"query": "store_parse_result", "rerank": False}, context=sample_index)
    assert implementation["results"][0]["path"] == "graphstore/store.py"


def test_results_have_exactly_the_documented_keys(sample_index):
    output = build_graph(scripted()).invoke({"query": "delete_file", "limit": 5, "rerank": False},
                                            context=sample_index)
    assert len(output["results"]) == 5
    for row in output["results"]:
        assert set(row) == RESULT_KEYS
        assert isinstance(row["score"], float) and row["start_line"] <= row["end_line"]
    assert [row["score"] for row in output["results"]] == sorted((row["score"] for row in output["results"]),
                                                                 reverse=True)


def test_nothing_found_tries_one_rewrite_then_answers_empty(empty_index):
    model = scripted('{"terms": ["edges"]}')
    output = build_graph(model).invoke({"query": QUESTION, "rewrite": False}, context=empty_index)
    assert output["results"] == []
    # "rewrite": False is respected even when nothing is found.
    assert model.prompts == [] and not trace_of(output, "rewrite")
    output = build_graph(model).invoke({"query": "edges sqlite insert batch"}, context=empty_index)
    assert output["results"] == []
    assert len(trace_of(output, "rewrite")) == 1
    assert trace_of(output, "finalize")[0]["results"] == 0


def test_llm_disabled_never_calls_the_llm_even_when_nothing_is_found(empty_index):
    model = scripted('{"terms": ["edges"]}')
    output = build_graph(model).invoke({"query": "edges sqlite insert batch"},
                                       context={**empty_index, "llm_enabled": False})
    assert output["results"] == []
    assert model.prompts == []


def test_the_mermaid_drawing_names_every_node():
    drawing = code_search.graph.get_graph().draw_mermaid()
    for name in NODE_NAMES:
        assert name in drawing
    assert code_search.graph.name == "code_search"


def test_by_default_only_a_caller_or_zero_results_call_the_llm(sample_index):
    model = scripted('{"terms": ["store_parse_result"]}')
    output = build_graph(model).invoke({"query": QUESTION}, context=sample_index)
    decisions = {entry["node"]: entry for entry in output["trace"]}
    assert decisions["should_rewrite"]["decision"] == "skip"
    assert decisions["should_rewrite"]["reason"].startswith("auto_rewrite off")
    assert "rewrite" not in decisions and not model.prompts
    forced = build_graph(model).invoke({"query": QUESTION, "rewrite": True}, context=sample_index)
    assert any(entry["node"] == "rewrite" and entry["decision"] == "rewritten" for entry in forced["trace"])
