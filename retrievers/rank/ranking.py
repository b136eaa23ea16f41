"""What every ranking shares: the candidate depths, the evidence caps, the focus rule and the hit record.

The weights live in the learned blend's files (:mod:`retrievers.rank.learned`, fitted by
``training/fit_blend.py``); what stays here sizes the pool it ranks and the evidence gathered on it.
:mod:`retrievers.rank.hits` reads the rows and :class:`retrievers.rank.search.Searcher` gathers the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.results import CodeResult, code_result

# Each candidate list (BM25's, each vector view's) before blending.
CANDIDATES = 100
# Ranked candidates kept before the cut; the graph's retrieve asks for as many, so its rerank window (20) and
# fusion have room (see candidate_depth).
CANDIDATE_DEPTH = 50
# The code names of a query looked up as symbols, in order of appearance (a report's title names come first).
MAX_QUERY_SYMBOLS = 12
# The definitions a long query names most surely (at most this many) lend evidence to their callers.
MAX_CALL_ANCHORS = 6
# Call sites of one anchor resolved at most: a name called everywhere costs no more than a rare one.
MAX_CALL_SITES = 40
# Out of focus (a test under ``implementation``, the rest under ``tests``) a score takes this factor; so do
# documentation and config windows under ``implementation`` (not implementation either), once more. The learned
# blend weighs the focus with its own fitted factor; grep and a caller's own weights use this one.
FOCUS_DEMOTION = 0.5
# "Raised when ...": the exception types of the repository join the candidates (up to this many).
MAX_EXCEPTION_CANDIDATES = 400

@dataclass
class Hit:
    """One ranked chunk with the evidence behind its score."""

    chunk_id: int
    score: float
    path: str = ""
    start_line: int = 0
    end_line: int = 0
    symbol: str = ""
    kind: str = ""
    language: str = ""
    is_test: bool = False
    text: str = ""
    signature: str = ""
    docstring: str = ""
    components: dict = field(default_factory=dict)

    def to_result(self, snippet: str = "") -> CodeResult:
        """The public result shape (:class:`retrievers.core.results.CodeResult`)."""
        return code_result(self.path, self.start_line, self.end_line, self.symbol, self.kind, self.score, snippet)


def collapse_duplicates(hits: list[Hit]) -> list[Hit]:
    """Best first, one hit per (path, symbol): overloads and re-definitions collapse to the best."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for hit in sorted(hits, key=lambda h: -h.score):
        key = (hit.path, hit.symbol)
        if key not in seen:
            seen.add(key)
            unique.append(hit)
    return unique


def candidate_depth(limit: int) -> int:
    """How many blended candidates a search of ``limit`` results ranks before its cut."""
    return max(limit * 2, CANDIDATE_DEPTH)


def focus_factor(focus: str, is_test: bool, is_doc: bool, demotion: float = FOCUS_DEMOTION) -> float:
    """The score factor of a result under a focus: tests and docs demoted for implementation, the rest for tests.

    The one focus rule: the searcher ranks with it, ``grep`` orders files with it, and the graph passes
    its ``focus_demotion`` setting to both.
    """
    factor = 1.0
    if (focus == "implementation" and is_test) or (focus == "tests" and not is_test):
        factor *= demotion
    if focus == "implementation" and is_doc:
        factor *= demotion
    return factor
