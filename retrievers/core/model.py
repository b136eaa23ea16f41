"""The records the index is made of: chunks of code and the edges between symbols."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

# Called as ``progress(phase, done, total)`` while indexing.
ProgressCallback = Callable[[str, int, int], None]

# Kinds of definitions, grouped by what the stages ask of them (the parsers name the kinds; each group is here once).
TYPE_KINDS = frozenset({"class", "interface", "enum", "struct", "trait", "record", "type"})
"""Definitions of a type: what a query worded like a type's description asks for, what type summaries describe."""
CLASS_LIKE_KINDS = TYPE_KINDS | {"impl"}
"""Definitions that hold methods, a Rust ``impl`` block too (it defines no type, and ranks as none)."""
CONTAINER_KINDS = CLASS_LIKE_KINDS - {"type"}
"""Definitions chunked as their own lines only, their members being chunks of their own; a ``type`` alias
has no members and is chunked like a function."""
CALLABLE_KINDS = frozenset({"function", "method", "constructor"})
"""Definitions that run when called: what a call resolves to when it builds no class."""


@dataclass
class Chunk:
    """One searchable unit: a function, method, class, module remainder or text window.

    ``symbol`` is qualified within its file (``Searcher.search``); ``parent`` is the
    qualified symbol of the enclosing class or function, if any. Lines are 1-based and
    inclusive. A definition too long for one chunk becomes overlapping windows that share
    its symbol, kind, signature and docstring: ``part`` is 0 for a definition's only or
    first chunk and k for its k-th continuation window (module remainders likewise).
    """

    path: str
    language: str
    kind: str
    symbol: str
    start_line: int
    end_line: int
    text: str
    signature: str = ""
    docstring: str = ""
    parent: str = ""
    is_test: bool = False
    part: int = 0

    def to_dict(self) -> dict:
        """The chunk as a plain dict (for JSON and SQLite rows)."""
        return asdict(self)


@dataclass
class Edge:
    """A reference from one symbol to a name: ``calls``, ``imports`` or ``inherits``.

    ``source`` is the qualified symbol the reference is made from (``""`` for module
    level); ``target`` is the name as written (``helper``, ``self.save``,
    ``os.path.join``, ``pkg.mod``); resolution to definitions happens at query time.
    """

    path: str
    source: str
    target: str
    kind: str
    line: int


@dataclass
class ParsedFile:
    """What a chunker extracts from one file."""

    chunks: list[Chunk] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    error: str = ""
    # Per chunk, worked out where the file was parsed (a worker process on a large change): its BM25
    # document (space-separated tokens), its card, less what only the whole repository knows, and its code view
    # (reading a Python docstring out of the code parses the chunk again: once per chunk, in the worker).
    documents: list[str] = field(default_factory=list)
    cards: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
