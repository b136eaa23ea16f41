"""``GrepGraphRetriever``: the code-search graph as a LangChain retriever.

A thin adapter: each call runs ``graphs.code_search.graph`` and turns its results into
``Document`` objects (``page_content`` is the snippet; ``metadata`` has ``path``, ``start_line``,
``end_line``, ``symbol``, ``kind``, ``score``, plus ``line``/``relation``/``via`` for answers from
the symbol graph). The async path is LangChain's default (the sync search in an executor).

    from grepgraph.graphs.retriever import GrepGraphRetriever

    retriever = GrepGraphRetriever(repo="/path/to/repo", limit=5, context={"llm_enabled": False})
    docs = retriever.invoke("where are call edges written?")
    todos = GrepGraphRetriever(repo="/path/to/repo", mode="regex", paths=["src/**"]).invoke(r"TODO|FIXME")
"""

from __future__ import annotations

from typing import Any, Literal

from grepgraph.retrievers.core.results import RESULT_FIELDS
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

METADATA_KEYS = tuple(key for key in RESULT_FIELDS if key != "snippet")  # the snippet is the page content


class GrepGraphRetriever(BaseRetriever):
    """Search an indexed repository through the code-search graph."""

    repo: str = ""
    """Repository root. Empty: ``$GREPGRAPH_REPO``, else the working directory (as the graph's ``Context``)."""
    index_dir: str = ""
    """Where the index lives. Empty: ``<repo>/.grepgraph``."""
    limit: int = Field(default=10, ge=1, le=100)
    """Documents returned per query."""
    focus: Literal["implementation", "tests", "all"] | None = None
    """Prefer implementation or test files. ``None``: guessed from the query."""
    intent: str | None = None
    """Background that steers ambiguous queries."""
    mode: Literal["auto", "literal", "regex"] = "auto"
    """``auto``: ranked search; ``literal`` / ``regex``: every matching line, definitions first."""
    paths: list[str] = Field(default_factory=list)
    """Only files these globs match (``["src/**", "!**/vendor/**"]``). Empty: every file."""
    languages: list[str] = Field(default_factory=list)
    """Only files in these languages (``["python", "go"]``). Empty: every language."""
    context: dict[str, Any] = Field(default_factory=dict)
    """Other ``graphs.context.Context`` settings for every run (e.g. ``{"llm_enabled": False}``)."""

    def search_input(self, query: str) -> dict[str, Any]:
        """The graph input for ``query``."""
        request: dict[str, Any] = {"query": query, "limit": self.limit}
        if self.focus:
            request["focus"] = self.focus
        if self.intent:
            request["intent"] = self.intent
        if self.mode != "auto":
            request["mode"] = self.mode
        if self.paths:
            request["paths"] = list(self.paths)
        if self.languages:
            request["languages"] = list(self.languages)
        return request

    def run_context(self) -> dict[str, Any]:
        """The graph's ``context`` for every run: the overrides, then ``repo`` and ``index_dir`` if set."""
        context = dict(self.context)
        if self.repo:
            context["repo"] = self.repo
        if self.index_dir:
            context["index_dir"] = self.index_dir
        return context

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        from .code_search import graph

        output = graph.invoke(self.search_input(query), {"callbacks": run_manager.get_child()},
                              context=self.run_context())
        return [to_document(result) for result in output["results"]]


def to_document(result: dict[str, Any]) -> Document:
    """One graph result as a ``Document``."""
    metadata = {key: result[key] for key in METADATA_KEYS if key in result}
    return Document(page_content=result.get("snippet") or "", metadata=metadata)
