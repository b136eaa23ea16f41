"""Literal and regex search over the text store: every matching line, ranked and definition-aware.

Like ripgrep, a result is a matching line; unlike it, each line comes with the innermost
definition that contains it (the file, for module-level lines), and lines are ranked:

1. in-focus files first (implementation before tests and docs under the default focus; the
   reverse under ``focus="tests"``), the same demotion ordinary search applies;
2. then lines that *define* the text (``def parse_args(``, ``class Foo``, ``const X =``,
   ``func (s *S) Name(``, ``public int size(``) before lines that use it;
3. then path and line order.

Patterns are compiled in :mod:`.patterns` (regexes on RE2, in linear time), lines found in
:mod:`.scan`, definition lines told in :mod:`.definitions` and enclosing definitions in
:mod:`.spans`. The scan itself is bounded too: at most ``MAX_MATCHED_LINES`` lines are collected
and ``TIME_BUDGET_S`` seconds spent, and a result says when it stopped early.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..core.results import CodeResult, code_result
from ..store.textstore import TextStore
from .definitions import is_definition_line
from .patterns import Pattern
from .scan import line_spans
from .spans import ChunkSpan, chunk_spans, innermost

MAX_MATCHED_LINES = 1_000  # as many as a caller may ask to see (MAX_MATCH_LIMIT)
TIME_BUDGET_S = 5.0
SNIPPET_CHARS = 300
DEFINITION_SCORE = 1.0
USE_SCORE = 0.6  # above an out-of-focus definition (0.5 x 1.0): focus decides first


@dataclass
class LineMatch:
    """One matching line; its number is counted only if it is shown (counting newlines is the costly part)."""

    path: str
    offset: int  # where the line starts in the file's bytes
    text: str
    column: int  # characters before the match on its line
    width: int  # characters of the match on its line
    definition: bool = False
    score: float = 0.0
    data: bytes = field(default=b"", repr=False)

    @property
    def line(self) -> int:  # noqa: D102
        return self.data.count(b"\n", 0, self.offset) + 1


@dataclass
class LineSearch:
    """Every matching line found (up to the bounds), and whether the scan covered everything."""

    matches: list[LineMatch] = field(default_factory=list)
    complete: bool = True
    stopped: str = ""


def search_lines(store: TextStore, pattern: Pattern, paths: list[str] | None,
                 priority: Callable[[str], float], max_lines: int = MAX_MATCHED_LINES,
                 budget_s: float = TIME_BUDGET_S) -> LineSearch:
    """Every matching line of the stored texts among ``paths`` (all when ``None``), in-focus files first.

    ``priority`` scores a path (higher is scanned, and ranked, first); the scan stops after
    ``max_lines`` lines or ``budget_s`` seconds, and says so.
    """
    deadline = time.monotonic() + budget_s
    ids = store.candidate_ids(pattern.literals)
    texts = list(store.iter_texts(ids, paths))
    texts.sort(key=lambda item: -priority(item[0]))
    found = LineSearch()
    for path, data in texts:
        if time.monotonic() > deadline:
            found.complete, found.stopped = False, f"stopped after {budget_s:g}s"
            break
        for line_start, line_end, start, end in line_spans(data, pattern):
            if len(found.matches) >= max_lines:
                found.complete, found.stopped = False, f"stopped after {max_lines:,} matching lines"
                return found
            raw = data[line_start:line_end]
            text = raw.decode("utf-8", "replace").rstrip("\r")
            if len(text) == len(raw):  # ASCII: byte offsets are character offsets
                column, width = start - line_start, min(end, line_end) - start
            else:
                column = len(data[line_start:start].decode("utf-8", "replace"))
                width = len(data[start:min(end, line_end)].decode("utf-8", "replace"))
            found.matches.append(LineMatch(path, line_start, text, column, width,
                                           is_definition_line(text, column, width), data=data))
    return found


def rank_lines(matches: list[LineMatch], priority: Callable[[str], float]) -> list[LineMatch]:
    """Score each line (focus factor x definition or use) and sort: best first, then path and line."""
    for match in matches:
        match.score = priority(match.path) * (DEFINITION_SCORE if match.definition else USE_SCORE)
    return sorted(matches, key=lambda m: (-m.score, m.path, m.offset))


@dataclass
class GrepAnswer:
    """The best matching lines as results, how many lines matched, and whether the scan saw everything."""

    results: list[CodeResult]
    total: int
    complete: bool = True
    stopped: str = ""
    generation: str = ""  # the index generation searched


def line_result(match: LineMatch, spans: list[ChunkSpan]) -> CodeResult:
    """The public result of a matching line: the shared result fields plus ``line``."""
    line = match.line
    span = innermost(spans, line)
    if span is None:  # a module-level line no chunk covers: the file is the answer
        symbol, kind, first, last = PurePosixPath(match.path).stem, "module", 1, match.data.count(b"\n") + 1
    else:
        symbol, kind, first, last = span.symbol, span.kind, span.start_line, span.end_line
    return code_result(match.path, first, last, symbol, kind, match.score, match.text[:SNIPPET_CHARS], line=line)


def results_for(connection: sqlite3.Connection, matches: list[LineMatch]) -> list[CodeResult]:
    """Results (with enclosing definitions) for already ranked, already cut matches."""
    spans = chunk_spans(connection, list(dict.fromkeys(match.path for match in matches)))
    return [line_result(match, spans[match.path]) for match in matches]
