"""The thin LangChain adapter of the core: grepgraph's embedder as a LangChain ``Embeddings``.

Lets a LangChain app (a ``Chroma`` vector store, a semantic cache) embed with exactly the
offline model grepgraph indexes with. The retriever over the whole search graph is
``graphs.retriever.GrepGraphRetriever``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings

from .core.index_settings import DEFAULT_EMBEDDING_MODEL
from .core.run_settings import ollama_url
from .dense.embeddings import embedder_for


class GrepGraphEmbeddings(Embeddings):
    """``Embeddings`` backed by grepgraph's embedder (the index's default, a bundled model or ``ollama:<model>``)."""

    def __init__(self, model: str = DEFAULT_EMBEDDING_MODEL, embedder: Any | None = None,  # noqa: D107
                 base_url: str | None = None) -> None:
        self.embedder = embedder or embedder_for(model, base_url or ollama_url())

    def embed_documents(self, texts: list[str]) -> list[list[float]]:  # noqa: D102
        return self.embedder.embed(texts).tolist()

    def embed_query(self, text: str) -> list[float]:  # noqa: D102
        return self.embedder.embed_query(text).tolist()
