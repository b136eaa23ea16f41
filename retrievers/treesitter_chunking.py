"""Symbol-level chunks and reference edges for JavaScript, TypeScript, Go, Rust and Java.

One tree-sitter walk per file yields a chunk per definition (function, method, class,
interface, struct, ...), one ``module`` chunk for the top-level lines no definition
covers, and best-effort ``calls`` / ``imports`` / ``inherits`` edges. Targets are kept
as written (``this.save``, ``pkg.Func``, ``Type.new``); resolving them to definitions is
the query side's job.

Grammars are imported lazily, so a missing grammar wheel turns into
``ParsedFile(error=...)`` for that language instead of an import error for the module.
Syntax errors never raise: tree-sitter recovers with ERROR nodes and the walk takes
whatever definitions it still recognises.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from retrievers.languages import is_test_path
from retrievers.model import Chunk, Edge, ParsedFile

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_CHUNK_LINES = 200
"""Longest chunk text, in lines; longer functions are cut here."""
LONG_CONTAINER_PREVIEW_LINES = 60
"""Lines kept of a class-like chunk longer than MAX_CHUNK_LINES (its members have their own chunks)."""
MAX_CHUNK_CHARS = 40_000
"""Longest chunk text, in characters: minified code packs a whole file into one line."""
MAX_SIGNATURE_CHARS = 200
MAX_DOCSTRING_CHARS = 1000
MAX_TARGET_CHARS = 100
"""Longest edge target; anything longer is an expression rather than a name."""

CONTAINER_KINDS = frozenset({"class", "interface", "enum", "struct", "trait", "impl", "record"})

# language -> (grammar module, function returning the language pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
}
_PARSERS: dict[str, Parser] = {}  # one per language; a Parser is not safe to share across threads

_CHAIN = re.compile(r"^(?:[^\W\d]|[$#])[\w$#]*(?:\.(?:[^\W\d]|[$#])[\w$#]*)*$")
_SELF_NAMES = frozenset({"this", "super", "self"})


# --------------------------------------------------------------------------- public API


def parse_with_tree_sitter(path: str, source: str, language: str) -> ParsedFile:
    """Chunks and edges of one source file.

    Args:
        path: Repository-relative POSIX path; names the module chunk and decides
            ``is_test`` by the language's file conventions.
        source: The file's text.
        language: One of ``javascript``, ``typescript``, ``tsx``, ``go``, ``rust``, ``java``.

    Returns:
        The file's chunks (module chunk first, then definitions in source order) and
        edges. ``error`` is set only when the grammar is unavailable or nothing at all
        could be extracted from a file with syntax errors.
    """
    rules = _RULES.get(language)
    if rules is None:
        return ParsedFile(error=f"tree-sitter chunking does not support language {language!r}")
    try:
        parser = _parser_for(language)
    except Exception as exc:  # an absent or incompatible grammar wheel must not stop indexing
        return ParsedFile(error=f"tree-sitter grammar for {language} unavailable: {exc}")

    data = source.encode("utf-8", errors="replace")
    tree = parser.parse(data)
    file = _File(
        path=path,
        language=language,
        data=data,
        lines=[line.rstrip("\r") for line in source.split("\n")],
        rules=rules,
        path_is_test=is_test_path(path, language),
    )
    found = _Collected(covered=bytearray(len(file.lines) + 2))
    try:
        _walk(tree.root_node, file, found)
    except Exception as exc:  # one odd error-recovery tree must not stop a whole index run
        return ParsedFile(error=f"{path}: tree-sitter extraction failed: {exc!r}")

    module = _module_chunk(file, found.covered)
    chunks = ([module] if module else []) + found.chunks
    if not chunks and not found.edges and tree.root_node.has_error:
        return ParsedFile(error=f"{path}: syntax errors, nothing could be extracted")
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


# --------------------------------------------------------------------------- the walk


@dataclass(frozen=True)
class _Scope:
    """Where the walk is: what new names are qualified with, whom calls belong to."""

    qualifier: str = ""
    caller: str = ""
    container: str = ""  # kind of the innermost enclosing definition or namespace
    in_test: bool = False
    skip_definitions: bool = False  # inside a JS describe()/it() callback


@dataclass(frozen=True)
class _Definition:
    """A definition recognised in the tree, before it becomes a Chunk."""

    kind: str
    symbol: str
    parent: str
    span: Node  # the whole definition, ``export`` / ``type`` keyword included
    body: Node | None  # the signature stops where it starts; None: at the first "{"
    first: Node | None = None  # a decorator / attribute sibling the definition starts at
    members: str = ""  # qualifier for nested definitions; "" means the symbol
    is_test: bool = False
    bases: tuple[str, ...] = ()
    bases_source: str = ""  # who inherits; "" means the symbol


@dataclass(frozen=True)
class _Rules:
    """What one grammar's definitions, scopes, calls, imports and comments look like."""

    define: Callable[[Node, _Scope], _Definition | None]
    enter: Callable[[Node, _Scope], _Scope | None]
    call_target: Callable[[Node], str | None]
    imports: Callable[[Node], list[str]]
    comment_types: frozenset[str]
    relevant_types: frozenset[str]  # node types any of the above acts on; the rest are only walked through


