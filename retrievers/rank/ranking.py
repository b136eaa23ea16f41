"""The ranking policy: blend weights, evidence bonuses, the kind priors and type lifts, focus demotion.

Every tuning constant of the searcher's ranking is named here (one place to read and to change), with the
pure rules that apply them; :mod:`retrievers.rank.hits` reads the rows they need and
:class:`retrievers.rank.search.Searcher` gathers the evidence. What makes a type an exception is
:func:`retrievers.lexical.tokenize.is_exception_name`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.model import TYPE_KINDS
from ..core.results import CodeResult, code_result
from ..query.parsing import reads_as_prose
from ..query.shape import is_question

LEXICAL_CANDIDATES = 100
DENSE_CANDIDATES = 100
# Blended candidates kept for the type lifts and demotions, which can raise a hit from below the limit; the
# graph's retrieve asks for as many, so its rerank window (20) and fusion have room (see candidate_depth).
CANDIDATE_DEPTH = 50
WEIGHTS = {"card": 0.5, "code": 0.4, "bm25": 0.1, "symbol": 0.25, "mention": 0.3, "name": 0.15, "calls": 0.0,
           "message": 0.3, "invoked": 0.3}
# The code names of a query looked up as symbols, in order of appearance (a report's title names come first).
MAX_QUERY_SYMBOLS = 12
# The definitions a long query names most surely (at most this many) lend evidence to their callers.
MAX_CALL_ANCHORS = 6
# Call sites of one anchor resolved at most: a name called everywhere costs no more than a rare one.
MAX_CALL_SITES = 40
SYMBOL_EXACT_BONUS = 1.0
SYMBOL_PREFIX_BONUS = 0.4
# Out of focus (a test under ``implementation``, the rest under ``tests``) the score takes this factor; so
# do documentation and config windows under ``implementation`` (not implementation either), once more.
FOCUS_DEMOTION = 0.5
# A query worded like a type's description ("Raised when ...", "A field that ...") lifts types this much.
TYPE_DESCRIPTION_BONUS = 0.3
# Before that bonus, such a type is worth at least this share of its best-matching member's score: a class
# is described by what its methods do.
MEMBER_EVIDENCE = 0.9
# "Checker which passes if ..." describes a kind of Checker: its subclasses are lifted this much.
SUBCLASS_BONUS = 0.15
# "Raised when ...": the exception types of the repository join the candidates and are lifted this much more.
EXCEPTION_BONUS = 0.5
MAX_EXCEPTION_CANDIDATES = 400
# An ``impl Trait for Type`` block is rarely what a description asks for: the trait and the type hold the docs.
IMPL_DEMOTION = 0.5
# A type with more members than this is a facade (a trait of 100 adaptors): no single member describes it.
MAX_LIFT_MEMBERS = 40
# A description opening with a verb ("Returns the ...") is a function's; types step back.
CALLABLE_TYPE_FACTOR = 0.7
# Long inputs (issue reports) are mostly context: the vectors see their beginning,
# BM25 sees all of it, and mentioned files matter more.
# A statement or description names code as context ("Settings of openConnection ..." describes a settings type,
# not openConnection): the names it spells out are no evidence there. Questions and bare names keep theirs.
STATEMENT_SYMBOL_WEIGHT = 0.0
LONG_QUERY_WORDS = 60
# ``calls``: the resolved callers of what a report names (see :func:`retrievers.rank.evidence.resolved_callers`). On the
# issue ruler 0.15-0.3 gave the same file and function hits; in short queries (0.1) it moved docstring MRR@10 by
# -0.003..+0.009 per package and lowered a TypeScript package by 0.013, so it stays off there.
# ``message``: format strings whose words a report's pasted output shows (see :mod:`retrievers.rank.messages`);
# 0.15-0.3 gave the same file and function hits on the issue ruler, 0.45 lowered a repository's file MRR by 0.015.
# ``invoked``: the subcommands and options of a command line the query shows, as string literals; 0.3 lifted one
# report's function from 16th to 2nd, 0.4 cost another a place. No docstring query shows output or a command line,
# so in short queries both are untried by the rulers (a pasted error line, ``tool sync --dry-run``: what they are for).
LONG_QUERY_WEIGHTS = {"card": 0.35, "code": 0.35, "bm25": 0.5, "symbol": 0.15, "mention": 0.4, "name": 0.1,
                      "calls": 0.2, "message": 0.3, "invoked": 0.3}
# In a long input BM25 counts a word the report repeats up to this many times (1 + log2 of its count).
LONG_QUERY_TERM_REPEAT_CAP = 2
# An issue report's title and first lines say what it is about; the rest (logs, tracebacks) is
# for BM25 and mentions, and embedding it would cost ~6x the time of a short query.
LONG_QUERY_DENSE_CHARS = 600
# Text pasted from the code (a line, a message, a block) ranks the definition holding it above any other
# evidence: the blend's weights add up to under 2, and the type lifts multiply that by at most 1.5.
EXACT_WEIGHT = 10.0
# Not in a long input that is not a pasted block (an issue report): its code lines are mostly traceback
# frames, which mention matching already weighs, and the deepest frame is rarely where the fix goes.
# Lexical-only on the issue ruler, full weight cost file Acc@5 0.771 -> 0.714; 0.3 left files equal and
# func Acc@10 0.559 -> 0.529, for 12 ms more per report.
LONG_QUERY_EXACT_WEIGHT = 0.0

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


def blend_weights(query: str, long_query: bool, described: str | None) -> dict[str, float]:
    """The weights of the evidence blend for a query (one place decides them)."""
    if long_query:
        return LONG_QUERY_WEIGHTS
    if described is not None or (reads_as_prose(query) and not is_question(query)):
        return {**WEIGHTS, "symbol": STATEMENT_SYMBOL_WEIGHT}
    return WEIGHTS


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


def apply_kind_priors(hit: Hit, described: str | None, wants_type: bool, subclasses: set[str],
                      exceptions: dict[int, str] | None = None) -> None:
    """Scale a hit by what the query's wording asks for: impl blocks step back, types or callables as described."""
    if hit.kind == "impl":
        hit.score *= IMPL_DEMOTION
    if described == "callable" and hit.kind in TYPE_KINDS:
        hit.score *= CALLABLE_TYPE_FACTOR
    if wants_type and hit.kind in TYPE_KINDS:
        hit.score *= 1 + TYPE_DESCRIPTION_BONUS
        if hit.symbol in subclasses:
            hit.score *= 1 + SUBCLASS_BONUS
        if exceptions and hit.chunk_id in exceptions:
            hit.score *= 1 + EXCEPTION_BONUS
