"""The graph's nodes: small functions that read the state and return a partial update.

Each node appends one ``trace`` entry saying what it decided, why, how long it took
and, for LLM nodes, the call's outcome. A run with ``run_timeout_s`` carries a ``deadline``
(:mod:`graphs.deadline`): the nodes that read the index or call the LLM check it first and stop
the run once it has passed (the others take microseconds), and LLM calls end by it. Dependencies
that can't live in the state (an injected chat model) are bound with ``functools.partial`` in
``code_search.py``.
"""

from __future__ import annotations

import re
import time
from typing import Any

from grepgraph.retrievers.codegraph.symbols import SymbolGraph
from grepgraph.retrievers.core.deadline import Deadline
from grepgraph.retrievers.core.results import code_result, rank_files
from grepgraph.retrievers.grep.patterns import PatternError, compile_pattern
from grepgraph.retrievers.lexical.tokenize import tokenize_query
from grepgraph.retrievers.query.scope import Scope, ScopeError
from grepgraph.retrievers.rank.fusion import best_values, chance_fusion
from langgraph.runtime import Runtime

from .catalog import admit_served_run
from .context import Context, resolve_context
from .deadline import deadline_after, stop_if_late
from .heuristics import (
    blend_rerank,
    classify_graph_question,
    clean_terms,
    decompose,
    should_rerank,
    should_rewrite,
    snippet,
)
from .prompt_inputs import (
    REWRITE_SCHEMA,
    REWRITE_SYMBOLS,
    query_digest,
    rerank_messages,
    rerank_schema,
    rewrite_messages,
)
from .resources import get_gateway, get_searcher
from .search_input import FOCUS_VALUES, MAX_LIMIT, MODES, SEARCH_FIELDS, field_problem, limit_problem
from .state import SearchState

# Added to the merged chance of a candidate holding text pasted from the code (a chance is at most 1).
EXACT_MERGE_BONUS = 1.0
CANDIDATE_TEXT_CHARS = 1500
# Queries about tests themselves ("where is parse tested", "tests for the router") search everything.
TEST_WORDS = re.compile(
    r"\b(?:tests? (?:for|of|that|which|covering)|unit tests?|tested|test (?:cases?|suite|files?)|fixtures?|"
    r"specs? for)\b|^tests?\b", re.I)
# Issue reports talk about tests and test runners all the time; only a short question asks for tests.
FOCUS_INFERENCE_MAX_WORDS = 30
# Snippets show the lines holding the query's words; its first characters say enough to pick them.
SNIPPET_QUERY_CHARS = 2000


class InvalidSearchInput(ValueError):
    """The input can't be searched; the message says why."""


def settings(runtime: Runtime[Context] | None) -> Context:
    """The resolved run settings; a run the Agent Server started must also pass the deployment's policy."""
    context = resolve_context(getattr(runtime, "context", None))
    return admit_served_run(context) if getattr(runtime, "server_info", None) is not None else context


def _trace(node: str, started: float, **details: Any) -> list[dict]:
    return [{"node": node, "ms": round((time.perf_counter() - started) * 1000, 2), **details}]


def _printable(text: str) -> str:
    """``text`` with control characters and lone surrogates (invalid UTF-8 from argv) turned into spaces."""
    text = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in text)
    return text.encode("utf-8", "replace").decode("utf-8")


