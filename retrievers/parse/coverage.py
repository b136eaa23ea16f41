"""The coverage invariant: every non-blank line of an indexed file is in the text of some chunk.

Lines are the file's lines as ``retrievers.parse.windows.source_lines`` numbers them (split at
CR LF, CR and LF), 1-based. A line is *blank* when it is empty or only
whitespace. Line ``n`` **lies in** chunk ``c`` when ``c.start_line <= n <= c.end_line``
and either

- the line's text, exactly, is one of the lines of ``c.text``; or
- the line is longer than ``LONG_LINE_CHARS`` (chunkers cut such lines into pieces) and
  the lines of ``c.text`` and of the other chunks spanning ``n`` that occur inside it,
  each at least ``MIN_PIECE_CHARS`` long, together cover every non-whitespace character
  of it.

A file is *covered* when every non-blank line lies in at least one of its chunks. Search
can only find what some chunk holds, so this is what makes every line findable.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.model import Chunk
from .windows import LONG_LINE_CHARS, source_lines

MIN_PIECE_CHARS = 32
"""Shorter chunk lines don't count as pieces of a long line (a lone ``}`` occurs everywhere)."""


def uncovered_lines(source: str, chunks: Iterable[Chunk]) -> list[int]:
    """Line numbers of the non-blank lines of ``source`` that lie in none of ``chunks``."""
    lines = source_lines(source)
    pending = {number for number, text in enumerate(lines, 1) if text.strip()}
    spanning_long: dict[int, list[str]] = {}
    for chunk in chunks:
        text_lines = set(chunk.text.split("\n"))
        first, last = max(chunk.start_line, 1), min(chunk.end_line, len(lines))
        for number in range(first, last + 1):
            if number not in pending:
                continue
            text = lines[number - 1]
            if text in text_lines:
                pending.discard(number)
            elif len(text) > LONG_LINE_CHARS:
                spanning_long.setdefault(number, []).extend(
                    piece for piece in text_lines if len(piece) >= MIN_PIECE_CHARS)
    for number, pieces in spanning_long.items():
        if number in pending and _pieces_cover(lines[number - 1], pieces):
            pending.discard(number)
    return sorted(pending)


def _pieces_cover(line: str, pieces: list[str]) -> bool:
    """Whether occurrences of ``pieces`` inside ``line`` cover each of its non-whitespace characters."""
    held = bytearray(len(line))
    for piece in set(pieces):
        at = line.find(piece)
        while at != -1:
            held[at : at + len(piece)] = b"\x01" * len(piece)
            at = line.find(piece, at + 1)  # occurrences may overlap: pieces are cut with an overlap
    return all(held[index] or char.isspace() for index, char in enumerate(line))


def non_blank_line_count(source: str) -> int:
    """How many lines of ``source`` the invariant is about."""
    return sum(1 for text in source_lines(source) if text.strip())