@dataclass(frozen=True)
class _File:
    """The file being chunked, in the forms the helpers need."""

    path: str
    language: str
    data: bytes
    lines: list[str]
    rules: _Rules
    path_is_test: bool


@dataclass
class _Collected:
    """What the walk has found so far."""

    covered: bytearray  # covered[line] == 1 when a definition chunk holds that line
    chunks: list[Chunk] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    seen_edges: set[tuple[str, str, str, int]] = field(default_factory=set)

    def add_edge(self, path: str, source: str, target: str, kind: str, line: int) -> None:
        """Keep an edge unless it has no target or was already seen on that line."""
        key = (source, target, kind, line)
        if target and key not in self.seen_edges:
            self.seen_edges.add(key)
            self.edges.append(Edge(path=path, source=source, target=target, kind=kind, line=line))


def _walk(root: Node, file: _File, found: _Collected) -> None:
    """Visit every named node once, pre-order, carrying the scope down.

    Iterative rather than recursive: generated code nests deep enough to hit
    Python's recursion limit.
    """
    relevant_types = file.rules.relevant_types
    stack: list[tuple[Node, _Scope]] = [(root, _Scope())]
    while stack:
        node, scope = stack.pop()
        if node.type in relevant_types:  # most nodes are expressions nobody asks about
            scope = _visit(node, scope, file, found)
        children = node.named_children
        if children:
            children.reverse()  # popped in source order
            stack.extend([(child, scope) for child in children])


def _visit(node: Node, scope: _Scope, file: _File, found: _Collected) -> _Scope:
    """Record what one node defines or references; return the scope for its children."""
    _record_references(node, scope, file, found)
    definition = file.rules.define(node, scope)
    if definition is None:
        return file.rules.enter(node, scope) or scope
    _add_definition(definition, scope, file, found)
    return replace(
        scope,
        qualifier=definition.members or definition.symbol,
        caller=definition.symbol,
        container=definition.kind,
        in_test=scope.in_test or definition.is_test,
    )


def _record_references(node: Node, scope: _Scope, file: _File, found: _Collected) -> None:
    line = node.start_point[0] + 1
    target = file.rules.call_target(node)
    if target:
        found.add_edge(file.path, scope.caller, target, "calls", line)
    for module in file.rules.imports(node):
        found.add_edge(file.path, "", module, "imports", line)


def _add_definition(definition: _Definition, scope: _Scope, file: _File, found: _Collected) -> None:
    start_node = definition.first or definition.span
    start_line = _first_line(start_node)
    end_line = _last_line(definition.span)
    comments = _doc_comments(start_node, file)
    covered_from = _first_line(comments[0]) if comments else start_line
    for line in range(covered_from, end_line + 1):
        found.covered[line] = 1

    found.chunks.append(
        Chunk(
            path=file.path,
            language=file.language,
            kind=definition.kind,
            symbol=definition.symbol,
            start_line=start_line,
            end_line=end_line,
            text=_chunk_text(file, start_node, definition.span, definition.kind),
            signature=_signature(definition, file.data),
            docstring=_docstring(comments),
            parent=definition.parent,
            is_test=file.path_is_test or scope.in_test or definition.is_test,
        )
    )
    line = _first_line(definition.span)
    for base in definition.bases:
        found.add_edge(file.path, definition.bases_source or definition.symbol, base, "inherits", line)


# --------------------------------------------------------------------------- chunk parts


def _first_line(node: Node) -> int:
    return node.start_point[0] + 1


def _last_line(node: Node) -> int:
    """1-based last line; a node ending right after a newline ends on the line before."""
    row, column = node.end_point
    if column == 0 and row > node.start_point[0]:
        return row
    return row + 1


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None and node.text else ""


def _qualify(qualifier: str, name: str) -> str:
    return f"{qualifier}.{name}" if qualifier else name


