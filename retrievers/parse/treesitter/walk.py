"""The walk: one pass over a tree-sitter tree, collecting definitions, scopes and reference edges."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ...core.model import Chunk, Edge, ParsedFile
from ...source.languages import is_test_path
from ..windows import MAX_DEFINITION_DEPTH, normalize_newlines, source_lines
from .chunks import Placed, SourceFile, definition_chunks, module_chunks, place, signature
from .go import GO_RULES
from .java import JAVA_RULES
from .javascript import JS_RULES
from .nodes import Definition, Rules, Scope, first_line
from .rust import RUST_RULES

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# language -> (grammar module, function returning the language pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
}
RULES: dict[str, Rules] = {
    "javascript": JS_RULES,
    "typescript": JS_RULES,
    "tsx": JS_RULES,
    "go": GO_RULES,
    "rust": RUST_RULES,
    "java": JAVA_RULES,
}
_PARSERS: dict[str, Parser] = {}  # one per language; a Parser is not safe to share across threads
# Nodes deeper are not visited: tree-sitter finds a node's parent and siblings by walking down from the root, so
# each lookup costs the node's depth (a generated ``a + b + ...`` chain nests as deep as it is long).
MAX_NODE_DEPTH = 1_000


def parse_with_tree_sitter(path: str, source: str, language: str) -> ParsedFile:
    """Chunks and edges of one source file.

    Args:
        path: Repository-relative POSIX path; names the module chunk and decides
            ``is_test`` by the language's file conventions.
        source: The file's text.
        language: One of ``javascript``, ``typescript``, ``tsx``, ``go``, ``rust``, ``java``.

    Returns:
        The file's chunks (module remainder first, then definitions in source order)
        and edges. ``error`` is set only when the grammar is unavailable or the
        extraction failed; the caller then falls back to line windows.
    """
    rules = RULES.get(language)
    if rules is None:
        return ParsedFile(error=f"tree-sitter chunking does not support language {language!r}")
    try:
        parser = _parser_for(language)
    except Exception as exc:  # an absent or incompatible grammar wheel must not stop indexing
        return ParsedFile(error=f"tree-sitter grammar for {language} unavailable: {exc}")

    source = normalize_newlines(source)  # tree-sitter counts only "\n" as a line break
    data = source.encode("utf-8", errors="replace")
    tree = parser.parse(data)
    file = SourceFile(
        path=path,
        language=language,
        data=data,
        lines=source_lines(source),
        comment_types=rules.comment_types,
        path_is_test=is_test_path(path, language),
    )
    found = _Collected()
    try:
        _walk(tree.root_node, file, rules, found)
        chunks = _chunks(file, found.placed)
    except Exception as exc:  # one odd error-recovery tree must not stop a whole index run
        return ParsedFile(error=f"{path}: tree-sitter extraction failed: {exc!r}")
    return ParsedFile(chunks=chunks, edges=found.edges)


def _parser_for(language: str) -> Parser:
    """The cached parser for a language, built on first use."""
    parser = _PARSERS.get(language)
    if parser is None:
        import tree_sitter

        module_name, factory = _GRAMMARS[language]
        grammar = getattr(importlib.import_module(module_name), factory)()
        parser = tree_sitter.Parser(tree_sitter.Language(grammar))
        _PARSERS[language] = parser
    return parser


@dataclass
class _Collected:
    """What the walk has found so far."""

    placed: list[Placed] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    seen_edges: set[tuple[str, str, str, int]] = field(default_factory=set)

    def add_edge(self, path: str, source: str, target: str, kind: str, line: int) -> None:
        """Keep an edge unless it has no target or was already seen on that line."""
        key = (source, target, kind, line)
        if target and key not in self.seen_edges:
            self.seen_edges.add(key)
            self.edges.append(Edge(path=path, source=source, target=target, kind=kind, line=line))


def _walk(root: Node, file: SourceFile, rules: Rules, found: _Collected) -> None:
    """Visit every named node once, pre-order, carrying the scope down.

    Iterative rather than recursive: generated code nests deep enough to hit
    Python's recursion limit.
    """
    relevant_types = rules.relevant_types
    stack: list[tuple[Node, Scope, int]] = [(root, Scope(), 0)]
    while stack:
        node, scope, depth = stack.pop()
        if node.type in relevant_types:  # most nodes are expressions nobody asks about
            scope = _visit(node, scope, file, rules, found)
        children = node.named_children if depth < MAX_NODE_DEPTH else None
        if children:
            children.reverse()  # popped in source order
            stack.extend([(child, scope, depth + 1) for child in children])


def _visit(node: Node, scope: Scope, file: SourceFile, rules: Rules, found: _Collected) -> Scope:
    """Record what one node defines or references; return the scope for its children."""
    line = first_line(node)
    target = rules.call_target(node)
    if target:
        found.add_edge(file.path, scope.caller, target, "calls", line)
    for module in rules.imports(node):
        found.add_edge(file.path, "", module, "imports", line)
    for binding in rules.aliases(node):  # a ``require`` inside a function binds its name there only
        found.add_edge(file.path, scope.caller, binding, "aliases", line)
    for fact in rules.types(node):
        found.add_edge(file.path, scope.caller, fact, "types", line)
    definition = rules.define(node, scope) if scope.depth < MAX_DEFINITION_DEPTH else None
    if definition is None:
        return rules.enter(node, scope) or scope
    _add_definition(definition, scope, file, found)
    return replace(
        scope,
        qualifier=definition.members or definition.symbol,
        caller=definition.symbol,
        container=definition.kind,
        in_test=scope.in_test or definition.is_test,
        receiver=definition.receiver,
        owner=len(found.placed) - 1,
        depth=scope.depth + 1,
    )


def _add_definition(definition: Definition, scope: Scope, file: SourceFile, found: _Collected) -> None:
    is_test = file.path_is_test or scope.in_test or definition.is_test
    found.placed.append(place(definition, scope.owner, is_test, file))
    line = first_line(definition.span)
    for base in definition.bases:
        found.add_edge(file.path, definition.bases_source or definition.symbol, base, "inherits", line)


def _chunks(file: SourceFile, placed: list[Placed]) -> list[Chunk]:
    """Every definition's chunks in source order, after the module remainder's."""
    held = bytearray(len(file.lines) + 2)
    child_lines: list[set[int]] = [set() for _ in placed]
    for item in placed:
        for number in item.held_lines:
            held[number] = 1
        if item.owner >= 0:
            child_lines[item.owner].update(item.held_lines)
    chunks = module_chunks(file, held)
    for item, children in zip(placed, child_lines):
        own = definition_chunks(item, file, signature(item.definition, file.data), children)
        chunks.extend(own)
        for alias in item.definition.aliases:
            chunks.extend(replace(chunk, symbol=alias) for chunk in own)
    return chunks
