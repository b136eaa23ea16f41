"""The settings an index is built with: its schema, and how the next ``index`` run settles them.

They are stored in the index and reused by every later run; ``grepgraph status`` reports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .settings import INDEX_TABLE, default_of, environment, file_settings, layered, setting

# Where a repository's index lives unless told otherwise: <repo>/.grepgraph.
INDEX_DIRNAME = ".grepgraph"
# What a new index embeds with (an index keeps the model it was built with): grepgraph's code-trained MiniLM,
# quantized (retrievers/dense/data/MODEL_CARD-code-minilm.md: better than all-MiniLM-L6-v2 in every language
# of the validation packages, ~2.8x as many texts a second).
DEFAULT_EMBEDDING_MODEL = "code-minilm-quantized"
# Files larger than this are not indexed (the default of the max_file_bytes index setting). Named here, not in
# walk.py: reading settings must stay cheap for the command-line client, which never walks a repository.
MAX_FILE_BYTES = 1_000_000


@dataclass
class IndexSettings:
    """Settings an index is built with; they are stored in the index and reused by every later run."""

    bm25_backend: str = setting("bm25s", "BM25 engine.", ("bm25s", "rank_bm25"))
    embedding_model: str = setting(
        DEFAULT_EMBEDDING_MODEL, "Embedding model: code-minilm-quantized (bundled, offline: MiniLM fine-tuned on "
        "code by grepgraph, quantized), code-minilm (the same unquantized, ~2.5x slower to embed), "
        "minilm (all-MiniLM-L6-v2, bundled; the default before 2026-11-26), minilm-quantized "
        "or ollama:<model>, e.g. ollama:nomic-embed-text.")
    views: str = setting("auto", "What to embed per chunk (auto: card+code up to 25k chunks, cards above).",
                         ("auto", "card", "card+code"))
    embed_tests: str = setting("auto", "Vectors for test files (auto: a card vector, no code vector, up to 25k "
                               "chunks; always: both views).",
                               ("auto", "always", "never"))
    max_file_bytes: int = setting(MAX_FILE_BYTES, "Files larger than this are not indexed.")

    def rebuild_key(self) -> dict:
        """The settings the stored chunks depend on: changing one rebuilds the index.

        ``views`` and ``embed_tests`` are not among them: changing those only adds or drops vectors.
        """
        return {"bm25_backend": self.bm25_backend, "embedding_model": self.embedding_model,
                "max_file_bytes": self.max_file_bytes}

    def to_dict(self) -> dict:
        """Every field, as stored in the index."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def describe_index_settings() -> list[tuple[str, Any, str]]:
    """``(name, default, description)`` of every index setting (for ``grepgraph init`` and docs)."""
    return [(f.name, default_of(f), f.metadata["description"]) for f in fields(IndexSettings)]


def resolve_index_settings(repo: Path | str, given: Mapping[str, Any] | None = None,
                           stored: IndexSettings | None = None,
                           environ: Mapping[str, str] | None = None) -> tuple[IndexSettings, dict[str, str]]:
    """The settings the next ``index`` run uses, and where each came from.

    Args:
        repo: The repository (its ``grepgraph.toml`` is read).
        given: Command-line values (``None``: not given).
        stored: What the index was built with (``None``: no index yet).
        environ: The ``GREPGRAPH_*`` variables (default: the process's).
    """
    environ = environment() if environ is None else environ
    file_values, path = file_settings(repo, INDEX_TABLE, environ)
    values, sources = layered(IndexSettings, given or {}, environ, file_values, path,
                              stored.to_dict() if stored else None)
    return IndexSettings(**values), sources
