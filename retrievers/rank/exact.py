"""Pasted code found verbatim: the definitions holding a line, message or block a query copies from the code.

A query that pastes a line (``raise ValueError("unknown mode")``), quotes a message or holds a
traceback's source lines names places in the code exactly; each occurrence counts for the
innermost definition around it. Spacing may differ from the code (indentation, spaces around
punctuation); such a find is told apart from one spaced as pasted. A pasted message that shows other
values than the code's (``URL component 'path' too long`` for ``f"URL component '{key}' too long"``) is
found through its template: the definition whose string literal the message fits (see
:mod:`retrievers.rank.printers`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..grep.patterns import PHRASE_TOKEN, plain_pattern, tolerant_pattern
from ..grep.scan import candidate_lines
from ..grep.spans import chunk_spans, enclosing
from ..store.textstore import TextStore
from .message_values import (
    delimited_runs,
    delimited_values,
    literal_runs,
    normalized,
    shows_values,
    speaker_end,
    without_values,
    word_runs,
)
from .printers import MIN_TEMPLATE_FIT, find_printers

MIN_EXACT_CHARS = 20
MIN_QUOTED_CHARS = 8
MAX_EXACT_CHARS = 2_000
MAX_EXACT_PHRASES = 8
# A phrase found in more places than this says little about which one is meant.
MAX_EXACT_LOCATIONS = 20
# A message quoted in a question: several words between straight quotes. Backticks name code (symbol
# matching's job), and a quoted single word is a name, not a message.
QUOTED = re.compile("|".join(rf"(?<!\w){quote}([^{quote}\n]*\w\s+\w[^{quote}\n]*){quote}(?!\w)" for quote in "\"'"))
# A line of code, not prose: a call, an assignment, a brace or semicolon, or a statement keyword first.
CODE_LINE = re.compile(r"\w\(|[^=!<>]=[^=]|[{};]|^(?:def|class|return|raise|import|from|if|elif|for|while|with|"
                       r"func|fn|let|const|var|throw|try|catch|assert|await|yield|pub|public|private)\b")
# A bare name (``Store.save``, ``parse_args()``) is a question for symbol lookup, which ranks its definition;
# as a pasted phrase it would rank the lines that use it.
BARE_NAME = re.compile(r"[\w$#]+(?:(?:\.|::)[\w$#]+)*(?:\(\))?")
MIN_SCAN_TOKENS = 6
PLAIN_WORDS = re.compile(r"\w+(?: \w+)*")
WH_WORDS = frozenset("how what where why which when who whom whose".split())
AUXILIARIES = frozenset("does do did is are was were can could should would will".split())
# Any of these in a text makes it code-like: brackets, operators, quotes, dotted or snake/camel names.
CODE_MARK = re.compile(r"[()\[\]{}=;:<>\"'`]|\w[._]\w|[a-z][A-Z]")


def exact_phrases(query: str) -> list[str]:
    """Parts of a query that may be pasted from the code, longest first.

    The whole query (a pasted line, message or block), quoted strings inside a longer
    question, and the code-looking lines of a multi-line input (a traceback's source lines).
    """
    text = query.strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    candidates: list[str] = []
    # One line (not a question in words), or a block that is mostly code; an issue report as a whole is
    # never in the code.
    pasted = (len(lines) == 1 and not is_prose_question(text) and not BARE_NAME.fullmatch(text)) or is_code_block(text)
    if MIN_EXACT_CHARS <= len(text) <= MAX_EXACT_CHARS and pasted:
        candidates.append(text)
    quoted = (next(group for group in match.groups() if group).strip() for match in QUOTED.finditer(text))
    candidates += [message for message in quoted if MIN_QUOTED_CHARS <= len(message) <= MAX_EXACT_CHARS]
    if len(lines) > 1:
        candidates += [line for line in lines if is_code_line(line)]
    return list(dict.fromkeys(candidate.strip() for candidate in candidates))[:MAX_EXACT_PHRASES]


def is_code_line(line: str) -> bool:
    """A line of code worth looking up verbatim (long enough, and a call, assignment, brace or keyword)."""
    return len(line.strip()) >= MIN_EXACT_CHARS and CODE_LINE.search(line.strip()) is not None


def is_code_block(text: str) -> bool:
    """Several lines, at least half of them code: a pasted block rather than a report about one."""
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) > 1 and 2 * sum(is_code_line(line) for line in lines) >= len(lines)


def is_prose_question(text: str) -> bool:
    """``how does json decode a string``: a question in plain words, which nobody pasted from the code.

    It opens with a wh-word (or with an auxiliary and ends with ``?``) and has no mark of code at all;
    ``are desired between two values, simply use`` (a docstring line) is not one.
    """
    words = text.split()
    if not words or CODE_MARK.search(QUOTED.sub(" ", text)):  # a quoted message is part of the question
        return False
    first = words[0].lower()
    return first in WH_WORDS or (first in AUXILIARIES and text.rstrip().endswith("?"))


def exact_locations(store: TextStore, phrase: str, paths: list[str] | None) -> list[tuple[str, int, bool]]:
    """``(path, line, verbatim)`` where ``phrase`` occurs; empty when it is everywhere or nowhere.

    ``verbatim``: spaced exactly as pasted, not only with other whitespace (so the blend can rank ``Item=Self``
    pasted above ``Item = Self`` elsewhere).

    A phrase without a word of three characters (``"0 1 x 2",``) has nothing for the trigram index:
    every text is scanned, if the phrase has enough tokens to be worth it.
    """
    words = " ".join(phrase.split())
    # Words and single spaces only (a message, a sentence): found as written, at memchr speed.
    pattern = plain_pattern(words) if PLAIN_WORDS.fullmatch(words) else tolerant_pattern(phrase)
    if pattern is None or (not pattern.literals and len(PHRASE_TOKEN.findall(phrase)) < MIN_SCAN_TOKENS):
        return []
    verbatim = phrase.encode("utf-8", "replace")
    found: list[tuple[str, int, bool]] = []
    for path, data, line, _, _, start, end in candidate_lines(store, pattern, paths):
        found.append((path, line, verbatim in data[start:end]))
        if len(found) > MAX_EXACT_LOCATIONS:
            return []
    return found


def is_printed_message(phrase: str) -> bool:
    """A line a program printed: it shows who printed it or a value, and is no code once its quoted values are out.

    ``foo(x, 'a')`` is code; ``expected {'a': 1}, got None`` and ``TypeError: f() takes 2 arguments`` are output.
    """
    text = normalized(phrase)
    if "\n" in phrase.strip() or not shows_values(text):
        return False
    blanked = without_values(text, delimited_values(text))
    return CODE_LINE.search(blanked[speaker_end(blanked):].strip()) is None


def printed_message_evidence(store: TextStore, phrase: str, paths: list[str] | None) -> dict[int, float]:
    """Chunk ids whose message template ``phrase`` fits (see :func:`is_printed_message`), by how well (the fit)."""
    if not is_printed_message(phrase):
        return {}
    message = normalized(phrase)
    runs = literal_runs(message) + delimited_runs(message) + word_runs(message)
    fits = find_printers(store, runs, [message], paths).fits
    return {chunk_id: fit for chunk_id, fit in fits.items() if fit >= MIN_TEMPLATE_FIT}


class PastedEvidence(NamedTuple):
    """What a query's pasted parts find, by chunk id: the evidence a blend weighs."""

    found: dict[int, float]  # holds a part (1.0, whatever its spacing), or fits a pasted message's template (the fit)
    verbatim: dict[int, float]  # holds a part spaced exactly as pasted (1.0)


def exact_chunk_evidence(store: TextStore, query: str, paths: list[str] | None) -> PastedEvidence:
    """Chunk ids holding a part of ``query`` verbatim: the innermost definition around each occurrence.

    A line no chunk covers counts for the file's module chunk, else the nearest definition. A pasted message
    found nowhere as it reads is looked up by its template (:func:`printed_message_evidence`).
    """
    connection = store.connection
    evidence = PastedEvidence({}, {})
    done: list[str] = []
    for phrase in exact_phrases(query):
        words = " ".join(phrase.split())
        if any(words in longer for longer in done):
            continue  # a quoted string inside a pasted line already found: it would only add noise
        locations = exact_locations(store, phrase, paths)
        if not locations:
            printed = printed_message_evidence(store, phrase, paths)
            for chunk_id, fit in printed.items():
                evidence.found[chunk_id] = max(evidence.found.get(chunk_id, 0.0), fit)
            if printed:
                done.append(words)  # its quoted values are no phrases of their own
            continue
        done.append(words)
        spans = chunk_spans(connection, list(dict.fromkeys(path for path, _, _ in locations)))
        for path, line, verbatim in locations:
            span = enclosing(spans[path], line)
            if span is not None:
                evidence.found[span.chunk_id] = 1.0
                if verbatim:
                    evidence.verbatim[span.chunk_id] = 1.0
    return evidence
