"""Pasted terminal text finds the code behind it: output its format string, a command line its declaration.

A report pastes what a program printed (``Queue, paused at 'night'``, ``ValueError: unknown mode 'rb+'``);
the code holds a template with placeholders where the values were (``"{}, paused at {!r}"``,
``f"unknown mode {mode!r}"``). The line as a whole occurs nowhere, but the runs of plain words between
the values do, inside a string literal. Only output is read: lines in a report's fenced blocks that are
not code, and error lines anywhere; the runs found inside a literal point at the definition holding it, and
a line that fits the template found there in full (:mod:`retrievers.rank.templates`) is full evidence. What
counts as a printed value is :mod:`retrievers.rank.message_values`; the lookups are :mod:`retrievers.rank.printers`.

Likewise a command line a report shows (``$ tool sync --dry-run``) names a subcommand and an option that
the code declares as whole string literals (``"sync"``, ``"--dry-run"``).
"""

from __future__ import annotations

import re

from ..grep.patterns import compile_pattern
from ..lexical.tokenize import EXCEPTION_WORD_PATTERN
from ..store.textstore import TextStore
from .exact import CODE_LINE
from .message_values import word_runs
from .printers import MIN_TEMPLATE_FIT, find_printers, holders, literal_lines, lookup_runs

__all__ = ["invocation_evidence", "invoked_words", "message_fragments", "output_lines", "template_evidence"]

FENCE = re.compile(r"^\s*(?:```|~~~)")
# ``KeyError: ...``, ``Error: ...``, ``error: ...``, ``panic: ...``: a message, wherever the report quotes it.
ERROR_LINE = re.compile(rf"\b(?:{EXCEPTION_WORD_PATTERN}|error|warning|panic|fatal)\b:\s")
# Prompts, frames and the source lines a traceback quotes (comments, ``---->`` markers): not output.
NOT_OUTPUT = re.compile(r"^\s*(?:>>>|\.\.\.|\$ |In \[\d+\]|File \"|Traceback|#|//|-*>)")
# Runs of this many characters found in one definition together make full evidence; one short run, part of it.
FULL_EVIDENCE_CHARS = 24


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
    printers = find_printers(store, message_fragments(query), output_lines(query), paths)
    evidence = {chunk_id: min(1.0, count / FULL_EVIDENCE_CHARS) for chunk_id, count in printers.chars.items()}
    for chunk_id, fit in printers.fits.items():
        if fit >= MIN_TEMPLATE_FIT:
            evidence[chunk_id] = max(evidence.get(chunk_id, 0.0), fit)
    return evidence


# ``$ tool sub --flag value``: a command line a report shows (in a block, or as a code span).
PROMPT_LINE = re.compile(r"^\s*(?:\(\S+\)\s*)?[\w@.:~/-]*\$\s+(\S.*)$")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
INVOKED_WORD = re.compile(r"^(?:--?[a-z][a-z0-9-]*|[a-z][a-z0-9_-]{2,})$")
MAX_INVOKED = 6
# Asked for by bug-report templates ("output of `tool --version`"): about the tool, not the code path that failed.
TEMPLATE_FLAGS = frozenset({"--version", "-V", "--help", "-h"})


def invoked_words(query: str) -> list[str]:
    """Subcommands and options of the command lines a report shows (``$ tool sync --dry-run``, ``tool -q``)."""
    commands, fenced = [], False
    for line in query.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif fenced and (prompt := PROMPT_LINE.match(line)):
            commands.append(prompt.group(1))
    commands += [span for span in CODE_SPAN.findall(query) if span.startswith("-") or " -" in span]
    words = []
    for command in commands:
        tokens = command.split()
        rest = tokens if tokens and tokens[0].startswith("-") else tokens[1:]
        names = (token.split("=", 1)[0] for token in rest)
        words += [name for name in names if INVOKED_WORD.match(name) and name not in TEMPLATE_FLAGS]
    return list(dict.fromkeys(words))[:MAX_INVOKED]


def invocation_evidence(store: TextStore, query: str, paths: list[str] | None) -> dict[int, float]:
    """Chunk ids holding a report's subcommands and options as whole string literals (``"sync"``, ``"--dry-run"``)."""
    evidence: dict[int, float] = {}
    for word in invoked_words(query):
        locations = []
        for quote in "\"'":
            pattern = compile_pattern(f"{quote}{word}{quote}", "literal")
            locations += literal_lines(store, pattern, paths, lambda line, column: True)
        evidence.update(dict.fromkeys(holders(store, locations), 1.0) if locations else {})
    return evidence
