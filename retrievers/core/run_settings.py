"""The few run settings code outside a graph run needs (the graph's own are ``graphs.context.Context``).

Embedding through Ollama while indexing needs the server's URL; the command line and the servers need the
repository when none is given. Both are read like any run setting: the environment, else ``grepgraph.toml``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .settings import outside_value

DEFAULT_LLM_BASE_URL = "http://localhost:11434"


def ollama_url(repo: Path | str | None = None) -> str:
    """The Ollama server for embeddings outside a graph run: the ``llm_base_url`` setting (environment, file)."""
    return outside_value("llm_base_url", repo) or DEFAULT_LLM_BASE_URL


def default_repo(environ: Mapping[str, str] | None = None) -> str:
    """The repository when none is given: ``$GREPGRAPH_REPO``, else ``$GREPGRAPH_CONFIG``'s ``repo``, else cwd."""
    return outside_value("repo", None, environ=environ) or os.getcwd()
