"""Patterns to search for: a literal or RE2 regex checked and compiled, and the patterns of pasted phrases.

Regexes run on RE2 (``google-re2``): a linear-time engine, so no pattern can backtrack
catastrophically; lookarounds and backreferences, which need backtracking, are refused with a
clear message. Python's ``re`` with a timeout was the alternative, but a running ``re`` match
cannot be interrupted from Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import re2

from ..query.limits import MAX_PATTERN_CHARS, too_long
from .literals import required_literals

MODES = ("literal", "regex")
LINE_MODE = "(?m)"  # ``^`` and ``$`` match at every line, as in grep
# The longest words of a phrase narrow its candidates enough; more trigrams cost more than they save.
TOLERANT_LITERALS = 3
PHRASE_TOKEN = re.compile(r"\w+|[^\w\s]")


class PatternError(ValueError):
    """A literal or regex that can't be searched; the message says why in one line."""


@dataclass(frozen=True)
class Pattern:
    """A compiled literal or regex, and the substrings every match must contain (for the trigram index)."""

    mode: str
    text: str
    literals: tuple[str, ...]
    needle: bytes = b""
    regex: object = None
    anchor: bytes = b""  # a regex's longest required literal: memchr-speed jumps to the lines that may match

    def find(self, data: bytes, position: int) -> tuple[int, int] | None:
        """``(start, end)`` of the first match at or after ``position``, or ``None``."""
        if self.regex is None:
            start = data.find(self.needle, position)
            return None if start < 0 else (start, start + len(self.needle))
        match = self.regex.search(data, position)  # type: ignore[attr-defined]
        return None if match is None else match.span()


def _check_text(text: object, what: str) -> str:
    if not isinstance(text, str):
        raise PatternError(f"the {what} must be a string")
    if not text:
        raise PatternError(f"the {what} is empty")
    if "\x00" in text:
        raise PatternError(f"the {what} contains a NUL byte")
    if len(text) > MAX_PATTERN_CHARS:
        raise PatternError(too_long(f"the {what}", len(text), MAX_PATTERN_CHARS))
    return text


def compile_pattern(text: str, mode: str) -> Pattern:
    """A literal (exact, case-sensitive) or RE2 regex (``(?m)``: ``^``/``$`` match at lines); raises PatternError."""
    if mode == "literal":
        text = _check_text(text, "literal")
        if not text.strip():
            raise PatternError("the literal is only whitespace")
        return Pattern("literal", text, (text,), needle=text.encode("utf-8", "replace"))
    if mode != "regex":
        raise PatternError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    text = _check_text(text, "regex")
    try:
        compiled = re2.compile(LINE_MODE + text, quiet_options(within_lines=True))
    except re2.error as error:
        detail = _error_text(error).replace(": " + LINE_MODE, ": ", 1)
        hint = (" (lookarounds and backreferences are not supported: matching runs in linear time)"
                if re.search(r"\(\?<?[=!]|\\[1-9]", text) else "")
        raise PatternError(f"invalid regex {text[:80]!r}: {detail}{hint}") from None
    literals = tuple(required_literals(text))
    anchor = max(literals, key=len).encode("utf-8") if literals else b""
    return Pattern("regex", text, literals, regex=compiled, anchor=anchor)


def quiet_options(within_lines: bool = False) -> re2.Options:
    """RE2's options without its logging of syntax errors to stderr (they are raised anyway).

    ``within_lines``: a match never spans a newline (whitespace classes stop at line ends), as in grep.
    """
    options = re2.Options()
    options.log_errors = False
    options.never_nl = within_lines
    return options


def _error_text(error: re2.error) -> str:
    detail = error.args[0] if error.args else ""
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    return str(detail) or "invalid syntax"


def plain_pattern(words: str) -> Pattern:
    """A literal for a phrase of plain words, narrowed by its longest words' trigrams (not the spaces')."""
    longest = sorted(words.split(), key=len, reverse=True)[:TOLERANT_LITERALS]
    return Pattern("literal", words, tuple(longest), needle=words.encode("utf-8", "replace"))


def tolerant_pattern(phrase: str) -> Pattern | None:
    """A regex matching ``phrase`` whatever its whitespace (indentation, spaces around punctuation).

    Words keep at least one space between them; punctuation may have any or none. The words
    themselves must appear verbatim, so they are what the trigram index narrows by.
    """
    tokens = PHRASE_TOKEN.findall(phrase)
    if not tokens:
        return None
    parts = [re2.escape(tokens[0])]
    for previous, token in zip(tokens, tokens[1:]):
        both_words = previous[0].isalnum() or previous[0] == "_"
        both_words = both_words and (token[0].isalnum() or token[0] == "_")
        parts.append((r"\s+" if both_words else r"\s*") + re2.escape(token))
    words = sorted((t for t in tokens if len(t) >= 3 and (t[0].isalnum() or t[0] == "_")), key=len, reverse=True)
    try:
        compiled = re2.compile("".join(parts), quiet_options())
    except re2.error:  # a pasted block too large for RE2's memory budget
        return None
    # No anchor: a pasted phrase may span lines in the code, and anchor jumps match within one line.
    return Pattern("regex", phrase, tuple(words[:TOLERANT_LITERALS]), regex=compiled)