def validate_input(state: SearchState, limit_default: int) -> dict:
    """Normalise the caller's input or raise :class:`InvalidSearchInput` with a clear message.

    The limits and their messages are the search input's (:mod:`graphs.search_input`): serve, MCP, the
    command line and the retriever refuse the same input with the same words. Nothing is cut.
    """
    query = state.get("query")
    if not isinstance(query, str):
        raise InvalidSearchInput("query must be a string")
    mode = state.get("mode") or "auto"
    if mode not in MODES:
        raise InvalidSearchInput(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    _check_limits(state)
    scope = _scope_fields(state)
    if mode != "auto":
        return {**_validate_pattern(state, query, mode, limit_default), **scope}
    query = _printable(query)
    if not query.strip():
        raise InvalidSearchInput("query is empty")
    if "limit" not in state and limit_problem(limit_default, mode):
        raise InvalidSearchInput(f"the configured default limit ({limit_default}) must be from 1 to {MAX_LIMIT}")
    limit = state.get("limit", limit_default)
    if limit_problem(limit, mode):
        raise InvalidSearchInput(limit_problem(limit, mode))
    asks_for_tests = len(query.split()) <= FOCUS_INFERENCE_MAX_WORDS and TEST_WORDS.search(query)
    focus = state.get("focus") or ("all" if asks_for_tests else "implementation")
    if focus not in FOCUS_VALUES:
        raise InvalidSearchInput(f"focus must be one of {', '.join(FOCUS_VALUES)}, got {focus!r}")
    # The structured fields reach the embedder and the prompts as they are: same checks as the query.
    extra: dict = {}
    fields: dict[str, Any] = dict(state)
    for name in ("intent", "passage"):
        if fields.get(name) is not None:
            if not isinstance(fields[name], str):
                raise InvalidSearchInput(f"{name} must be a string")
            extra[name] = _printable(fields[name])
    for name in ("keywords", "concepts"):
        if fields.get(name) is not None:
            if not isinstance(fields[name], list) or not all(isinstance(item, str) for item in fields[name]):
                raise InvalidSearchInput(f"{name} must be a list of strings")
            extra[name] = [_printable(item) for item in fields[name]]
    return {"query": query.strip(), "limit": limit, "focus": focus, "mode": mode, **scope, **extra}


def _check_limits(state: SearchState) -> None:
    """:class:`InvalidSearchInput` for the first field over its limits (a query over ``MAX_QUERY_CHARS``...)."""
    fields: dict[str, Any] = dict(state)
    for spec in SEARCH_FIELDS:
        problem = field_problem(spec.name, fields.get(spec.name))
        if problem:
            raise InvalidSearchInput(problem)


def _scope_fields(state: SearchState) -> dict:
    """``paths`` and ``languages`` as validated lists (comma lists split), or :class:`InvalidSearchInput`."""
    fields: dict[str, Any] = dict(state)
    try:
        scope = Scope.of(fields.get("paths"), fields.get("languages"))
    except ScopeError as error:
        raise InvalidSearchInput(str(error)) from None
    return {"paths": list(scope.paths), "languages": list(scope.languages)}


def _validate_pattern(state: SearchState, pattern: str, mode: str, limit_default: int) -> dict:
    """Checks for a literal or regex query: the pattern is kept as given (whitespace and all)."""
    try:
        compile_pattern(pattern.encode("utf-8", "replace").decode("utf-8"), mode)
    except PatternError as error:
        raise InvalidSearchInput(str(error)) from None
    limit = state.get("limit", limit_default)
    if limit_problem(limit, mode):
        raise InvalidSearchInput(limit_problem(limit, mode))
    focus = state.get("focus") or "implementation"
    if focus not in FOCUS_VALUES:
        raise InvalidSearchInput(f"focus must be one of {', '.join(FOCUS_VALUES)}, got {focus!r}")
    return {"query": pattern.encode("utf-8", "replace").decode("utf-8"), "limit": limit, "focus": focus,
            "mode": mode}


def scope_of(state: SearchState | dict) -> Scope:
    """The (already validated) path and language filters of the input."""
    return Scope(tuple(state.get("paths") or ()), tuple(state.get("languages") or ()))


# --------------------------------------------------------------------------- nodes
def classify_intent(state: SearchState, runtime: Runtime[Context]) -> dict:
    """Validate the input and recognise graph questions (callers, callees, hierarchy, importers, definition)."""
    started = time.perf_counter()
    context = settings(runtime)
    update = validate_input(state, context.limit)
    deadline = deadline_after(context.run_timeout_s)
    if deadline is not None:
        update["deadline"] = deadline
    _check_scope_matches(context, update)
    if update["mode"] != "auto":
        return {**update, "graph_question": None,
                "trace": _trace("classify_intent", started, decision=f"{update['mode']} search", focus=update["focus"])}
    question = classify_graph_question(update["query"])
    decision = f"graph question: {question.relation} of {question.symbol}" if question else "text search"
    return {**update, "graph_question": question.__dict__ if question else None, "rewrite_attempts": 0,
            "trace": _trace("classify_intent", started, decision=decision, focus=update["focus"])}


def _check_scope_matches(context: Context, update: dict) -> None:
    """A filter that keeps no indexed file is a mistake worth one clear line, not an empty answer."""
    scope = scope_of(update)
    if not scope.is_everything:
        try:
            get_searcher(context).scope_filter(scope)
        except ScopeError as error:
            raise InvalidSearchInput(str(error)) from None


def grep(state: SearchState, runtime: Runtime[Context]) -> dict:
    """Every line matching a literal or regex, ranked: in-focus files, then definitions of the text, first."""
    stop_if_late(state.get("deadline"), "grep")
    started = time.perf_counter()
    context = settings(runtime)
    searcher = get_searcher(context)
    try:
        answer = searcher.grep(state["query"], state["mode"], state["limit"], focus=state.get("focus", "all"),
                               scope=scope_of(state), focus_demotion=context.focus_demotion)
    except (PatternError, ScopeError) as error:
        raise InvalidSearchInput(str(error)) from None
    note = {"stopped": answer.stopped} if answer.stopped else {}
    return {"results": answer.results, "files": rank_files(answer.results), "total_matches": answer.total,
            "trace": _trace("grep", started, decision=f"{state['mode']} search", matches=answer.total,
                            results=len(answer.results), generation=answer.generation, **note)}


def lookup_symbol_graph(state: SearchState, runtime: Runtime[Context]) -> dict:
    """Answer a graph question from the call / import / inherit edges."""
    stop_if_late(state.get("deadline"), "lookup_symbol_graph")
    started = time.perf_counter()
    context = settings(runtime)
    question = state["graph_question"] or {}
    searcher = get_searcher(context)
    # One index generation for the whole answer, however many reads it takes.
    with searcher.reading() as snapshot:
        graph = SymbolGraph(snapshot.connection)
        relation, symbol = question["relation"], question["symbol"]
        # Modules are not symbols: "what imports pkg.mod" is answered from import edges alone.
        definitions = graph.definitions(symbol) if relation != "importers" else graph.importers(symbol)
        if not definitions:
            return {"graph_question": None, "results": [], "files": [],
                    "trace": _trace("lookup_symbol_graph", started, decision="fall through to search",
                                    reason=f"no symbol named {symbol!r} in the index")}
        refs = definitions if relation == "definition" else getattr(graph, relation)(symbol)
        refs = _within_scope(refs, searcher, scope_of(state))
        rows = {}
        for ref in refs[: state.get("limit", context.limit)]:
            text, text_start = graph.text_at(ref) if ref.path else ("", ref.start_line)
            # one result per call site: a caller calling twice is listed at both lines
            rows[(ref.path, ref.symbol, ref.line)] = code_result(
                ref.path, ref.start_line, ref.end_line, ref.symbol, ref.kind, 1.0,
                _reference_snippet(text, _line_offset(ref, text_start)), line=ref.line or ref.start_line,
                relation=relation, via=ref.via, resolution=ref.resolution)
    results = list(rows.values())
    return {"results": results, "files": rank_files(results),
            "trace": _trace("lookup_symbol_graph", started, decision=f"{relation} of {symbol}",
                            reason=f"{len(definitions)} definition(s), {len(results)} result(s)"
                            + _resolution_counts(refs), generation=snapshot.generation)}


def _within_scope(refs: list, searcher: Any, scope: Scope) -> list:
    """The references in the files ``--path`` / ``--lang`` keep (externals have no file: they go too)."""
    if scope.is_everything:
        return refs
    paths, _ = searcher.scope_filter(scope)
    kept = set(paths or ())
    return [ref for ref in refs if ref.path in kept]


def _line_offset(ref: Any, text_start: int) -> int:
    """Where the snippet centres: the referencing line when it lies in the chunk (callers), else its top (callees).

    ``text_start`` is the first line of the text read: a long definition's window may start below the definition.
    """
    return ref.line - text_start if ref.start_line <= ref.line <= ref.end_line and ref.line >= text_start else 0


def _resolution_counts(refs: list) -> str:
    """``: 2 resolved, 3 by name only`` for call answers; empty for the other relations."""
    counts: dict[str, int] = {}
    for ref in refs:
        if ref.resolution:
            counts[ref.resolution] = counts.get(ref.resolution, 0) + 1
    return (": " + ", ".join(f"{count} {label}" for label, count in counts.items())) if counts else ""


def _reference_snippet(text: str, offset: int, context_lines: int = 2) -> str:
    lines = text.splitlines()
    if not lines:
        return ""
    start = max(0, offset - context_lines)
    return "\n".join(lines[start : start + 2 * context_lines + 1])


def should_rewrite_node(state: SearchState, runtime: Runtime[Context]) -> dict:
    """Decide, without I/O beyond one BM25 probe, whether the LLM rewrite is worth calling."""
    stop_if_late(state.get("deadline"), "should_rewrite")
    started = time.perf_counter()
    context = settings(runtime)
    searcher = get_searcher(context)
    query = state["query"]
    # The run's later searches ask for the generation this probe saw (see ``Searcher``).
    _, signal = searcher.lexical_scores(tokenize_query(query + " " + " ".join(state.get("keywords") or [])), 2,
                                        generation=state.get("index_generation"))
    probe = {"top": round(signal.top_score, 3), "second": round(signal.second_score, 3)}
    forced = state.get("rewrite")
    if not context.llm_enabled:
        decision, reason = False, "LLM disabled"
    elif forced is not None:
        decision, reason = bool(forced), "forced by caller" if forced else "forbidden by caller"
    elif state.get("keywords") or state.get("concepts") or state.get("passage"):
        decision, reason = False, "structured query given by caller"
    elif not context.auto_rewrite:
        decision, reason = False, "auto_rewrite off (the default: no measured gain; rewrite=True forces it)"
    else:
        decision, reason = should_rewrite(
            query, top=signal.top_score, second=signal.second_score, intent=state.get("intent"),
            min_content_words=context.rewrite_min_content_words, stopword_share=context.rewrite_stopword_ratio,
            long_words=context.rewrite_long_query_words, strong_score=context.strong_lexical_score,
            strong_gap=context.strong_lexical_gap_ratio,
        )
    return {"rewrite_decision": decision, "lexical_probe": probe, "index_generation": signal.generation,
            "trace": _trace("should_rewrite", started, decision="rewrite" if decision else "skip", reason=reason,
                            generation=signal.generation, **probe)}


def rewrite(state: SearchState, runtime: Runtime[Context], chat_model: Any = None) -> dict:
    """Ask the local LLM for 3-6 code-vocabulary terms; on any failure, search goes on without them."""
    stop_if_late(state.get("deadline"), "rewrite")
    started = time.perf_counter()
    context = settings(runtime)
    attempts = state.get("rewrite_attempts", 0) + 1
    if not context.llm_enabled:
        return {"rewrite_terms": [], "rewrite_attempts": attempts,
                "trace": _trace("rewrite", started, decision="fallback: original query only",
                                llm="skipped: LLM disabled")}
    gateway = get_gateway(context, chat_model)
    key = (state["query"], state.get("intent", ""), context.llm_model)
    cached = gateway.cached_rewrite(key)
    if cached is not None:
        return {"rewrite_terms": cached["terms"], "rewrite_attempts": attempts,
                "trace": _trace("rewrite", started, decision="cached", terms=cached["terms"], llm="cache hit")}
    available, why = gateway.available()
    if not available:
        # Decided before building the prompt: a machine without Ollama pays nothing here.
        return {"rewrite_terms": [], "rewrite_attempts": attempts,
                "trace": _trace("rewrite", started, decision="fallback: original query only", llm=f"skipped: {why}")}
    searcher = get_searcher(context)
    hits, _ = searcher.search(query_digest(state["query"], context.llm_query_chars), REWRITE_SYMBOLS, focus="all",
                              dense=False, generation=state.get("index_generation"),
                              deadline=Deadline(state.get("deadline")))
    messages = rewrite_messages(state["query"], state.get("intent", ""), [(h.symbol, h.path) for h in hits],
                                context.llm_query_chars)
    reply = gateway.call_json(messages, deadline=state.get("deadline"), schema=REWRITE_SCHEMA)
    terms = clean_terms((reply.value or {}).get("terms"))
    usage = reply.trace_fields()
    if not terms:
        outcome = reply.outcome if reply.value is None else "invalid reply: no usable terms"
        return {"rewrite_terms": [], "rewrite_attempts": attempts,
                "trace": _trace("rewrite", started, decision="fallback: original query only", llm=outcome, **usage)}
    gateway.remember_rewrite(key, {"terms": terms})
    return {"rewrite_terms": terms, "rewrite_attempts": attempts,
            "trace": _trace("rewrite", started, decision="rewritten", terms=terms, llm=reply.outcome, **usage)}


def decompose_node(state: SearchState, runtime: Runtime[Context]) -> dict:
    """Split multi-part questions into sub-queries (rule-based)."""
    started = time.perf_counter()
    context = settings(runtime)
    parts, mode = decompose(state["query"], context.max_sub_queries)
    return {"sub_queries": parts if mode != "single" else [],
            "trace": _trace("decompose", started, decision=mode, sub_queries=parts if mode != "single" else [])}


def retrieve(task: dict, runtime: Runtime[Context]) -> dict:
    """BM25 + Chroma for one query variant (one ``Send`` branch), ranked under the run's focus.

    The searcher applies the focus (the one rule, :func:`retrievers.rank.ranking.focus_factor`) and ranks as
    deep as a search of the run's limit would, so with one list and no LLM the graph's answer is
    ``Searcher.search``'s (what the benchmarks' headline row measures).
    """
    stop_if_late(task.get("deadline"), "retrieve")
    started = time.perf_counter()
    context = settings(runtime)
    searcher = get_searcher(context)
    hits, signal = searcher.search(task["query"], task["depth"], keywords=task["keywords"],
                                   dense_text=task["dense_text"] or None, focus=task["focus"], scope=scope_of(task),
                                   generation=task.get("index_generation"), focus_demotion=context.focus_demotion,
                                   depth=task["depth"], deadline=Deadline(task.get("deadline")))
    rows = [{"id": h.chunk_id, "path": h.path, "start_line": h.start_line, "end_line": h.end_line,
             "symbol": h.symbol, "kind": h.kind, "is_test": h.is_test, "score": round(h.score, 5),
             "exact": h.components.get("exact", 0.0), "text": h.text[:CANDIDATE_TEXT_CHARS]} for h in hits]
    entry = {"label": task["label"], "hits": rows,
             "top": signal.top_score, "second": signal.second_score, "candidates": signal.candidates}
    # A Chroma server that is down leaves BM25, symbols and mentions: say so rather than fail.
    note: dict[str, Any] = {"vectors": signal.vectors_note} if signal.vectors_note else {}
    if signal.fallbacks:
        note["fallbacks"] = signal.fallbacks
    return {"candidate_lists": [entry],
            "trace": _trace("retrieve", started, decision=task["label"], query=task["query"][:200],
                            focus=task["focus"], hits=len(rows), ranking=signal.ranking, generation=signal.generation,
                            **note)}


def merge(state: SearchState, runtime: Runtime[Context]) -> dict:
    """Fuse the candidate lists: a single list keeps its order; several by the best chance any gives a hit."""
    started = time.perf_counter()
    lists = [entry for entry in state.get("candidate_lists", []) if entry["hits"]]
    if len(lists) <= 1:
        fused = [dict(hit) for hit in (lists[0]["hits"] if lists else [])]
        method = "single list"
    else:
        by_id: dict[int, dict] = {}
        for entry in lists:
            for hit in entry["hits"]:
                by_id.setdefault(hit["id"], hit)
        exact = best_values([[(h["id"], h.get("exact", 0.0)) for h in e["hits"]] for e in lists])
        ranked = chance_fusion([[(h["id"], h["score"]) for h in e["hits"]] for e in lists])
        # Text pasted from the code stays first whatever the other lists say (a chance is at most 1).
        fused = sorted(({**by_id[item], "score": round(score + EXACT_MERGE_BONUS * exact[item], 6)}
                        for item, score in ranked), key=lambda hit: -hit["score"])
        method = f"chances of {len(lists)} lists"
    return {"fused": fused,
            "trace": _trace("merge", started, decision=method, lists=[e["label"] for e in lists],
                            candidates=len(fused))}


def should_rerank_node(state: SearchState, runtime: Runtime[Context]) -> dict:
    """Decide whether the LLM rerank is worth calling for this query."""
    started = time.perf_counter()
    context = settings(runtime)
    original = next((e for e in state.get("candidate_lists", []) if e["label"] == "original"), None) or {}
    forced = state.get("rerank")
    fused = state.get("fused", [])
    if not context.llm_enabled:
        decision, reason = False, "LLM disabled"
    elif forced is not None:
        decision, reason = bool(forced), "forced by caller" if forced else "forbidden by caller"
        if decision and len(fused) < 2:
            decision, reason = False, "fewer than 2 candidates"
    elif fused and fused[0].get("exact"):
        decision, reason = False, "text the query pastes was found in the code of the top result"
    elif not context.auto_rerank:
        decision, reason = False, "auto_rerank off (the default: no measured gain; rerank=True forces it)"
    else:
        decision, reason = should_rerank(
            state["query"], top=original.get("top", 0.0), second=original.get("second", 0.0),
            candidates=len(state.get("fused", [])), limit=state["limit"],
            strong_score=context.strong_lexical_score, strong_gap=context.strong_lexical_gap_ratio,
        )
    return {"rerank_decision": decision,
            "trace": _trace("should_rerank", started, decision="rerank" if decision else "skip", reason=reason)}


def rerank(state: SearchState, runtime: Runtime[Context], chat_model: Any = None) -> dict:
    """LLM listwise rerank of the top candidates, blended with the fused order by position."""
    stop_if_late(state.get("deadline"), "rerank")
    started = time.perf_counter()
    context = settings(runtime)
    fused = state.get("fused", [])
    gateway = get_gateway(context, chat_model)
    available, why = gateway.available()
    if not available:
        return {"trace": _trace("rerank", started, decision="fallback: fused order kept", llm=f"skipped: {why}")}
    top = fused[: context.rerank_top_n]
    messages = rerank_messages(state["query"], state.get("intent", ""), top, context.rerank_snippet_chars,
                               context.llm_query_chars)
    reply = gateway.call_json(messages, deadline=state.get("deadline"), schema=rerank_schema(len(top)))
    usage = reply.trace_fields()
    ranking = (reply.value or {}).get("ranking")
    order: list[int] = []
    if isinstance(ranking, list):
        for item in ranking:
            number = item if isinstance(item, int) and not isinstance(item, bool) else None
            # isdecimal, not isdigit: int() rejects digits like "²" that isdigit() accepts.
            if isinstance(item, str) and item.strip().isdecimal():
                number = int(item.strip())
            if number is not None and 1 <= number <= len(top) and number - 1 not in order:
                order.append(number - 1)
    if not order:
        outcome = reply.outcome if reply.value is None else "invalid reply: no valid indices"
        return {"trace": _trace("rerank", started, decision="fallback: fused order kept", llm=outcome, **usage)}
    ids = [hit["id"] for hit in top]
    blended = blend_rerank(ids, [ids[i] for i in order], context.rerank_keep_weight)
    by_id = {hit["id"]: hit for hit in top}
    # The new order inherits the old scores rank by rank, so the scores stay in the order shown.
    scores = [hit["score"] for hit in top]
    reranked = [{**by_id[i], "score": score} for i, score in zip(blended, scores)] + fused[len(top):]
    dropped = (len(ranking) if isinstance(ranking, list) else 0) - len(order)
    return {"fused": reranked,
            "trace": _trace("rerank", started, decision="reranked", llm=reply.outcome, **usage,
                            ranked=len(order), invalid_indices_dropped=max(dropped, 0))}


def finalize(state: SearchState, runtime: Runtime[Context]) -> dict:
    """Cut the fused candidates (already ranked under the focus by the searcher) to the limit and add snippets."""
    started = time.perf_counter()
    fused = state.get("fused", [])
    terms = [state["query"][:SNIPPET_QUERY_CHARS], state.get("intent", ""), *state.get("rewrite_terms", []),
             *(state.get("keywords") or [])]
    results = [
        code_result(hit["path"], hit["start_line"], hit["end_line"], hit["symbol"], hit["kind"], hit["score"],
                    snippet(hit["text"], terms))
        for hit in fused[: state["limit"]]
    ]
    return {"results": results, "files": rank_files(results),
            "trace": _trace("finalize", started, decision=f"top {len(results)} of {len(fused)}",
                            results=len(results))}