def _chunk_text(file: _File, start_node: Node, span: Node, kind: str) -> str:
    """The definition's source lines, cut to a preview when very long.

    Whole lines read best, but on very long lines (minified code) they would repeat
    the whole file in every chunk, so there the definition's own bytes are used.
    """
    start_line, end_line = _first_line(start_node), _last_line(span)
    if end_line - start_line + 1 > MAX_CHUNK_LINES:
        keep = LONG_CONTAINER_PREVIEW_LINES if kind in CONTAINER_KINDS else MAX_CHUNK_LINES
        end_line = start_line + keep - 1
    text = "\n".join(file.lines[start_line - 1 : end_line])
    if len(text) > MAX_CHUNK_CHARS:
        own = file.data[start_node.start_byte : span.end_byte].decode("utf-8", errors="replace")
        text = own[:MAX_CHUNK_CHARS]
    return text


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


def _signature(definition: _Definition, data: bytes) -> str:
    """The header up to the body's opening brace, whitespace collapsed."""
    start = _signature_start(definition.span)
    end = definition.body.start_byte if definition.body is not None else definition.span.end_byte
    header = data[start:max(start, end)].decode("utf-8", errors="replace")
    if definition.body is None:
        header = header.split("{", 1)[0]
    header = " ".join(header.split()).rstrip(";").rstrip()
    return header[:MAX_SIGNATURE_CHARS].rstrip()


def _starts_its_line(node: Node, data: bytes) -> bool:
    line_start = data.rfind(b"\n", 0, node.start_byte) + 1
    return not data[line_start : node.start_byte].strip()


def _is_block_comment(node: Node) -> bool:
    return node.text is not None and node.text.startswith(b"/*")


def _doc_comments(node: Node, file: _File) -> list[Node]:
    """The comment block directly above a definition (no blank line, not trailing code)."""
    comment_types = file.rules.comment_types
    found: list[Node] = []
    below = node
    sibling = node.prev_named_sibling
    while (
        sibling is not None
        and sibling.type in comment_types
        and _last_line(sibling) >= _first_line(below) - 1
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


def _docstring(comments: list[Node]) -> str:
    lines = [line for comment in comments for line in _clean_comment(_text(comment))]
    return "\n".join(lines).strip()[:MAX_DOCSTRING_CHARS]


def _squeeze_blank_runs(lines: Iterable[str]) -> list[str]:
    kept: list[str] = []
    for line in lines:
        if line.strip() or (kept and kept[-1].strip()):
            kept.append(line)
    return kept


def _module_chunk(file: _File, covered: bytearray) -> Chunk | None:
    """The file's top-level remainder: imports, constants, statements outside definitions."""
    lines = file.lines
    free = [number for number in range(1, len(lines) + 1) if not covered[number] and lines[number - 1].strip()]
    if not free:
        return None
    start_line, end_line = free[0], free[-1]
    text_lines = _squeeze_blank_runs(
        lines[number - 1] for number in range(start_line, end_line + 1) if not covered[number]
    )
    return Chunk(
        path=file.path,
        language=file.language,
        kind="module",
        symbol=PurePosixPath(file.path).stem,
        start_line=start_line,
        end_line=end_line,
        text="\n".join(text_lines[:MAX_CHUNK_LINES])[:MAX_CHUNK_CHARS],
        is_test=file.path_is_test,
    )


# --------------------------------------------------------------------------- shared helpers

_NAME_TYPES = frozenset(
    {
        "identifier",
        "property_identifier",
        "private_property_identifier",
        "shorthand_property_identifier",
        "field_identifier",
        "type_identifier",
        "package_identifier",
        "this",
        "super",
        "self",
        "crate",
    }
)
# member-access node type -> (owner field, member field)
_MEMBER_FIELDS = {
    "member_expression": ("object", "property"),  # JS/TS a.b
    "selector_expression": ("operand", "field"),  # Go a.b
    "field_expression": ("value", "field"),  # Rust a.b
    "scoped_identifier": ("path", "name"),  # Rust a::b
    "field_access": ("object", "field"),  # Java a.b
}
# wrapper node type -> the field holding what it wraps (``foo::<T>``, ``Vec::<T>``, ``a!``)
_WRAPPER_FIELDS = {"generic_function": "function", "generic_type": "type", "non_null_expression": ""}


def _dotted(node: Node | None) -> str | None:
    """``a.b.c`` for an identifier / member-access chain, None for anything else."""
    if node is None or node.end_byte - node.start_byte > 3 * MAX_TARGET_CHARS:
        return None  # bounds the recursion as well as the result
    if node.type in _NAME_TYPES:
        return _text(node)
    if node.type in _MEMBER_FIELDS:
        owner_field, member_field = _MEMBER_FIELDS[node.type]
        member = _dotted(node.child_by_field_name(member_field))
        owner = node.child_by_field_name(owner_field)
        if member is None or owner is None:
            return member  # Rust ``::name`` has no owner
        head = _dotted(owner)
        return f"{head}.{member}" if head else None
    if node.type in _WRAPPER_FIELDS:
        wrapped_field = _WRAPPER_FIELDS[node.type]
        wrapped = node.child_by_field_name(wrapped_field) if wrapped_field else node.named_child(0)
        return _dotted(wrapped)
    return None


def _as_target(name: str | None) -> str | None:
    """A call target worth an edge: a plain name chain, not bare ``this``/``self``."""
    if not name or name in _SELF_NAMES or len(name) > MAX_TARGET_CHARS or not _CHAIN.match(name):
        return None
    return name


_TYPE_PREFIX = re.compile(r"^(?:[&*~]|'\w+\s*|(?:mut|dyn|impl|const)\s+)+")


def _plain_type(text: str) -> str:
    """``Base<T>``, ``*pkg.Base``, ``&'a mut fmt::Display`` -> ``Base``, ``pkg.Base``, ``fmt.Display``."""
    text = _TYPE_PREFIX.sub("", text.strip())
    text = re.split(r"[<\[({]", text, maxsplit=1)[0]
    text = re.sub(r"\s+", "", text).replace("::", ".").strip(".")
    return text if len(text) <= MAX_TARGET_CHARS and _CHAIN.match(text) else ""


def _type_names(nodes: Iterable[Node]) -> tuple[str, ...]:
    return tuple(name for name in (_plain_type(_text(node)) for node in nodes) if name)


def _string_value(node: Node | None) -> str:
    return _text(node).strip().strip("\"'`") if node is not None else ""


def _leading_sibling(node: Node, leading_types: frozenset[str], comment_types: frozenset[str]) -> Node | None:
    """The earliest decorator / attribute sibling placed before a definition, if any."""
    first = None
    sibling = node.prev_named_sibling
    while sibling is not None and (sibling.type in leading_types or sibling.type in comment_types):
        if sibling.type in leading_types:
            first = sibling
        sibling = sibling.prev_named_sibling
    return first


def _define(
    kind: str,
    name: str,
    scope: _Scope,
    span: Node,
    body: Node | None,
    *,
    first: Node | None = None,
    is_test: bool = False,
    bases: tuple[str, ...] = (),
) -> _Definition:
    """A definition named within the current scope (the common case)."""
    return _Definition(
        kind=kind,
        symbol=_qualify(scope.qualifier, name),
        parent=scope.qualifier,
        span=span,
        body=body,
        first=first,
        is_test=is_test,
        bases=bases,
    )


def _no_scope(node: Node, scope: _Scope) -> _Scope | None:
    return None


# --------------------------------------------------------------------------- JavaScript / TypeScript

_JS_DECLARATION_KINDS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
}
_JS_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "generator_function_expression"}
)
_JS_NAMED_VALUE_TYPES = frozenset(
    {"variable_declarator", "pair", "public_field_definition", "field_definition", "assignment_expression"}
)
_JS_TEST_BLOCKS = frozenset(
    {"describe", "context", "suite", "it", "test", "specify", "beforeEach", "afterEach", "beforeAll", "afterAll"}
)
_JS_LEADING = frozenset({"decorator"})
_JS_COMMENTS = frozenset({"comment"})


