"""From definitions found in a tree to chunks: text windows, signature, doc comment, module remainder.

A definition's chunk text is its source lines from its doc comment (or first decorator)
to its last line. A definition longer than MAX_CHUNK_LINES becomes overlapping windows
(``part`` 0, 1, ...) that each keep its symbol, signature and docstring; a long
class-like definition keeps only its own lines (header, fields, comments: its members
have chunks of their own). A line longer than LONG_LINE_CHARS (minified code) is cut
into pieces, and a definition that starts or ends inside one holds only its own part
of it; the line is then held whole by its container or the module remainder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from ...core.model import CONTAINER_KINDS, Chunk
from ..windows import (
    CONTAINER_WINDOW_LINES,
    LONG_LINE_CHARS,
    MAX_CHUNK_LINES,
    segments_of,
    squeeze_blank_runs,
    trim_blank_ends,
    window_text,
    windows,
)
from .nodes import Definition, first_line, last_line, text_of

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_SIGNATURE_CHARS = 200
MAX_DOCSTRING_CHARS = 1000


@dataclass(frozen=True)
class SourceFile:
    """The file being chunked, in the forms the helpers need."""

    path: str
    language: str
    data: bytes
    lines: list[str]
    comment_types: frozenset[str]
    path_is_test: bool


@dataclass(frozen=True)
class Placed:
    """A definition with where its chunk text starts and ends, and what encloses it."""

    definition: Definition
    owner: int  # index of the enclosing definition in the walk's list, -1 at file level
    is_test: bool
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    docstring: str
    whole_first: bool  # the first line is short enough to be held whole
    whole_last: bool

    @property
    def held_lines(self) -> range:
        """The lines this definition's text holds whole (clipped long end lines excluded)."""
        return range(self.start_line + (not self.whole_first), self.end_line + self.whole_last)


def place(definition: Definition, owner: int, is_test: bool, file: SourceFile) -> Placed:
    """Where a definition's chunk starts (its doc comment, decorators) and ends."""
    start_node = definition.first or definition.span
    comments = doc_comments(start_node, file)
    text_start = comments[0] if comments else start_node
    start_line, end_line = first_line(text_start), last_line(definition.span)
    return Placed(
        definition=definition,
        owner=owner,
        is_test=is_test,
        start_line=start_line,
        end_line=end_line,
        start_byte=text_start.start_byte,
        end_byte=definition.span.end_byte,
        docstring=docstring(comments),
        whole_first=len(file.lines[start_line - 1]) <= LONG_LINE_CHARS,
        whole_last=len(file.lines[end_line - 1]) <= LONG_LINE_CHARS,
    )


def _own_lines(placed: Placed, file: SourceFile) -> list[tuple[int, str]]:
    """The definition's numbered lines; a long first or last line only from / up to the definition."""
    numbered = [(number, file.lines[number - 1]) for number in range(placed.start_line, placed.end_line + 1)]
    data = file.data
    if not placed.whole_first:
        line_end = data.find(b"\n", placed.start_byte)
        stop = placed.end_byte if placed.start_line == placed.end_line else (line_end if line_end != -1 else len(data))
        numbered[0] = (placed.start_line, data[placed.start_byte : stop].decode("utf-8", errors="replace"))
    if not placed.whole_last and placed.end_line > placed.start_line:
        line_start = data.rfind(b"\n", 0, placed.end_byte) + 1
        numbered[-1] = (placed.end_line, data[line_start : placed.end_byte].decode("utf-8", errors="replace"))
    return numbered


def definition_chunks(placed: Placed, file: SourceFile, signature_text: str, child_lines: set[int]) -> list[Chunk]:
    """The chunk of one definition, or its windows when it is long."""
    definition = placed.definition
    numbered = _own_lines(placed, file)
    size = MAX_CHUNK_LINES
    if definition.kind in CONTAINER_KINDS and len(numbered) > MAX_CHUNK_LINES:
        numbered = squeeze_blank_runs((n, text) for n, text in numbered if n not in child_lines)
        size = CONTAINER_WINDOW_LINES
    chunks: list[Chunk] = []
    for window in windows(segments_of(numbered), size):
        if not any(text.strip() for _, text in window):
            continue
        chunks.append(Chunk(
            path=file.path,
            language=file.language,
            kind=definition.kind,
            symbol=definition.symbol,
            start_line=window[0][0],
            # the first chunk spans the whole definition (its result); continuation windows their own lines
            end_line=window[-1][0] if chunks else max(window[-1][0], placed.end_line),
            text=window_text(window),
            signature=signature_text,
            docstring=placed.docstring,
            parent=definition.parent,
            is_test=placed.is_test,
            part=len(chunks),
        ))
    return chunks


