"""Run settings of the code-search graph: one dataclass, every field described.

LangGraph Studio renders this as the run's configuration form. Defaults come from,
in increasing priority: the field defaults below, a ``grepgraph.toml`` (``$GREPGRAPH_CONFIG``,
else ``./grepgraph.toml``), environment variables ``GREPGRAPH_<FIELD>``, and finally
what a caller passes as ``graph.invoke(..., context=...)``.
"""

from __future__ import annotations

import os
import time
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, get_type_hints

from retrievers.fusion import DERIVED_QUERY_WEIGHT, ORIGINAL_QUERY_WEIGHT

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

CONFIG_FILENAME = "grepgraph.toml"


def _setting(default: Any, description: str) -> Any:
    return field(default=default, metadata={"description": description})


@dataclass(kw_only=True)
class Context:
    """Settings for one run of the code-search graph."""

    repo: str = _setting("", "Repository to search. Empty: $GREPGRAPH_REPO, else the working directory.")
    index_dir: str = _setting("", "Where the index lives. Empty: <repo>/.grepgraph.")
    chroma_url: str = _setting("", "A Chroma server URL (http://host:port) instead of the embedded database.")
    limit: int = _setting(10, "Results returned when the input does not say.")
    llm_enabled: bool = _setting(True, "Allow the local LLM at all (rewrite and rerank). False: never call it.")
    llm_base_url: str = _setting("http://localhost:11434", "Ollama server URL.")
    llm_model: str = _setting("qwen2.5:3b", "Ollama chat model used for rewriting and reranking.")
    llm_timeout_s: float = _setting(8.0, "Seconds one LLM call may take before search goes on without it.")
    llm_retry_after_s: float = _setting(
        30.0, "After the LLM was unreachable or failed, seconds before it is tried again (no per-query timeouts)."
    )
    rewrite_min_content_words: int = _setting(3, "A question needs at least this many content words to be rewritten.")
    rewrite_stopword_ratio: float = _setting(
        0.45, "Prose with more function words (a, the, of, is...) than this share is rewritten."
    )
    rewrite_long_query_words: int = _setting(60, "Inputs longer than this (issue reports) are rewritten.")
    strong_lexical_score: float = _setting(
        8.0, "BM25 top score at or above which (with a clear gap) the query is already well matched."
    )
    strong_lexical_gap_ratio: float = _setting(
        0.2, "Relative gap (top - second) / top that, with a strong top score, makes rewriting or reranking pointless."
    )
    rerank_top_n: int = _setting(20, "Candidates shown to the LLM reranker.")
    rerank_snippet_chars: int = _setting(500, "Characters of each candidate shown to the reranker.")
    rerank_keep_weight: float = _setting(
        0.7, "How much of the fused order the top ranks keep after reranking (0: LLM order only, 1: ignore the LLM)."
    )
    max_sub_queries: int = _setting(4, "Most sub-queries a multi-part question is split into.")
    focus_demotion: float = _setting(0.5, "Score factor for results outside the focus (tests vs implementation).")
    original_query_weight: float = _setting(
        ORIGINAL_QUERY_WEIGHT, "RRF weight of the lists retrieved for the original query.")
    derived_query_weight: float = _setting(DERIVED_QUERY_WEIGHT, "RRF weight of lists from rewrites and sub-queries.")


def _coerce(value: Any, annotation: Any) -> Any:
    kind = annotation if isinstance(annotation, type) else type(annotation)
    if annotation in (bool, "bool"):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"expected true/false, got {value!r}")
    if annotation in (int, "int"):
        return int(value)
    if annotation in (float, "float"):
        return float(value)
    return str(value) if kind is not dict else value


def config_file() -> Path | None:
    """The TOML config in use: ``$GREPGRAPH_CONFIG`` or ``./grepgraph.toml`` if present."""
    explicit = os.environ.get("GREPGRAPH_CONFIG")
    if explicit:
        return Path(explicit)
    local = Path.cwd() / CONFIG_FILENAME
    return local if local.is_file() else None


def load_overrides(path: Path | None = None, environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Settings from the TOML file (its ``[grepgraph]`` table or top level) and ``GREPGRAPH_*`` variables."""
    environ = dict(os.environ) if environ is None else environ
    hints = get_type_hints(Context)
    names = {f.name for f in fields(Context)}
    values: dict[str, Any] = {}
    path = path or config_file()
    if path is not None:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
        table = data.get("grepgraph", data)
        unknown = sorted(set(table) - names)
        if unknown:
            raise ValueError(f"{path}: unknown setting(s) {', '.join(unknown)}")
        for key, value in table.items():
            try:
                values[key] = _coerce(value, hints[key])
            except (TypeError, ValueError) as error:
                raise ValueError(f"{path}: {key} = {value!r}: {error}") from None
    for name in names:
        raw = environ.get(f"GREPGRAPH_{name.upper()}")
        if raw is not None:
            try:
                values[name] = _coerce(raw, hints[name])
            except ValueError as error:
                raise ValueError(f"GREPGRAPH_{name.upper()}={raw!r}: {error}") from None
    return values


# Every node resolves the context; re-reading the file and environment at most once a second
# keeps that off the hot path while edits to grepgraph.toml still apply without a restart.
OVERRIDES_TTL_S = 1.0
_overrides_cache: dict[str, Any] = {}


def cached_overrides() -> dict[str, Any]:
    """:func:`load_overrides`, re-read at most every ``OVERRIDES_TTL_S`` seconds."""
    now = time.monotonic()
    environ = {k: v for k, v in os.environ.items() if k.startswith("GREPGRAPH_")}
    cached = _overrides_cache.get("value")
    if cached is None or now - _overrides_cache["at"] > OVERRIDES_TTL_S or _overrides_cache["environ"] != environ:
        cached = load_overrides()
        _overrides_cache.update(value=cached, at=now, environ=environ)
    return dict(cached)


def resolve_context(context: Context | dict | None = None) -> Context:
    """Defaults, then file and environment, then the caller's explicit values; repo made absolute."""
    merged = cached_overrides()
    if isinstance(context, Context):
        explicit = {f.name: getattr(context, f.name) for f in fields(Context)
                    if getattr(context, f.name) != _default(f)}
    else:
        explicit = dict(context or {})
    merged.update({k: v for k, v in explicit.items() if v is not None})
    unknown = sorted(set(merged) - {f.name for f in fields(Context)})
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
    resolved = Context(**merged)
    if not resolved.repo:
        resolved.repo = os.environ.get("GREPGRAPH_REPO") or os.getcwd()
    return resolved


def _default(f: Any) -> Any:
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else None


def describe_settings() -> list[tuple[str, Any, str]]:
    """``(name, default, description)`` of every setting (for ``grepgraph init`` and docs)."""
    return [(f.name, _default(f), f.metadata.get("description", "")) for f in fields(Context)]
