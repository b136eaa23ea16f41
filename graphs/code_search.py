r"""The code-search graph: intent routing, selective LLM rewrite, fan-out retrieval, fusion, rerank.

::

    START -> classify_intent -> grep -> END                          (literal / regex mode)
                             \\-> lookup_symbol_graph -> END           (graph questions)
                             \\-> should_rewrite -> [rewrite] -> decompose => retrieve (Send, one per
                                 query variant) -> merge -> should_rerank -> [rerank] -> finalize -> END

Conditional edges carry every fallback: an unknown symbol falls through to text
search; zero results trigger one forced rewrite, then a clean empty answer; an LLM
that is down, slow or talking nonsense leaves the path without it (see ``trace``).

    from grepgraph.graphs.code_search import graph
    graph.invoke({"query": "how are edges inserted into the graph?"}, context={"repo": "/path/to/repo"})
"""

from __future__ import annotations

from functools import partial, update_wrapper
from typing import Any, Literal

from grepgraph.graphs import nodes
from grepgraph.graphs.context import Context
from grepgraph.graphs.state import SearchInput, SearchOutput, SearchState
from grepgraph.retrievers.rank.ranking import candidate_depth
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


def route_after_classify(state: SearchState) -> Literal["grep", "lookup_symbol_graph", "should_rewrite"]:
    """Literal and regex queries are matched line by line; graph questions to the symbol graph; the rest is searched."""
    if state.get("mode") in ("literal", "regex"):
        return "grep"
    return "lookup_symbol_graph" if state.get("graph_question") else "should_rewrite"


def route_after_lookup(state: SearchState) -> Literal["should_rewrite", "__end__"]:
    """An unknown symbol falls through to text search."""
    return "__end__" if state.get("graph_question") else "should_rewrite"


def route_after_should_rewrite(state: SearchState) -> Literal["rewrite", "decompose"]:
    """Call the LLM only when the heuristic (or the caller) asked for it."""
    return "rewrite" if state.get("rewrite_decision") else "decompose"


def fan_out(state: SearchState) -> list[Send]:
    """One ``retrieve`` per query variant: the original, each sub-query, and the LLM's terms."""
    depth = candidate_depth(state["limit"])
    dense = state.get("passage") or " ".join(state.get("concepts") or [])
    keywords = list(state.get("keywords") or [])
    scope: dict[str, Any] = {"paths": list(state.get("paths") or []), "languages": list(state.get("languages") or []),
                             "focus": state.get("focus", "implementation")}
    if state.get("index_generation"):
        scope["index_generation"] = state["index_generation"]  # every branch searches the same generation
    if state.get("deadline"):
        scope["deadline"] = state["deadline"]
    tasks = [{"label": "original", "query": state["query"], "keywords": keywords, "dense_text": dense,
              "depth": depth, **scope}]
    for number, part in enumerate(state.get("sub_queries") or [], start=1):
        tasks.append({"label": f"sub-query {number}", "query": part, "keywords": [], "dense_text": "",
                      "depth": depth, **scope})
    if state.get("rewrite_terms"):
        terms = " ".join(state["rewrite_terms"])
        tasks.append({"label": "rewrite", "query": terms, "keywords": [], "dense_text": terms,
                      "depth": depth, **scope})
    return [Send("retrieve", task) for task in tasks]


def route_after_merge(state: SearchState) -> Literal["rewrite", "should_rerank", "finalize"]:
    """Zero results: one forced rewrite (bounded by ``rewrite_attempts``), then give up cleanly.

    The ``rewrite`` node itself declines when the LLM is disabled, so this stays a pure function of the state.
    """
    if state.get("fused"):
        return "should_rerank"
    if state.get("rewrite_attempts", 0) == 0 and state.get("rewrite") is not False:
        return "rewrite"
    return "finalize"


def route_after_should_rerank(state: SearchState) -> Literal["rerank", "finalize"]:
    """Rerank only when the heuristic (or the caller) asked for it."""
    return "rerank" if state.get("rerank_decision") else "finalize"


def _bound(function: Any, **dependencies: Any) -> Any:
    """``partial`` that keeps the node's name and signature (so LangGraph still injects ``runtime``)."""
    bound = partial(function, **dependencies)
    update_wrapper(bound, function)
    return bound


def build_graph(chat_model: Any | None = None, name: str = "code_search"):
    """Compile the graph; ``chat_model`` replaces Ollama (tests, or any LangChain chat model)."""
    builder = StateGraph(SearchState, input_schema=SearchInput, output_schema=SearchOutput,
                         context_schema=Context)
    builder.add_node("classify_intent", nodes.classify_intent)
    builder.add_node("grep", nodes.grep)
    builder.add_node("lookup_symbol_graph", nodes.lookup_symbol_graph)
    builder.add_node("should_rewrite", nodes.should_rewrite_node)
    builder.add_node("rewrite", _bound(nodes.rewrite, chat_model=chat_model))
    builder.add_node("decompose", nodes.decompose_node)
    builder.add_node("retrieve", nodes.retrieve)  # type: ignore[call-overload]  # its input is a Send payload
    builder.add_node("merge", nodes.merge)
    builder.add_node("should_rerank", nodes.should_rerank_node)
    builder.add_node("rerank", _bound(nodes.rerank, chat_model=chat_model))
    builder.add_node("finalize", nodes.finalize)

    builder.add_edge(START, "classify_intent")
    builder.add_conditional_edges("classify_intent", route_after_classify)
    builder.add_edge("grep", END)
    builder.add_conditional_edges("lookup_symbol_graph", route_after_lookup)
    builder.add_conditional_edges("should_rewrite", route_after_should_rewrite)
    builder.add_edge("rewrite", "decompose")
    builder.add_conditional_edges("decompose", fan_out, ["retrieve"])
    builder.add_edge("retrieve", "merge")
    builder.add_conditional_edges("merge", route_after_merge)
    builder.add_conditional_edges("should_rerank", route_after_should_rerank)
    builder.add_edge("rerank", "finalize")
    builder.add_edge("finalize", END)
    return builder.compile(name=name)


graph = build_graph()