def module_chunks(file: SourceFile, held: bytearray) -> list[Chunk]:
    """The file's top-level remainder (imports, constants, statements outside definitions), in windows."""
    free = [(number, text) for number, text in enumerate(file.lines, 1) if not held[number]]
    numbered = trim_blank_ends(squeeze_blank_runs(free))
    chunks: list[Chunk] = []
    for window in windows(segments_of(numbered)):
        window = trim_blank_ends(window)
        if not window:
            continue
        chunks.append(Chunk(
            path=file.path,
            language=file.language,
            kind="module",
            symbol=PurePosixPath(file.path).stem,
            start_line=window[0][0],
            end_line=window[-1][0] if chunks else numbered[-1][0],
            text=window_text(window),
            is_test=file.path_is_test,
            part=len(chunks),
        ))
    return chunks


# --------------------------------------------------------------------------- signature

_ANNOTATION_TYPES = frozenset(
    {"decorator", "marker_annotation", "annotation", "attribute_item", "comment", "line_comment", "block_comment"}
)


def _signature_start(node: Node) -> int:
    """Byte where the definition's header starts, past decorators and annotations."""
    for child in node.children:
        if child.type in _ANNOTATION_TYPES:
            continue
        if child.type == "modifiers":  # Java: annotations live among the modifiers
            for modifier in child.children:
                if modifier.type not in _ANNOTATION_TYPES:
                    return modifier.start_byte
            continue
        return child.start_byte
    return node.start_byte


def signature(definition: Definition, data: bytes) -> str:
    """The header up to the body's opening brace, whitespace collapsed."""
    start = _signature_start(definition.span)
    end = definition.body.start_byte if definition.body is not None else definition.span.end_byte
    header = data[start:max(start, end)].decode("utf-8", errors="replace")
    if definition.body is None:
        header = header.split("{", 1)[0]
    header = " ".join(header.split()).rstrip(";").rstrip()
    return header[:MAX_SIGNATURE_CHARS].rstrip()


# --------------------------------------------------------------------------- doc comments


def _starts_its_line(node: Node, data: bytes) -> bool:
    line_start = data.rfind(b"\n", 0, node.start_byte) + 1
    return not data[line_start : node.start_byte].strip()


def _is_block_comment(node: Node) -> bool:
    return node.text is not None and node.text.startswith(b"/*")


def doc_comments(node: Node, file: SourceFile) -> list[Node]:
    """The comment block directly above a definition (no blank line, not trailing code)."""
    found: list[Node] = []
    below = node
    sibling = node.prev_named_sibling
    while (
        sibling is not None
        and sibling.type in file.comment_types
        and last_line(sibling) >= first_line(below) - 1
        and _starts_its_line(sibling, file.data)
    ):
        if _is_block_comment(sibling) and found:
            break  # a /* */ block above // lines is a separate comment
        found.append(sibling)
        if _is_block_comment(sibling):
            break
        below = sibling
        sibling = sibling.prev_named_sibling
    found.reverse()
    return found


_BLOCK_LINE_PREFIX = re.compile(r"^\s*\*(?!/) ?")
_LINE_COMMENT_PREFIX = re.compile(r"^\s*//[/!]? ?")


def _clean_comment(text: str) -> list[str]:
    """Comment text without its markers (``/** */``, leading ``*``, ``//``, ``///``)."""
    text = text.strip()
    if not text.startswith("/*"):
        return [_LINE_COMMENT_PREFIX.sub("", text).rstrip()]
    body = text[2:].lstrip("*!")
    if body.endswith("*/"):
        body = body[:-2]
    return [_BLOCK_LINE_PREFIX.sub("", line).rstrip() for line in body.split("\n")]


def docstring(comments: list[Node]) -> str:
    """The cleaned text of a doc comment block."""
    lines = [line for comment in comments for line in _clean_comment(text_of(comment))]
    return "\n".join(lines).strip()[:MAX_DOCSTRING_CHARS]