def _js_span(node: Node) -> Node:
    """The statement a definition is written as: ``export const f = () => {}`` whole."""
    span = node
    parent = node.parent
    if node.type == "variable_declarator" and parent is not None:
        declarators = [child for child in parent.named_children if child.type == "variable_declarator"]
        if len(declarators) == 1:
            span = parent
    elif node.type == "assignment_expression" and parent is not None and parent.type == "expression_statement":
        span = parent
    if span.parent is not None and span.parent.type == "export_statement":
        span = span.parent
    return span


def _js_bases(node: Node) -> tuple[str, ...]:
    """Names after ``extends`` / ``implements`` of a class or interface."""
    bases: list[Node] = []
    for child in node.named_children:
        if child.type == "class_heritage":
            for clause in child.named_children:
                if clause.type == "extends_clause":
                    bases.extend(clause.children_by_field_name("value"))
                elif clause.type == "implements_clause":
                    bases.extend(clause.named_children)
                else:  # JavaScript: the superclass expression itself
                    bases.append(clause)
        elif child.type == "extends_type_clause":  # TypeScript interfaces
            bases.extend(child.named_children)
    names = (_as_target(_dotted(base)) or _plain_type(_text(base)) for base in bases)
    return tuple(name for name in names if name)


def _js_key_name(node: Node | None) -> str:
    """A property / method name as written, without quotes."""
    if node is None:
        return ""
    if node.type == "string":
        return _string_value(node)
    return _text(node)


