"""The graph's input, output and internal state.

Uses ``typing_extensions.TypedDict`` (LangServe on Python 3.11 rejects ``typing``'s).
List fields that parallel branches write get reducers that merge and de-duplicate.
"""

from __future__ import annotations

import operator
from typing import Annotated, Literal

from typing_extensions import NotRequired, Required, TypedDict

from retrievers.results import CodeResult

Focus = Literal["implementation", "tests", "all"]
# auto: ranked search (hybrid, graph questions, exact-line evidence); literal / regex: every matching line.
Mode = Literal["auto", "literal", "regex"]


class SearchInput(TypedDict, total=False):
    """What a caller sends. Only ``query`` is required.

    ``mode`` ``literal`` or ``regex`` makes ``query`` a pattern matched line by line; ``paths``
    (gitignore-style globs) and ``languages`` keep only the files they match, in every mode.
    """

    query: Required[str]
    mode: Mode
    paths: list[str]
    languages: list[str]
    limit: int
    intent: str
    focus: Focus
    rewrite: bool
    rerank: bool
    keywords: list[str]
    concepts: list[str]
    passage: str


class SearchOutput(TypedDict):
    """What a caller gets back: ranked results and a trace of every node's decision."""

    results: list[CodeResult]
    trace: list[dict]
    total_matches: NotRequired[int]


class RetrievalTask(TypedDict):
    """One retrieval fanned out with ``Send``: a query variant and its fusion weight."""

    label: str
    query: str
    keywords: list[str]
    dense_text: str
    weight: float
    depth: int
    paths: list[str]
    languages: list[str]
    index_generation: NotRequired[str]
    deadline: NotRequired[float]


def merge_candidate_lists(left: list[dict] | None, right: list[dict] | None) -> list[dict]:
    """Combine lists written by parallel ``retrieve`` branches; a later list replaces one with the same label."""
    merged = {entry["label"]: entry for entry in (left or [])}
    for entry in right or []:
        merged[entry["label"]] = entry
    return list(merged.values())


class SearchState(SearchInput, total=False):
    """Everything the nodes read and write: the input plus what the nodes decide and find."""

    graph_question: NotRequired[dict | None]
    lexical_probe: dict
    # The index generation the run's first search saw; its later searches ask for the same one.
    index_generation: str
    # When the run must stop (``time.time()`` seconds), from ``run_timeout_s``; absent: no bound.
    deadline: float
    rewrite_decision: bool
    rewrite_terms: list[str]
    rewrite_attempts: int
    sub_queries: list[str]
    query_weights: dict
    candidate_lists: Annotated[list[dict], merge_candidate_lists]
    fused: list[dict]
    rerank_decision: bool
    results: list[CodeResult]
    total_matches: int
    trace: Annotated[list[dict], operator.add]
