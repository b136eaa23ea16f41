"""BM25 over pre-tokenised documents, with two interchangeable engines.

Both engines expose the same three verbs — ``build``, ``save``/``load``, ``scores`` —
and return the score of *every* document, so callers can take the top-k, read the
raw top score and its gap (the graph's rerank heuristic needs them), or look up the
lexical score of a document found by vectors.

- ``bm25s`` (default): sparse precomputed scores (Lucene BM25), ~1 ms per query at
  60k documents, saved as numpy arrays.
- ``rank_bm25``: ``BM25Okapi`` (Robertson et al.), scores every document per query
  term, ~100 ms at 60k documents; kept for comparison and users who ask for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

import numpy as np

BM25_K1 = 1.2
BM25_B = 0.75


class LexicalIndex(Protocol):
    """What the searcher needs from a BM25 engine."""

    engine: str

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every document, in build order."""
        ...

    def knows(self, token: str) -> bool:
        """Whether some document holds ``token``."""
        ...

    def save(self, directory: Path) -> None:
        """Persist the index under ``directory``."""
        ...


class Bm25sIndex:
    """BM25 (Lucene variant) on ``bm25s``' sparse score matrix."""

    engine = "bm25s"

    def __init__(self, model) -> None:  # noqa: D107
        self._model = model
        self._vocab = model.vocab_dict

    @classmethod
    def build(cls, documents: list[list[str]]) -> Bm25sIndex:
        """Index tokenised documents (empty documents are allowed)."""
        import bm25s

        model = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
        model.index([doc or [""] for doc in documents], show_progress=False)
        return cls(model)

    def scores(self, query_tokens: list[str]) -> np.ndarray:  # noqa: D102
        known = [t for t in query_tokens if t in self._vocab]
        if not known:
            return np.zeros(self._model.scores["num_docs"], dtype=np.float32)
        return self._model.get_scores(known)

    def knows(self, token: str) -> bool:  # noqa: D102
        return token in self._vocab

    def save(self, directory: Path) -> None:  # noqa: D102
        self._model.save(str(directory), show_progress=False)

    @classmethod
    def load(cls, directory: Path) -> Bm25sIndex:
        """Load an index saved by :meth:`save` (memory-mapped)."""
        import bm25s

        return cls(bm25s.BM25.load(str(directory), mmap=True, show_progress=False))


class RankBm25Index:
    """BM25Okapi from ``rank_bm25`` (Robertson & Zaragoza, 2009)."""

    engine = "rank_bm25"

    def __init__(self, documents: list[list[str]]) -> None:  # noqa: D107
        from rank_bm25 import BM25Okapi

        self._documents = documents
        self._model = BM25Okapi([doc or [""] for doc in documents], k1=BM25_K1, b=BM25_B)

    @classmethod
    def build(cls, documents: list[list[str]]) -> RankBm25Index:
        """Index tokenised documents."""
        return cls(documents)

    def scores(self, query_tokens: list[str]) -> np.ndarray:  # noqa: D102
        return np.asarray(self._model.get_scores(query_tokens), dtype=np.float32)

    def knows(self, token: str) -> bool:  # noqa: D102
        return token in self._model.idf

    def save(self, directory: Path) -> None:  # noqa: D102
        directory.mkdir(parents=True, exist_ok=True)
        # JSON, not pickle: loading an index must never run code, whoever wrote the file.
        (directory / "documents.json").write_text(json.dumps(self._documents))

    @classmethod
    def load(cls, directory: Path) -> RankBm25Index:
        """Rebuild from the saved token lists (rank_bm25 has no persistence of its own)."""
        documents = json.loads((directory / "documents.json").read_text())
        if not isinstance(documents, list) or not all(isinstance(doc, list) for doc in documents):
            raise ValueError(f"{directory / 'documents.json'} is not a list of token lists")
        return cls([[str(token) for token in doc] for doc in documents])


ENGINES: dict[str, type[Bm25sIndex] | type[RankBm25Index]] = {"bm25s": Bm25sIndex, "rank_bm25": RankBm25Index}


def build_lexical_index(engine: str, documents: list[list[str]]) -> LexicalIndex:
    """Build a BM25 index with the named engine (``bm25s`` or ``rank_bm25``)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown bm25_backend {engine!r}; choose one of {sorted(ENGINES)}")
    return ENGINES[engine].build(documents)


def save_lexical_index(index: LexicalIndex, directory: Path) -> None:
    """Save an index with a marker naming its engine."""
    directory.mkdir(parents=True, exist_ok=True)
    index.save(directory)
    (directory / "engine.json").write_text(json.dumps({"engine": index.engine}))


def load_lexical_index(directory: Path) -> LexicalIndex:
    """Load whichever engine saved ``directory``."""
    engine = json.loads((directory / "engine.json").read_text()).get("engine")
    if engine not in ENGINES:
        raise ValueError(f"{directory} holds an unknown BM25 engine {engine!r}; rebuild: grepgraph index --rebuild")
    return ENGINES[engine].load(directory)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest positive scores, best first."""
    if scores.size == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    k = min(k, scores.size)
    candidates = np.argpartition(-scores, k - 1)[:k]
    candidates = candidates[scores[candidates] > 0]
    return candidates[np.argsort(-scores[candidates], kind="stable")]