def _js_assigned_name(left: Node) -> tuple[str, str] | None:
    """(name, kind) for ``exports.f = ...``, ``Foo.prototype.m = ...``, ``f = ...``."""
    chain = _dotted(left)
    if not chain or chain.split(".")[0] in _SELF_NAMES:
        return None
    for prefix in ("module.exports.", "exports."):
        if chain.startswith(prefix):
            return chain[len(prefix) :], "function"
    if ".prototype." in chain:
        return chain.replace(".prototype.", "."), "method"
    if chain in ("module.exports", "exports"):
        return None
    return chain, "function"


def _js_named_value(node: Node, scope: _Scope) -> _Definition | None:
    """A function or class stored under a name: ``const f = () => ...``, ``{ m: function () {} }``."""
    value = node.child_by_field_name("right" if node.type == "assignment_expression" else "value")
    if value is None:
        return None
    is_function = value.type in _JS_FUNCTION_VALUES
    if not is_function and value.type != "class":
        return None

    kind = "function" if node.type == "variable_declarator" else "method"
    if node.type == "variable_declarator":
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.type != "identifier":
            return None  # destructuring patterns name nothing
        name = _text(name_node)
    elif node.type == "pair":
        name = _js_key_name(node.child_by_field_name("key"))
    elif node.type == "assignment_expression":
        left = node.child_by_field_name("left")
        assigned = _js_assigned_name(left) if left is not None else None
        if assigned is None:
            if value.child_by_field_name("name") is None:
                return None
            assigned = (_text(value.child_by_field_name("name")), "function")  # module.exports = function f() {}
        name, kind = assigned
    else:  # class field: TS names it "name", JS "property"
        name = _js_key_name(node.child_by_field_name("name") or node.child_by_field_name("property"))
    if not name:
        return None

    if not is_function:
        kind = "class"
    symbol = _qualify(scope.qualifier, name)
    return _Definition(
        kind=kind,
        symbol=symbol,
        parent=symbol.rpartition(".")[0],
        span=_js_span(node),
        body=value.child_by_field_name("body"),
        bases=_js_bases(value) if kind == "class" else (),
    )


def _js_define(node: Node, scope: _Scope) -> _Definition | None:
    if scope.skip_definitions:
        return None
    kind = _JS_DECLARATION_KINDS.get(node.type)
    if kind is not None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return None
        span = _js_span(node)
        return _define(
            kind,
            _text(name_node),
            scope,
            span,
            node.child_by_field_name("body"),
            first=_leading_sibling(span, _JS_LEADING, _JS_COMMENTS),
            bases=_js_bases(node) if kind in ("class", "interface") else (),
        )
    if node.type == "method_definition":
        name = _js_key_name(node.child_by_field_name("name"))
        if not name:
            return None
        return _define(
            "method",
            name,
            scope,
            node,
            node.child_by_field_name("body"),
            first=_leading_sibling(node, _JS_LEADING, _JS_COMMENTS),
        )
    if node.type in _JS_NAMED_VALUE_TYPES:
        return _js_named_value(node, scope)
    return None


def _js_callee_root(call: Node) -> str:
    """``describe`` for ``describe(...)``, ``describe.each(t)(...)``, ``it.only(...)``."""
    node = call.child_by_field_name("function")
    while node is not None and node.type in ("call_expression", "member_expression"):
        node = node.child_by_field_name("function" if node.type == "call_expression" else "object")
    return _text(node) if node is not None and node.type == "identifier" else ""


def _is_js_test_block(node: Node) -> bool:
    if node.type != "call_expression" or _js_callee_root(node) not in _JS_TEST_BLOCKS:
        return False
    arguments = node.child_by_field_name("arguments")
    return arguments is not None and any(arg.type in _JS_FUNCTION_VALUES for arg in arguments.named_children)


def _js_enter(node: Node, scope: _Scope) -> _Scope | None:
    """Scopes that name things without being chunks: namespaces, object literals, test blocks."""
    if _is_js_test_block(node):
        return replace(scope, skip_definitions=True, in_test=True)
    if node.type == "internal_module":  # TS ``namespace A.B { ... }``
        name_node = node.child_by_field_name("name")
        if name_node is not None and name_node.type != "string":
            return replace(scope, qualifier=_qualify(scope.qualifier, _text(name_node)), container="namespace")
    if node.type == "object" and node.parent is not None:
        name = _js_object_name(node.parent)
        if name:
            return replace(scope, qualifier=_qualify(scope.qualifier, name), container="object")
    return None


def _js_object_name(owner: Node) -> str:
    """What an object literal's methods are qualified with: ``o`` in ``const o = {...}``."""
    if owner.type == "variable_declarator":
        name = owner.child_by_field_name("name")
        return _text(name) if name is not None and name.type == "identifier" else ""
    if owner.type == "pair":
        return _js_key_name(owner.child_by_field_name("key"))
    return ""


