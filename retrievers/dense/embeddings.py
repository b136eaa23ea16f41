"""The embedder an index's ``embedding_model`` setting names: a bundled MiniLM (offline) or an Ollama model.

The models themselves live in :mod:`~retrievers.dense.minilm` and :mod:`~retrievers.dense.ollama`.
"""

from __future__ import annotations

from ..core.run_settings import DEFAULT_LLM_BASE_URL
from .minilm import CODE_MINILM_QUERY_MODEL_ID, MiniLMEmbedder, shared_embedder
from .ollama import OllamaEmbedder

# Names of the bundled ones in the embedding_model setting (the default: core.index_settings.DEFAULT_EMBEDDING_MODEL).
MINILM, MINILM_QUANTIZED, CODE_MINILM = "minilm", "minilm-quantized", "code-minilm"
CODE_MINILM_QUANTIZED = "code-minilm-quantized"
BUNDLED = (MINILM, MINILM_QUANTIZED, CODE_MINILM, CODE_MINILM_QUANTIZED)


def embedder_for(name: str, ollama_url: str = DEFAULT_LLM_BASE_URL) -> MiniLMEmbedder | OllamaEmbedder:
    """The embedder an index setting names.

    ``code-minilm-quantized`` (the default), ``code-minilm``, ``minilm``, ``minilm-quantized`` (bundled, offline)
    or ``ollama:<model>``.
    """
    if name in BUNDLED:
        return shared_embedder(quantized=name.endswith("-quantized"), code=name.startswith("code-"))
    if name.startswith("ollama:") and len(name) > len("ollama:"):
        return OllamaEmbedder(name.split(":", 1)[1], ollama_url)
    raise ValueError(
        f"unknown embedding model {name!r}; use 'minilm', 'minilm-quantized', 'code-minilm', "
        "'code-minilm-quantized' or 'ollama:<model>'"
        " (e.g. ollama:nomic-embed-text)"
    )


def query_model_for(name: str) -> str:
    """What embeds a query under the setting ``name``: the code models' query tower, else the setting's model."""
    return CODE_MINILM_QUERY_MODEL_ID if name in (CODE_MINILM, CODE_MINILM_QUANTIZED) else name
