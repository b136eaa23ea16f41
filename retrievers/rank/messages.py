"""Pasted terminal text finds the code behind it: output its format string, a command line its declaration.

A report pastes what a program printed (``Queue, paused at 'night'``, ``ValueError: unknown mode 'rb+'``);
the code holds a template with placeholders where the values were (``"{}, paused at {!r}"``,
``f"unknown mode {mode!r}"``). The line as a whole occurs nowhere, but the runs of plain words between
the values do, inside a string literal. Only output is read: lines in a report's fenced blocks that are
not code, and error lines anywhere; the runs found inside a literal point at the definition holding it.
A value printed without quotes stays in its run (``Unknown plugin sparkle``): a run found nowhere is tried
once more without its last word, then without its first.

Likewise a command line a report shows (``$ tool sync --dry-run``) names a subcommand and an option that
the code declares as whole string literals (``"sync"``, ``"--dry-run"``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..grep.patterns import Pattern, compile_pattern, plain_pattern
from ..grep.scan import candidate_lines
from ..grep.spans import chunk_spans, enclosing
from ..lexical.tokenize import EXCEPTION_WORD_PATTERN
from ..source.languages import is_test_path
from ..store.textstore import TextStore
from .exact import CODE_LINE

FENCE = re.compile(r"^\s*(?:```|~~~)")
# ``KeyError: ...``, ``Error: ...``, ``error: ...``, ``panic: ...``: a message, wherever the report quotes it.
ERROR_LINE = re.compile(rf"\b(?:{EXCEPTION_WORD_PATTERN}|error|warning|panic|fatal)\b:\s")
# Prompts, frames and the source lines a traceback quotes (comments, ``---->`` markers): not output.
NOT_OUTPUT = re.compile(r"^\s*(?:>>>|\.\.\.|\$ |In \[\d+\]|File \"|Traceback|#|//|-*>)")
# A value printed into a message: a quoted word, a path or dotted name, a number (the template has a placeholder there).
VALUE = re.compile(r"'[^'\s]*'|\"[^\"\s]*\"|[^\s'\"]*(?:[/\\]|\w\.\w)[^\s'\"]*|\b\d[\w.]*")
WORD_RUN = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)+")
MIN_FRAGMENT_CHARS = 12
MAX_FRAGMENTS = 12
# A text in more implementation lines than this is a common phrase or word, no evidence of one place.
MAX_LITERAL_LOCATIONS = 10
# Runs of this many characters found in one definition together make full evidence; one short run, part of it.
FULL_EVIDENCE_CHARS = 24
QUOTES = (b'"', b"'", b"`")
# Where a literal names a message without printing it: documentation quoting it, and module-level tables and
# constants (the code that prints them is elsewhere). Counting them cost an issue report its file's rank.
NO_PRINTER_KINDS = frozenset({"text", "module"})


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
    runs = (run for line in output_lines(query) for run in WORD_RUN.findall(VALUE.sub("\n", line)))
    kept = dict.fromkeys(run for run in runs if len(run) >= MIN_FRAGMENT_CHARS)
    return sorted(kept, key=len, reverse=True)[:MAX_FRAGMENTS]


def inside_literal(line: bytes, column: int) -> bool:
    """Whether ``column`` of ``line`` is in a string literal opened on that line (an odd count of a quote before it)."""
    before = line[:column]
    return any(before.count(quote) % 2 == 1 for quote in QUOTES)


def literal_lines(store: TextStore, pattern: Pattern, paths: list[str] | None,
                  accept: Callable[[bytes, int], bool]) -> list[tuple[str, int]]:
    """``(path, line)`` of the matches ``accept`` (line bytes, match column) keeps in implementation files.

    Tests that print or pass the same text use it, they do not make it; empty when it occurs in more than
    ``MAX_LITERAL_LOCATIONS`` lines (a common phrase or word, no evidence of one place).
    """
    found: list[tuple[str, int]] = []
    for path, data, line, line_start, line_end, start, _ in candidate_lines(
            store, pattern, paths, lambda path: not is_test_path(path)):
        if accept(data[line_start:line_end], start - line_start):
            found.append((path, line))
            if len(found) > MAX_LITERAL_LOCATIONS:
                return []
    return found


def holders(store: TextStore, locations: list[tuple[str, int]]) -> set[int]:
    """The innermost definitions around ``locations`` that can hold a message (see ``NO_PRINTER_KINDS``)."""
    spans = chunk_spans(store.connection, list(dict.fromkeys(path for path, _ in locations)))
    found = (enclosing(spans[path], line) for path, line in locations)
    return {span.chunk_id for span in found if span is not None and span.kind not in NO_PRINTER_KINDS}


def shorter_runs(run: str) -> list[str]:
    """``run`` without its last word, then without its first: a value printed without quotes (``plugin sparkle``)."""
    words = run.split()
    return [part for part in (" ".join(words[:-1]), " ".join(words[1:]))
            if len(words) > 2 and len(part) >= MIN_FRAGMENT_CHARS]


def template_evidence(store: TextStore, query: str, paths: list[str] | None) -> dict[int, float]:
    """Chunk ids whose string literals hold runs of the query's printed messages, by how much of them."""
    chars: dict[int, int] = {}
    for run in message_fragments(query):
        for fragment in (run, *shorter_runs(run)):
            found = holders(store, literal_lines(store, plain_pattern(fragment), paths, inside_literal))
            for chunk_id in found:
                chars[chunk_id] = chars.get(chunk_id, 0) + len(fragment)
            if found:
                break
    return {chunk_id: min(1.0, count / FULL_EVIDENCE_CHARS) for chunk_id, count in chars.items()}


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