def _js_call_target(node: Node) -> str | None:
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        target = _as_target(_dotted(function))
        return None if target == "require" else target  # require() is an import, not a call
    if node.type == "new_expression":
        return _as_target(_dotted(node.child_by_field_name("constructor")))
    return None


def _js_imports(node: Node) -> list[str]:
    if node.type in ("import_statement", "export_statement"):
        source = node.child_by_field_name("source")
        if source is None and node.type == "import_statement":  # TS ``import fs = require("fs")``
            clause = next((c for c in node.named_children if c.type == "import_require_clause"), None)
            source = clause.child_by_field_name("source") if clause is not None else None
        return [_string_value(source)] if source is not None else []
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        is_loader = function is not None and (
            function.type == "import" or (function.type == "identifier" and _text(function) == "require")
        )
        arguments = node.child_by_field_name("arguments")
        if is_loader and arguments is not None and arguments.named_child_count:
            first = arguments.named_child(0)
            if first is not None and first.type == "string":
                return [_string_value(first)]
    return []


# --------------------------------------------------------------------------- Go

_GO_TEST_NAME = re.compile(r"^(?:Test|Benchmark|Fuzz)(?:[^a-z]|$)")
_GO_COMMENTS = frozenset({"comment"})


def _go_receiver(node: Node) -> str:
    """``Router`` for ``func (r *Router)`` and ``func (g G[T])``."""
    receiver = node.child_by_field_name("receiver")
    parameter = receiver.named_child(0) if receiver is not None and receiver.named_child_count else None
    type_node = parameter.child_by_field_name("type") if parameter is not None else None
    return _plain_type(_text(type_node)) if type_node is not None else ""


def _go_embedded(type_node: Node | None) -> tuple[str, ...]:
    """Embedded (anonymous) struct fields and embedded interfaces."""
    if type_node is None:
        return ()
    embedded: list[Node] = []
    if type_node.type == "struct_type":
        for fields in type_node.named_children:
            for declaration in fields.named_children:
                if declaration.type == "field_declaration" and declaration.child_by_field_name("name") is None:
                    embedded.extend(declaration.children_by_field_name("type"))
    elif type_node.type == "interface_type":
        for element in type_node.named_children:
            # a type_elem with one plain type is an embedding; ``~int | ~string`` is a constraint
            if element.type == "type_elem" and element.named_child_count == 1:
                embedded.extend(element.named_children)
    return _type_names(embedded)


def _go_type_definition(node: Node, scope: _Scope) -> _Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    type_node = node.child_by_field_name("type")
    kind = "type"
    if node.type == "type_spec" and type_node is not None:
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(type_node.type, "type")
    body = None
    if kind == "struct" and type_node is not None:
        body = next((c for c in type_node.named_children if c.type == "field_declaration_list"), None)
    # ``type X struct{}`` alone spans its ``type`` keyword; inside ``type ( ... )`` just the spec
    declaration = node.parent
    span = node
    if declaration is not None and declaration.type == "type_declaration":
        specs = [c for c in declaration.named_children if c.type in ("type_spec", "type_alias")]
        if len(specs) == 1:
            span = declaration
    return _define(kind, _text(name), scope, span, body, bases=_go_embedded(type_node) if kind != "type" else ())


def _go_define(node: Node, scope: _Scope) -> _Definition | None:
    if node.type == "function_declaration":
        name = _text(node.child_by_field_name("name"))
        parameters = _text(node.child_by_field_name("parameters"))
        is_test = bool(_GO_TEST_NAME.match(name)) and "testing." in parameters
        return _define("function", name, scope, node, node.child_by_field_name("body"), is_test=is_test)
    if node.type == "method_declaration":
        name = _text(node.child_by_field_name("name"))
        receiver = _go_receiver(node)
        return _Definition(
            kind="method",
            symbol=_qualify(receiver, name),
            parent=receiver,
            span=node,
            body=node.child_by_field_name("body"),
        )
    if node.type in ("type_spec", "type_alias"):
        return _go_type_definition(node, scope)
    return None


def _go_call_target(node: Node) -> str | None:
    if node.type == "call_expression":
        return _as_target(_dotted(node.child_by_field_name("function")))
    return None


def _go_imports(node: Node) -> list[str]:
    if node.type == "import_spec":
        path = _string_value(node.child_by_field_name("path"))
        return [path] if path else []
    return []


# --------------------------------------------------------------------------- Rust

_RUST_ITEM_KINDS = {
    "struct_item": "struct",
    "union_item": "struct",
    "enum_item": "enum",
    "trait_item": "trait",
    "type_item": "type",
}
_RUST_TEST_ATTRIBUTE = re.compile(r"^#\[\s*(?:(?:\w+::)*test(?:_case)?\b|cfg\(\s*test\s*\))")
_RUST_LEADING = frozenset({"attribute_item"})
_RUST_COMMENTS = frozenset({"line_comment", "block_comment"})


