"""Pasted terminal output finds the code behind it: the definition whose format string printed it.

A report pastes what a program printed (``Queue, paused at 'night'``, ``ValueError: unknown mode 'rb+'``);
the code holds a template with placeholders where the values were (``"{}, paused at {!r}"``,
``f"unknown mode {mode!r}"``). The line as a whole occurs nowhere, but the runs of plain words between
the values do, inside a string literal. Only output is read: lines in a report's fenced blocks that are
not code, and error lines anywhere; the runs found inside a literal point at the definition holding it, and
a line that fits the template found there in full (:mod:`retrievers.rank.templates`) is full evidence. What
counts as a printed value is :mod:`retrievers.rank.message_values`; the lookups are :mod:`retrievers.rank.printers`.
"""

from __future__ import annotations

import re

from ..lexical.tokenize import EXCEPTION_WORD_PATTERN
from ..store.textstore import TextStore
from .exact import CODE_LINE
from .message_values import word_runs
from .printers import MIN_TEMPLATE_FIT, find_printers, lookup_runs

__all__ = ["message_fragments", "output_lines", "template_evidence"]

FENCE = re.compile(r"^\s*(?:```|~~~)")
# ``KeyError: ...``, ``Error: ...``, ``error: ...``, ``panic: ...``: a message, wherever the report quotes it.
ERROR_LINE = re.compile(rf"\b(?:{EXCEPTION_WORD_PATTERN}|error|warning|panic|fatal)\b:\s")
# Prompts, frames and the source lines a traceback quotes (comments, ``---->`` markers): not output.
NOT_OUTPUT = re.compile(r"^\s*(?:>>>|\.\.\.|\$ |In \[\d+\]|File \"|Traceback|#|//|-*>)")


def output_lines(query: str) -> list[str]:
    """The lines of ``query`` a program printed: non-code lines of fenced blocks, and error lines."""
    lines, fenced = [], False
    for line in query.splitlines():
        error = ERROR_LINE.search(line)
        if FENCE.match(line):
            fenced = not fenced
        elif error is not None:
            lines.append(line[error.end():])
        elif fenced and line.strip() and not NOT_OUTPUT.match(line) and not CODE_LINE.search(line.strip()):
            lines.append(line)
    return lines


def message_fragments(query: str) -> list[str]:
    """Runs of plain words between the printed values of the query's output lines, longest first."""
    return lookup_runs([run for line in output_lines(query) for run in word_runs(line)])


def template_evidence(store: TextStore, query: str, paths: list[str] | None) -> dict[int, float]:
    """Chunk ids whose string literals hold runs of the query's printed messages, by how much of them.

    A definition whose template one of the printed lines fits (at least ``MIN_TEMPLATE_FIT``) gets that fit
    when it is more: a short message found whole is as sure as a long one.
    """
    runs = message_fragments(query)
    printers = find_printers(store, runs, output_lines(query), paths)
    printed = sum(len(run) for run in runs)  # a definition's share of the printed runs: how much it explains
    evidence = {chunk_id: min(1.0, count / printed) for chunk_id, count in printers.chars.items()}
    for chunk_id, fit in printers.fits.items():
        if fit >= MIN_TEMPLATE_FIT:
            evidence[chunk_id] = max(evidence.get(chunk_id, 0.0), fit)
    return evidence

