"""Split files into symbol-level chunks and extract call / import / inherit edges: the dispatch by language.

Python is parsed with the standard library's ``ast`` (``retrievers.parse.python``); JavaScript, TypeScript, Go,
Rust and Java with tree-sitter (``retrievers.parse.treesitter``); everything else is cut into overlapping line
windows (``retrievers.parse.line_chunks``). Whatever the language, every non-blank line ends up in the text of
some chunk (``retrievers.parse.coverage``): long definitions and long module remainders become overlapping
windows (``retrievers.parse.windows``).
"""

from __future__ import annotations

from ..core.model import ParsedFile
from .line_chunks import window_chunks
from .python import parse_python


def parse_file(path: str, source: str, language: str) -> ParsedFile:
    """Chunks and edges of one file; never raises on malformed source."""
    if language == "python":
        return parse_python(path, source)
    if language in ("javascript", "typescript", "tsx", "go", "rust", "java"):
        from .treesitter.walk import parse_with_tree_sitter

        parsed = parse_with_tree_sitter(path, source, language)
        if parsed.error and not parsed.chunks:  # no grammar, or the walk failed: the lines stay findable
            parsed.chunks = window_chunks(path, source, language)
        return parsed
    return ParsedFile(chunks=window_chunks(path, source, language))