def _rust_attributes(node: Node) -> list[Node]:
    """The outer attributes (``#[...]``) written before an item."""
    attributes: list[Node] = []
    sibling = node.prev_named_sibling
    while sibling is not None and (sibling.type in _RUST_LEADING or sibling.type in _RUST_COMMENTS):
        if sibling.type in _RUST_LEADING:
            attributes.append(sibling)
        sibling = sibling.prev_named_sibling
    attributes.reverse()
    return attributes


def _rust_is_test(attributes: list[Node]) -> bool:
    """``#[test]``, ``#[tokio::test]``, ``#[cfg(test)]`` and the like."""
    return any(_RUST_TEST_ATTRIBUTE.match(_text(attribute)) for attribute in attributes)


def _rust_impl_owner(node: Node, scope: _Scope) -> str:
    """The qualified type an ``impl`` block is for: ``Circle`` in ``impl<T> Shape for Circle<T>``."""
    type_node = node.child_by_field_name("type")
    type_name = _plain_type(_text(type_node)) or " ".join(_text(type_node).split())
    return _qualify(scope.qualifier, type_name)


def _rust_trait_impl(node: Node, scope: _Scope, trait: str) -> _Definition:
    """``impl Trait for Type`` is a chunk of its own; its methods are named ``Type.method``.

    Inherent ``impl Type`` blocks are not: their chunk would share the symbol of the
    struct while adding nothing its methods' chunks don't hold.
    """
    owner = _rust_impl_owner(node, scope)
    attributes = _rust_attributes(node)
    return _Definition(
        kind="impl",
        symbol=f"{trait} for {owner}",
        parent=scope.qualifier,
        span=node,
        body=node.child_by_field_name("body"),
        first=attributes[0] if attributes else None,
        members=owner,
        is_test=_rust_is_test(attributes),
        bases=(trait,),
        bases_source=owner,
    )


def _rust_define(node: Node, scope: _Scope) -> _Definition | None:
    kind = _RUST_ITEM_KINDS.get(node.type)
    if node.type == "function_signature_item" and scope.container != "trait":
        return None  # declarations in ``extern`` blocks
    if node.type in ("function_item", "function_signature_item"):
        kind = "method" if scope.container in ("impl", "trait") else "function"
    elif node.type == "impl_item":
        trait = _plain_type(_text(node.child_by_field_name("trait")))
        return _rust_trait_impl(node, scope, trait) if trait else None
    if kind is None:
        return None
    name = node.child_by_field_name("name")
    if name is None:
        return None
    attributes = _rust_attributes(node)
    bounds = node.child_by_field_name("bounds") if kind == "trait" else None
    return _define(
        kind,
        _text(name),
        scope,
        node,
        node.child_by_field_name("body"),
        first=attributes[0] if attributes else None,
        is_test=_rust_is_test(attributes),
        bases=_type_names(b for b in bounds.named_children if b.type != "lifetime") if bounds is not None else (),
    )


def _rust_enter(node: Node, scope: _Scope) -> _Scope | None:
    """``impl Type`` and ``mod name { ... }`` qualify what they hold; ``#[cfg(test)]`` marks tests."""
    if node.type == "impl_item":  # inherent: trait impls are definitions
        return replace(
            scope,
            qualifier=_rust_impl_owner(node, scope),
            container="impl",
            in_test=scope.in_test or _rust_is_test(_rust_attributes(node)),
        )
    if node.type != "mod_item" or node.child_by_field_name("body") is None:
        return None
    name = _text(node.child_by_field_name("name"))
    return replace(
        scope,
        qualifier=_qualify(scope.qualifier, name),
        container="module",
        in_test=scope.in_test or _rust_is_test(_rust_attributes(node)),
    )


def _rust_call_target(node: Node) -> str | None:
    if node.type == "call_expression":  # macro invocations are a different node type
        return _as_target(_dotted(node.child_by_field_name("function")))
    return None


def _rust_use_paths(node: Node | None, prefix: str) -> list[str]:
    """Every path a ``use`` tree names: ``a::{b, c::D}`` -> ``a.b``, ``a.c.D``."""
    if node is None:
        return []
    if node.type in ("use_list",):
        return [path for child in node.named_children for path in _rust_use_paths(child, prefix)]
    if node.type == "scoped_use_list":
        path_node = node.child_by_field_name("path")
        inner = _qualify(prefix, _text(path_node).replace("::", ".")) if path_node is not None else prefix
        return _rust_use_paths(node.child_by_field_name("list"), inner)
    if node.type == "use_as_clause":
        return _rust_use_paths(node.child_by_field_name("path"), prefix)
    if node.type == "use_wildcard":  # ``a::*`` imports from module ``a``
        wildcard = node.named_child(0)
        return _rust_use_paths(wildcard, prefix) if wildcard is not None else ([prefix] if prefix else [])
    path = _qualify(prefix, _text(node).replace("::", "."))
    if path.endswith(".self"):  # ``use a::{self}`` names ``a``
        path = path[: -len(".self")]
    return [path] if path else []


