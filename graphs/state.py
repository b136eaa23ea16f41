"""The graph's input, output and internal state.

Uses ``typing_extensions.TypedDict`` (LangServe on Python 3.11 rejects ``typing``'s).
List fields that parallel branches write get reducers that merge and de-duplicate.
"""

from __future__ import annotations

import operator
from typing import Annotated

from grepgraph.retrievers.core.results import CodeResult, FileRank
from typing_extensions import NotRequired, Required, TypedDict

from .search_input import Focus, Mode


class SearchInput(TypedDict, total=False):
    """What a caller sends. Only ``query`` is required.

    Each field's meaning, default and limits (a query of at most ``MAX_QUERY_CHARS``...) are defined once,
    in :data:`graphs.search_input.SEARCH_FIELDS`; a unit test keeps these keys and types equal to it.
    """

    # The text to find; in literal / regex mode, the pattern.
    query: Required[str]
    mode: Mode
    # Only the files these globs and languages keep are searched, in every mode.
    paths: list[str]
    languages: list[str]
    # Default: the ``limit`` setting.
    limit: int
    # Background shown to the LLM, never searched.
    intent: str
    focus: Focus
    # Force (True) or forbid (False) the LLM rewrite / rerank; absent: the heuristics decide.
    rewrite: bool
    rerank: bool
    # A structured query: extra BM25 terms, concepts and a passage to embed instead of the query.
    keywords: list[str]
    concepts: list[str]
    passage: str


class SearchOutput(TypedDict):
    """What a caller gets back: ranked results and a trace of every node's decision."""

    # Best first, in the one result schema (:mod:`retrievers.core.results`).
    results: list[CodeResult]
    # The files of ``results``, ranked where their best result ranks, with their symbols (the files to change).
    files: list[FileRank]
    # One entry per node run: its name, milliseconds, decision and why (fallbacks included).
    trace: list[dict]
    # Literal / regex mode: how many lines matched in all (``results`` holds the best ``limit``).
    total_matches: NotRequired[int]


class RetrievalTask(TypedDict):
    """One retrieval fanned out with ``Send``: a query variant and its fusion weight."""

    # ``original``, ``sub-query N`` or ``rewrite``: names the list in ``candidate_lists`` and the trace.
    label: str
    query: str
    # Extra BM25 terms searched with the query.
    keywords: list[str]
    # Text embedded instead of the query (a caller's passage or concepts, the rewrite's terms); empty: the query.
    dense_text: str
    # Candidates to return and rank (``retrievers.rank.ranking.candidate_depth`` of the run's limit).
    depth: int
    # The run's file filters and focus, applied by the searcher.
    paths: list[str]
    languages: list[str]
    focus: Focus
    # The index generation the run pinned (see ``SearchState.index_generation``).
    index_generation: NotRequired[str]
    # The run's deadline (see ``SearchState.deadline``).
    deadline: NotRequired[float]


def merge_candidate_lists(left: list[dict] | None, right: list[dict] | None) -> list[dict]:
    """Combine lists written by parallel ``retrieve`` branches; a later list replaces one with the same label."""
    merged = {entry["label"]: entry for entry in (left or [])}
    for entry in right or []:
        merged[entry["label"]] = entry
    return list(merged.values())


class SearchState(SearchInput, total=False):
    """Everything the nodes read and write: the input plus what the nodes decide and find."""

    # ``{"relation", "symbol"}`` of a graph question (callers, callees, ...); None: a text search.
    graph_question: NotRequired[dict | None]
    # ``{"top", "second"}``: the raw BM25 scores of the first two hits, which the rewrite heuristic read.
    lexical_probe: dict
    # The index generation the run's first search saw; its later searches ask for the same one.
    index_generation: str
    # When the run must stop (``time.time()`` seconds), from ``run_timeout_s``; absent: no bound.
    deadline: float
    # Whether ``rewrite`` runs; the LLM's code-vocabulary terms (empty on any failure); how often it ran
    # (a zero-result run forces one more, at most).
    rewrite_decision: bool
    rewrite_terms: list[str]
    rewrite_attempts: int
    # The parts of a multi-part question (empty: a single query).
    sub_queries: list[str]
    # One entry per ``retrieve`` branch: its label, hits and BM25 signal (merged by label).
    candidate_lists: Annotated[list[dict], merge_candidate_lists]
    # The merged candidates, best first (reordered by ``rerank``); ``finalize`` cuts them to the limit.
    fused: list[dict]
    # Whether ``rerank`` runs.
    rerank_decision: bool
    results: list[CodeResult]
    files: list[FileRank]
    total_matches: int
    trace: Annotated[list[dict], operator.add]
