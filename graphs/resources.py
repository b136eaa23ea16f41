"""Long-lived things the nodes share: one searcher per index, one LLM gateway per setting."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from .context import Context
from .llm import LLMGateway

_searchers: dict[tuple[str, str, str], Searcher] = {}
_shared_indexes: dict[tuple[Path, Path], CodeIndex] = {}
_lock = threading.Lock()


def share_index(index: CodeIndex) -> None:
    """Searchers of ``index``'s repository and folder read through this very object from now on.

    The resident service's watcher writes through it: its searches then see new vectors in the Chroma
    client that stored them, instead of loading the database again after every change.
    """
    with _lock:
        _shared_indexes[(index.repo, index.index_dir)] = index


def get_searcher(context: Context) -> Searcher:
    """The cached searcher for the context's index (opened on first use; raises if there is no index)."""
    key = (context.repo, context.index_dir, context.chroma_url)
    with _lock:
        searcher = _searchers.get(key)
        if searcher is None:
            index = CodeIndex(context.repo, context.index_dir or None, chroma_url=context.chroma_url or None)
            if not context.chroma_url:
                index = _shared_indexes.get((index.repo, index.index_dir), index)
            searcher = Searcher(index)
            _searchers[key] = searcher
        return searcher


def forget_searchers() -> None:
    """Close every cached searcher (tests; after deleting an index)."""
    with _lock:
        for searcher in _searchers.values():
            searcher.close()
        _searchers.clear()
        _shared_indexes.clear()


def get_gateway(context: Context, chat_model: Any | None = None) -> LLMGateway:
    """An LLM gateway for the context's settings (cheap; reachability state is shared)."""
    return LLMGateway(context.llm_base_url, context.llm_model, context.llm_timeout_s,
                      context.llm_retry_after_s, chat_model=chat_model, provider=context.llm_provider,
                      api_key=context.llm_api_key)