def _rust_imports(node: Node) -> list[str]:
    if node.type == "use_declaration":
        return _rust_use_paths(node.child_by_field_name("argument"), "")
    if node.type == "extern_crate_declaration":
        return [_text(node.child_by_field_name("name"))]
    return []


# --------------------------------------------------------------------------- Java

_JAVA_KINDS = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "method_declaration": "method",
    "constructor_declaration": "constructor",
    "compact_constructor_declaration": "constructor",
}
_JAVA_TEST_ANNOTATION = re.compile(r"(?:^|\.)\w*Test(?:Factory|Template)?$")
_JAVA_COMMENTS = frozenset({"line_comment", "block_comment"})


def _java_bases(node: Node) -> tuple[str, ...]:
    """Types after ``extends`` and ``implements``."""
    bases: list[Node] = []
    for child in node.named_children:
        if child.type == "superclass":
            bases.extend(child.named_children)
        elif child.type in ("super_interfaces", "extends_interfaces"):
            for type_list in child.named_children:
                bases.extend(type_list.named_children)
    return _type_names(bases)


def _java_annotations(node: Node) -> list[str]:
    modifiers = next((c for c in node.named_children if c.type == "modifiers"), None)
    if modifiers is None:
        return []
    return [
        _text(a.child_by_field_name("name"))
        for a in modifiers.named_children
        if a.type in ("marker_annotation", "annotation")
    ]


def _java_define(node: Node, scope: _Scope) -> _Definition | None:
    kind = _JAVA_KINDS.get(node.type)
    name = node.child_by_field_name("name") if kind else None
    if kind is None or name is None:
        return None
    is_test = kind == "method" and any(_JAVA_TEST_ANNOTATION.search(a) for a in _java_annotations(node))
    return _define(
        kind,
        _text(name),
        scope,
        node,
        node.child_by_field_name("body"),
        is_test=is_test,
        bases=_java_bases(node) if kind not in ("method", "constructor") else (),
    )


def _java_call_target(node: Node) -> str | None:
    if node.type == "method_invocation":
        name = _text(node.child_by_field_name("name"))
        owner = node.child_by_field_name("object")
        if owner is None:
            return _as_target(name)
        head = _dotted(owner)
        return _as_target(f"{head}.{name}") if head else None
    if node.type == "object_creation_expression":
        return _as_target(_plain_type(_text(node.child_by_field_name("type"))))
    return None


def _java_imports(node: Node) -> list[str]:
    if node.type == "import_declaration":
        name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        return [_text(name)] if name is not None else []
    return []


# --------------------------------------------------------------------------- language table

_JS_RULES = _Rules(
    define=_js_define,
    enter=_js_enter,
    call_target=_js_call_target,
    imports=_js_imports,
    comment_types=_JS_COMMENTS,
    relevant_types=frozenset(_JS_DECLARATION_KINDS)
    | _JS_NAMED_VALUE_TYPES
    | {"method_definition", "call_expression", "new_expression", "import_statement", "export_statement"}
    | {"internal_module", "object"},
)
_RULES: dict[str, _Rules] = {
    "javascript": _JS_RULES,
    "typescript": _JS_RULES,
    "tsx": _JS_RULES,
    "go": _Rules(
        define=_go_define,
        enter=_no_scope,
        call_target=_go_call_target,
        imports=_go_imports,
        comment_types=_GO_COMMENTS,
        relevant_types=frozenset({"function_declaration", "method_declaration", "type_spec", "type_alias"})
        | {"call_expression", "import_spec"},
    ),
    "rust": _Rules(
        define=_rust_define,
        enter=_rust_enter,
        call_target=_rust_call_target,
        imports=_rust_imports,
        comment_types=_RUST_COMMENTS,
        relevant_types=frozenset(_RUST_ITEM_KINDS)
        | {"function_item", "function_signature_item", "impl_item", "mod_item", "call_expression"}
        | {"use_declaration", "extern_crate_declaration"},
    ),
    "java": _Rules(
        define=_java_define,
        enter=_no_scope,
        call_target=_java_call_target,
        imports=_java_imports,
        comment_types=_JAVA_COMMENTS,
        relevant_types=frozenset(_JAVA_KINDS)
        | {"method_invocation", "object_creation_expression", "import_declaration"},
    ),
}
