"""Lines of a source file, and the overlapping windows long stretches of them are cut into.

Every chunker numbers lines the same way (``source_lines``) and cuts anything too long
for one chunk the same way (``windows``), so that every line of a file ends up whole in
the text of some chunk (``retrievers.parse.coverage`` states and checks that promise).

A *segment* is one source line, or one piece of a line too long to keep whole
(minified code, embedded data): ``(line number, text)``. A window is a run of
consecutive segments, bounded in lines and characters, that overlaps the previous
window so a statement cut at one window's edge is whole in the next.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

MAX_CHUNK_LINES = 200
"""Longest chunk text, in lines; a longer definition or remainder becomes windows of this size."""
CONTAINER_WINDOW_LINES = 60
"""Window size for a class-like chunk's own lines (its members have chunks of their own)."""
WINDOW_OVERLAP_LINES = 10
"""Lines each window repeats from the end of the previous one."""
MAX_CHUNK_CHARS = 40_000
"""Longest chunk text, in characters: minified code packs a whole file into a few lines."""
LONG_LINE_CHARS = 2_000
"""A line longer than this is cut into pieces of this size (overlapping by LINE_PIECE_OVERLAP)."""
LINE_PIECE_OVERLAP = 100
MAX_DEFINITION_DEPTH = 8
"""A definition nested deeper gets no chunk of its own; its lines stay in the enclosing one's. Each level repeats
its lines in one more chunk: a hostile or generated file nesting a megabyte line 99 functions deep made 200 MB."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

Segment = tuple[int, str]


def source_lines(source: str) -> list[str]:
    """The lines of a file as every chunker numbers them: split at CR LF, CR and LF.

    These are the line ends Python's tokenizer counts (``str.splitlines`` also splits at
    form feeds and other separators, which would shift every line number after them).
    """
    return _LINE_BREAK.split(source)


def normalize_newlines(source: str) -> str:
    """The source with every line break written LF, so byte offsets and lines agree."""
    return "\n".join(source_lines(source))


def line_pieces(text: str) -> list[str]:
    """A line cut into overlapping pieces of at most LONG_LINE_CHARS characters; short lines stay whole."""
    if len(text) <= LONG_LINE_CHARS:
        return [text]
    step = LONG_LINE_CHARS - LINE_PIECE_OVERLAP
    pieces = []
    for start in range(0, len(text), step):
        pieces.append(text[start : start + LONG_LINE_CHARS])
        if start + LONG_LINE_CHARS >= len(text):
            break
    return pieces


def segments_of(numbered: Iterable[tuple[int, str]]) -> list[Segment]:
    """Numbered lines as segments, long lines cut into pieces."""
    segments = list(numbered)
    if all(len(text) <= LONG_LINE_CHARS for _, text in segments):  # the common case, kept cheap
        return segments
    return [(number, piece) for number, text in segments for piece in line_pieces(text)]


def windows(segments: Sequence[Segment], max_lines: int = MAX_CHUNK_LINES,
            overlap: int = WINDOW_OVERLAP_LINES, max_chars: int = MAX_CHUNK_CHARS) -> list[list[Segment]]:
    """Consecutive, overlapping runs of segments that cover them all.

    Each window holds at most ``max_lines`` segments and ``max_chars`` characters (but
    always at least one segment) and starts ``overlap`` segments before the previous
    one ended, unless that would make no progress. Input that fits in one window comes
    back as one window, unchanged.
    """
    if len(segments) <= max_lines and sum(len(text) + 1 for _, text in segments) <= max_chars:
        return [list(segments)] if segments else []
    overlap = min(overlap, max_lines - 1)
    result: list[list[Segment]] = []
    start = 0
    while start < len(segments):
        end = start
        size = 0
        while end < len(segments) and end - start < max_lines:
            size += len(segments[end][1]) + 1
            if size > max_chars and end > start:
                break
            end += 1
        result.append(list(segments[start:end]))
        if end >= len(segments):
            break
        start = max(end - overlap, start + 1)
    return result


def window_text(window: Sequence[Segment]) -> str:
    """A window's text: its segments, one per line."""
    return "\n".join(text for _, text in window)


def squeeze_blank_runs(numbered: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """Numbered lines without leading blank lines and with runs of blank lines cut to one."""
    kept: list[tuple[int, str]] = []
    for number, text in numbered:
        if text.strip() or (kept and kept[-1][1].strip()):
            kept.append((number, text))
    return kept


def trim_blank_ends(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Numbered lines without blank lines at either end."""
    start, end = 0, len(numbered)
    while start < end and not numbered[start][1].strip():
        start += 1
    while end > start and not numbered[end - 1][1].strip():
        end -= 1
    return numbered[start:end]
