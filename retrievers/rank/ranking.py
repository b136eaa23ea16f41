"""The ranking policy: blend weights, evidence bonuses, the kind priors and type lifts, focus demotion.

Every tuning constant of the searcher's ranking is named here (one place to read and to change);
:class:`retrievers.rank.search.Searcher` gathers the evidence and applies these.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.model import TYPE_KINDS
from ..core.results import CodeResult, code_result
from ..lexical.tokenize import STOP_WORDS
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
# Names that mark an exception type (and the roots of the hierarchies that do).
EXCEPTION_NAME_ENDINGS = ("Error", "Exception", "Warning", "Throwable", "Interrupt")
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

Hydrate = Callable[[list[tuple[int, float]]], list["Hit"]]


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


def hydrate(connection: sqlite3.Connection, ranked: list[tuple[int, float]], components: dict) -> list[Hit]:
    """Hits for ranked chunk ids, in order, each with its per-component evidence (unknown ids are left out)."""
    if not ranked:
        return []
    ids = [chunk_id for chunk_id, _ in ranked]
    marks = ",".join("?" * len(ids))
    rows = {row[0]: row for row in connection.execute(
        "SELECT id, path, start_line, end_line, symbol, kind, language, is_test, text, signature, docstring"
        f" FROM chunks WHERE id IN ({marks})", ids)}  # noqa: S608
    hits = []
    for chunk_id, score in ranked:
        row = rows.get(chunk_id)
        if row is None:
            continue
        hits.append(Hit(chunk_id, score, row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]),
                        row[8], row[9], row[10],
                        {name: round(values[chunk_id], 4) for name, values in components.items()
                         if chunk_id in values}))
    return hits


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


def lift_types_by_members(connection: sqlite3.Connection, hits: list[Hit], hydrate_ids: Hydrate) -> list[Hit]:
    """Give each type the evidence of its best-scoring member (fetching the type if it ranked lower)."""
    best_member: dict[tuple[str, str], float] = {}
    for hit in hits:
        if hit.kind in ("method", "function") and "." in hit.symbol:
            owner = (hit.path, hit.symbol.rsplit(".", 1)[0])
            best_member[owner] = max(best_member.get(owner, 0.0), hit.score)
    if not best_member:
        return hits
    present = {(hit.path, hit.symbol): hit for hit in hits}
    missing = [owner for owner in best_member if owner not in present]
    if missing:
        kinds = ",".join("?" * len(TYPE_KINDS))
        found = []
        for path, symbol in missing:
            found += [row[0] for row in connection.execute(
                f"SELECT id FROM chunks WHERE path = ? AND symbol = ? AND kind IN ({kinds})",  # noqa: S608
                (path, symbol, *TYPE_KINDS))]
        for fetched in hydrate_ids([(chunk_id, 0.0) for chunk_id in found]):
            present[(fetched.path, fetched.symbol)] = fetched
            hits.append(fetched)
    for owner, score in best_member.items():
        owner_hit = present.get(owner)
        if owner_hit is None or owner_hit.kind not in TYPE_KINDS:
            continue
        if member_count(connection, *owner) > MAX_LIFT_MEMBERS:
            continue
        if MEMBER_EVIDENCE * score > owner_hit.score:
            owner_hit.score = MEMBER_EVIDENCE * score
            owner_hit.components["member"] = round(owner_hit.score, 4)
    return hits


def member_count(connection: sqlite3.Connection, path: str, symbol: str) -> int:
    """How many definitions a type holds directly."""
    return connection.execute(
        "SELECT count(*) FROM chunks WHERE path = ? AND parent = ?", (path, symbol)).fetchone()[0]


def exception_types(connection: sqlite3.Connection) -> dict[int, str]:
    """Chunk id -> symbol of every exception type: named like one, or deriving from one at any depth."""
    roots = {target.rsplit(".", 1)[-1] for (target,) in connection.execute(
        "SELECT DISTINCT target FROM edges WHERE kind = 'inherits'")}
    derived = subclasses_named_by(connection, sorted(root for root in roots if root.endswith(EXCEPTION_NAME_ENDINGS)))
    kinds = ",".join("?" * len(TYPE_KINDS))
    return {chunk_id: symbol for chunk_id, symbol, name in connection.execute(
        f"SELECT id, symbol, name FROM chunks WHERE kind IN ({kinds})", tuple(TYPE_KINDS))  # noqa: S608
        if name.endswith(EXCEPTION_NAME_ENDINGS) or symbol in derived}


def subclasses_named_by(connection: sqlite3.Connection, words: list[str]) -> set[str]:
    """Symbols of the classes that derive (at any depth) from a class a head-phrase word names."""
    found: set[str] = set()
    frontier = [word for word in words if len(word) > 2 and word not in STOP_WORDS]
    for _ in range(4):  # a few levels of hierarchy; cycles end at ``found``
        if not frontier:
            break
        marks = ",".join("?" * len(frontier))
        children = {source for (source,) in connection.execute(
            f"SELECT DISTINCT source FROM edges WHERE kind = 'inherits' AND target COLLATE NOCASE IN ({marks})"  # noqa: S608
            " LIMIT 500", frontier)} - found
        found |= children
        frontier = [child.rsplit(".", 1)[-1] for child in children]
    return found
