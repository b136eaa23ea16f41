"""Where chunks lie in their files, and which chunk a line counts for."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

SQL_BATCH = 500


@dataclass(frozen=True)
class ChunkSpan:
    """Where a chunk lies in its file."""

    chunk_id: int
    start_line: int
    end_line: int
    symbol: str
    kind: str


def chunk_spans(connection: sqlite3.Connection, paths: list[str]) -> dict[str, list[ChunkSpan]]:
    """The chunks of ``paths``, by path."""
    spans: dict[str, list[ChunkSpan]] = {path: [] for path in paths}
    for start in range(0, len(paths), SQL_BATCH):
        batch = paths[start : start + SQL_BATCH]
        marks = ",".join("?" * len(batch))
        for chunk_id, path, first, last, symbol, kind in connection.execute(
                f"SELECT id, path, start_line, end_line, symbol, kind FROM chunks WHERE path IN ({marks})",  # noqa: S608
                batch):
            spans[path].append(ChunkSpan(chunk_id, first, last, symbol, kind))
    return spans


def innermost(spans: list[ChunkSpan], line: int) -> ChunkSpan | None:
    """The smallest chunk whose lines contain ``line`` (``None`` if none does)."""
    containing = [span for span in spans if span.start_line <= line <= span.end_line]
    return min(containing, key=lambda s: (s.end_line - s.start_line, s.kind == "module"), default=None)


def nearest(spans: list[ChunkSpan], line: int) -> ChunkSpan | None:
    """For a line no chunk contains: the file's module chunk, else the definition that ends closest before it.

    Without either (a line above every definition), the file's first chunk.
    """
    module = next((span for span in spans if span.kind == "module"), None)
    if module is not None:
        return module
    before = [span for span in spans if span.start_line <= line]
    if before:
        return max(before, key=lambda s: (s.end_line, -s.start_line))
    return min(spans, key=lambda s: s.start_line, default=None)


def enclosing(spans: list[ChunkSpan], line: int) -> ChunkSpan | None:
    """The chunk a line counts for: the innermost one around it, else (a line no chunk covers) :func:`nearest`."""
    return innermost(spans, line) or nearest(spans, line)
