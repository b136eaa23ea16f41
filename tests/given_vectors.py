"""A vector store whose vectors are all given by the test: Chroma itself, no embedding model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from grepgraph.retrievers.dense.minilm import MINILM_MODEL_ID
from grepgraph.retrievers.dense.vectors import VectorStore, open_chroma_client

DIMENSION = 384  # MiniLM's


class GivenVectors:
    """The store's embedder where every vector is given: Chroma is never asked to embed a text."""

    model_id = MINILM_MODEL_ID
    dimension = DIMENSION

    def embed(self, texts: list[str]) -> np.ndarray:
        raise AssertionError(f"asked to embed {len(texts)} texts; every vector was given")


def random_vectors(count: int, seed: int) -> np.ndarray:
    """Random vectors of MiniLM's size, the same for a seed."""
    return np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)


def given_store(chroma_dir: Path, namespace: str) -> VectorStore:
    """A store of card vectors in an embedded Chroma database at ``chroma_dir``."""
    return VectorStore(open_chroma_client(chroma_dir), GivenVectors(), namespace, ("card",))
