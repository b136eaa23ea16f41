"""Finding the lines a pattern matches in a file's bytes, and in the stored texts the trigram index leaves."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..store.textstore import TextStore
from .patterns import Pattern

# Jumping to a regex's literal (bytes.find, then the regex on that line) beats scanning with the regex
# while the literal occurs less than once per this many bytes.
SPARSE_ANCHOR_BYTES = 4_000
# Each trigram costs a doclist read; a dozen from the longest words narrow a phrase's files well enough.
CANDIDATE_TRIGRAMS = 12


def line_spans(data: bytes, pattern: Pattern) -> Iterator[tuple[int, int, int, int]]:
    """``(line start, line end, match start, match end)`` of each matching line, in order.

    A regex with a required literal first jumps from one occurrence of the literal to the next
    (``bytes.find``, what ripgrep does with SIMD) and matches only those lines: every match holds
    the literal and stays within a line. Where the literal turns out to be common (more than one
    per ``SPARSE_ANCHOR_BYTES`` of the file), the rest of the file is scanned by the regex itself.
    """
    position = 0
    size = len(data)
    if pattern.anchor:
        jumps_left = size // SPARSE_ANCHOR_BYTES + 1
        while jumps_left:
            jumps_left -= 1
            hit = data.find(pattern.anchor, position)
            if hit < 0:
                return
            line_start = data.rfind(b"\n", 0, hit) + 1
            line_end = data.find(b"\n", hit)
            line_end = size if line_end < 0 else line_end
            match = pattern.regex.search(data, line_start, line_end)  # type: ignore[attr-defined]
            if match is not None:
                yield (line_start, line_end, *match.span())
            position = line_end + 1
    while position <= size:
        found = pattern.find(data, position)
        if found is None:
            return
        start, end = found
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", start)
        line_end = size if line_end < 0 else line_end
        yield line_start, line_end, start, end
        # One result per line; a match spanning lines goes on after its end.
        position = max(line_end + 1, end)


def lines_in(data: bytes, pattern: Pattern) -> Iterator[tuple[int, int, int, int, int]]:
    """:func:`line_spans` with the line number first: ``(line, line start, line end, match start, match end)``."""
    line, counted_to = 1, 0
    for line_start, line_end, start, end in line_spans(data, pattern):
        line += data.count(b"\n", counted_to, line_start)
        counted_to = line_start
        yield line, line_start, line_end, start, end


# ``(path, data, line, line start, line end, match start, match end)``
CandidateLine = tuple[str, bytes, int, int, int, int, int]


def candidate_lines(store: TextStore, pattern: Pattern, paths: list[str] | None,
                    keep_path: Callable[[str], bool] | None = None) -> Iterator[CandidateLine]:
    """Each line ``pattern`` matches in the texts the trigram index leaves (among ``paths``, by ``keep_path``)."""
    ids = store.candidate_ids(pattern.literals, CANDIDATE_TRIGRAMS)
    if ids is not None and not ids:
        return
    for path, data in store.iter_texts(ids, paths):
        if keep_path is None or keep_path(path):
            for line, line_start, line_end, start, end in lines_in(data, pattern):
                yield path, data, line, line_start, line_end, start, end
