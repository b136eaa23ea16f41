"""Chunks cut from numbered lines: text windows for files without a grammar, a definition's chunk or windows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath

from ..core.model import Chunk
from ..source.languages import is_test_path
from .windows import segments_of, source_lines, window_text, windows

TEXT_WINDOW_LINES = 40
TEXT_WINDOW_OVERLAP = 10


def window_chunks(path: str, source: str, language: str = "text") -> list[Chunk]:
    """Overlapping line windows for files without a grammar (docs, config) or that don't parse."""
    numbered = list(enumerate(source_lines(source), 1))
    chunks: list[Chunk] = []
    name = PurePosixPath(path).name
    is_test = is_test_path(path, language)
    for window in windows(segments_of(numbered), TEXT_WINDOW_LINES, TEXT_WINDOW_OVERLAP):
        if not any(text.strip() for _, text in window):
            continue
        heading = next((text.lstrip("#").strip() for _, text in window if text.startswith("#")), "")
        start = window[0][0]
        chunks.append(
            Chunk(path=path, language=language, kind="text", symbol=f"{name}:{start}",
                  start_line=start, end_line=window[-1][0], text=window_text(window),
                  docstring=heading, is_test=is_test)
        )
    return chunks


def numbered_chunks(template: Chunk, numbered: list[tuple[int, str]], max_lines: int) -> list[Chunk]:
    """``template`` with the text of ``numbered`` lines: one chunk, or overlapping windows when long.

    The first chunk spans the whole definition (``template``'s lines), as the definition's result; each
    continuation window spans its own lines.
    """
    chunks: list[Chunk] = []
    for window in windows(segments_of(numbered), max_lines):
        end_line = max(window[-1][0], template.end_line) if not chunks else window[-1][0]
        chunks.append(replace(template, start_line=window[0][0], end_line=end_line,
                              text=window_text(window), part=len(chunks)))
    return chunks
