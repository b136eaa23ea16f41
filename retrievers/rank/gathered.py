"""What one query found in one snapshot before ranking, and the BM25 signal the graph's heuristics read."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .learned import PoolRow, QueryShape, candidate_columns


@dataclass
class LexicalSignal:
    """What the rerank/rewrite heuristics need from BM25 (the raw top score and its gap), and why vectors were not used.

    ``generation`` names the index generation searched.
    ``vectors_note`` is empty unless the query wanted vectors and could not have them (a Chroma
    server down): the ranking then rests on BM25, symbols and mentions, and callers can say so.
    ``fallbacks`` names every other way the search did with less than it wanted (no vectors yet, a
    vector store out of date), for the caller's trace. ``ranking`` says what ranked the hits: the learned blend, or
    the caller's own weights.
    """

    top_score: float = 0.0
    second_score: float = 0.0
    candidates: int = 0
    vectors_note: str = ""
    generation: str = ""
    fallbacks: list[str] = field(default_factory=list)
    ranking: str = ""


@dataclass
class Gathered:
    """What one query found in one snapshot before ranking: the pool and every evidence on it.

    ``rows`` (path, symbol, kind, lines, language of every pooled chunk) is read for the learned blend only, with
    ``words`` (the query words a name may use); ``weights`` are a caller's own (every evidence at 1 when the learned
    blend ranks, as all of it is gathered then).
    """

    components: dict[str, dict[int, float]]
    pool: set[int]
    rows: dict[int, PoolRow]
    exceptions: dict[int, str]
    subclasses: set[str]
    shape: QueryShape
    words: set[str]
    weights: dict[str, float]
    cosines: bool
    signal: LexicalSignal
    unembedded: set[int] = field(default_factory=set)  # pooled chunks without a card vector (neutral cosine)

    def columns(self, kind_priors: bool, focus: str = "implementation") -> tuple[list[int], dict[str, np.ndarray]]:
        """The pool in a fixed order and the learned blend's columns for it (no subclasses without kind priors)."""
        ids = sorted(self.pool)
        return ids, candidate_columns(ids, self.rows, self.components, self.shape, self.exceptions,
                                      self.subclasses if kind_priors else set(), self.words, focus, self.unembedded)
