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

from typing import Any

from grepgraph.retrievers.core.results import RESULT_FIELDS
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field, field_validator, model_validator

from .search_input import Focus, Mode, field_problem, limit_problem, pydantic_field

METADATA_KEYS = tuple(key for key in RESULT_FIELDS if key != "snippet")  # the snippet is the page content


class GrepGraphRetriever(BaseRetriever):
    """Search an indexed repository through the code-search graph.

    The search fields (``limit``, ``focus``, ``intent``, ``mode``, ``paths``, ``languages``) are the
    search input's (:mod:`graphs.search_input`): described and limited there, refused here with its
    messages when the retriever is made; a query over the input's limit is refused by the graph
    (``InvalidSearchInput``), never cut.
    """

    repo: str = ""
    """Repository root. Empty: ``$GREPGRAPH_REPO``, else the working directory (as the graph's ``Context``)."""
    index_dir: str = ""
    """Where the index lives. Empty: ``<repo>/.grepgraph``."""
    limit: int = pydantic_field("limit", constraints=False)
    focus: Focus | None = pydantic_field("focus", constraints=False)
    intent: str | None = pydantic_field("intent", constraints=False)
    mode: Mode = pydantic_field("mode", constraints=False)
    # Empty: every file, every language.
    paths: list[str] = pydantic_field("paths", constraints=False, default_factory=list)
    languages: list[str] = pydantic_field("languages", constraints=False, default_factory=list)
    context: dict[str, Any] = Field(default_factory=dict)
    """Other ``graphs.context.Context`` settings for every run (e.g. ``{"llm_enabled": False}``)."""

    @field_validator("intent", "paths", "languages")
    @classmethod
    def _within_limits(cls, value: Any, info: Any) -> Any:
        problem = field_problem(info.field_name, value)
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _limit_for_mode(self) -> GrepGraphRetriever:
        problem = limit_problem(self.limit, self.mode)
        if problem:
            raise ValueError(problem)
        return self

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
