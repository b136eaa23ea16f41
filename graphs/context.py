"""Run settings of the code-search graph: one dataclass, every field described.

LangGraph Studio renders this as the run's configuration form. Each field takes, in
decreasing priority, what a caller passes as ``graph.invoke(..., context=...)``, the
environment variable ``GREPGRAPH_<FIELD>``, ``grepgraph.toml`` (``$GREPGRAPH_CONFIG``, else
the repository's), and the default below. The layers are decided in
:mod:`retrievers.core.settings`; this module only names the fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from grepgraph.graphs.heuristics import REPORT_WORDS
from grepgraph.retrievers.core.run_settings import DEFAULT_LLM_BASE_URL, default_repo
from grepgraph.retrievers.core.settings import (
    RUN_TABLE,
    default_of,
    environment,
    file_settings,
    layered,
    schema_fields,
)
from grepgraph.retrievers.core.settings import setting as _setting
from grepgraph.retrievers.rank.ranking import FOCUS_DEMOTION


@dataclass(kw_only=True)
class Context:
    """Settings for one run of the code-search graph.

    An instance remembers which fields its caller gave (``Context(limit=10)``: ``limit``, even though
    10 is the default), so a value equal to the default still outranks the environment and the file.
    """

    repo: str = _setting("", "Repository to search. Empty: $GREPGRAPH_REPO, else the working directory.")
    index_dir: str = _setting("", "Where the index lives. Empty: <repo>/.grepgraph.")
    chroma_url: str = _setting("", "A Chroma server URL (http://host:port) instead of the embedded database.")
    limit: int = _setting(10, "Results returned when the input does not say.")
    llm_enabled: bool = _setting(True, "Allow the local LLM at all (rewrite and rerank). False: never call it.")
    llm_provider: str = _setting(
        "ollama", "How to talk to the LLM server: ollama (its /api/chat) or openai (any OpenAI-compatible "
                  "/v1/chat/completions: llama.cpp's server, LM Studio, vLLM, a hosted endpoint).",
        ("ollama", "openai"))
    llm_base_url: str = _setting(
        DEFAULT_LLM_BASE_URL, "LLM server URL: Ollama's (also for ollama:<model> embeddings), or an OpenAI-compatible "
                              "base URL ending in /v1 (llama.cpp: http://127.0.0.1:8080/v1).")
    llm_model: str = _setting("qwen2.5-coder:1.5b", "Chat model used for rewriting and reranking (Ollama tag, or the "
                                                    "OpenAI-compatible server's model name).")
    llm_api_key: str = _setting(
        "", "API key for an OpenAI-compatible endpoint that needs one (set GREPGRAPH_LLM_API_KEY; never logged or "
            "traced). Empty: none is sent.", secret=True)
    llm_timeout_s: float = _setting(
        20.0, "Seconds one LLM call may take before search goes on without it (a 1.5B model on 2 busy CPU cores "
              "answered the zero-result rewrite in 2-5 s idle, up to 22 s under load; see docs/llm-stages.md).")
    llm_retry_after_s: float = _setting(
        30.0, "After the LLM was unreachable or failed, seconds before it is tried again (no per-query timeouts)."
    )
    run_timeout_s: float = _setting(
        0.0, "Seconds a whole search may take (0: no bound): nodes stop the run once it has passed, and LLM "
             "calls are cut to end before it.")
    auto_rewrite: bool = _setting(
        False, "Let the heuristics send queries to the LLM rewrite (off: only rewrite=True or zero results call it; "
               "measured on a 1.5B local model it did not pay, see docs/llm-stages.md).")
    auto_rerank: bool = _setting(
        False, "Let the heuristics send queries to the LLM rerank (off: only rerank=True calls it; measured on a "
               "1.5B local model it did not pay, see docs/llm-stages.md).")
    rewrite_min_content_words: int = _setting(3, "A question needs at least this many content words to be rewritten.")
    rewrite_stopword_ratio: float = _setting(
        0.45, "Prose with more function words (a, the, of, is...) than this share is rewritten."
    )
    rewrite_long_query_words: int = _setting(REPORT_WORDS, "Inputs longer than this (issue reports) are rewritten.")
    strong_lexical_score: float = _setting(
        8.0, "BM25 top score at or above which (with a clear gap) the query is already well matched."
    )
    strong_lexical_gap_ratio: float = _setting(
        0.2, "Relative gap (top - second) / top that, with a strong top score, makes rewriting or reranking pointless."
    )
    rerank_top_n: int = _setting(8, "Candidates shown to the LLM reranker.")
    rerank_snippet_chars: int = _setting(
        160, "Characters of each candidate's card (signature and docstring summary) shown to the reranker.")
    llm_query_chars: int = _setting(
        600, "Characters of the query the LLM is shown; a longer input (an issue report) is cut to its opening, "
             "error lines and the code names it mentions.")
    rerank_keep_weight: float = _setting(
        0.7, "How much of the fused order the top ranks keep after reranking (0: LLM order only, 1: ignore the LLM)."
    )
    max_sub_queries: int = _setting(4, "Most sub-queries a multi-part question is split into.")
    focus_demotion: float = _setting(
        FOCUS_DEMOTION, "Score factor for results outside the focus (tests under implementation, and docs once more; "
                        "the rest under tests) in grep; the learned ranking weighs the "
                        "focus with its own fitted factor.")

    def __new__(cls, **given: Any) -> Context:
        """Note which fields the caller set (LangGraph builds the context as ``Context(**context)``)."""
        instance = super().__new__(cls)
        instance.__dict__["_given"] = frozenset(given)
        return instance


def given_values(context: Context | Mapping[str, Any] | None) -> dict[str, Any]:
    """The settings a caller set: a mapping's keys, or the fields a :class:`Context` was built with.

    A field changed after construction counts too (it differs from its default).
    """
    if context is None:
        return {}
    if not isinstance(context, Context):
        return dict(context)
    given = context.__dict__.get("_given", frozenset())
    return {name: getattr(context, name) for name, default in _DEFAULTS.items()
            if name in given or getattr(context, name) != default}


_DEFAULTS = {f.name: default_of(f) for f in schema_fields(Context)}


def resolve_context(context: Context | Mapping[str, Any] | None = None) -> Context:
    """Every setting from the first layer that has it: caller, environment, ``grepgraph.toml``, default.

    The file is the repository's own ``grepgraph.toml`` (or ``$GREPGRAPH_CONFIG``), so the repository is
    settled first: the caller's, else ``$GREPGRAPH_REPO``, else ``$GREPGRAPH_CONFIG``'s ``repo``, else cwd.
    """
    given = given_values(context)
    environ = environment()
    repo = given.get("repo") or default_repo(environ)
    file_values, path = file_settings(repo, RUN_TABLE, environ)
    values, _ = layered(Context, {**given, "repo": repo}, environ, file_values, path)
    return Context(**values)


def describe_settings() -> list[tuple[str, Any, str]]:
    """``(name, default, description)`` of every setting (for ``grepgraph init`` and docs)."""
    return [(f.name, default_of(f), f.metadata.get("description", "")) for f in fields(Context)]

