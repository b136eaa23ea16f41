"""What every grammar's rules share: the walk's records and helpers that read tree-sitter nodes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_TARGET_CHARS = 100
"""Longest edge target or definition name; anything longer is an expression rather than a name."""

CHAIN = re.compile(r"^(?:[^\W\d]|[$#])[\w$#]*(?:\.(?:[^\W\d]|[$#])[\w$#]*)*$")
SELF_NAMES = frozenset({"this", "super", "self"})


@dataclass(frozen=True)
class Scope:
    """Where the walk is: what new names are qualified with, whom calls belong to."""

    qualifier: str = ""
    caller: str = ""
    container: str = ""  # kind of the innermost enclosing definition or namespace
    in_test: bool = False
    skip_definitions: bool = False  # inside a JS describe()/it() callback
    receiver: str = ""  # a callback parameter standing for the object being built (``inst`` in ``(inst) =>``)
    owner: int = -1  # index of the innermost enclosing definition in the walk's list, -1 at file level
    depth: int = 0  # definitions enclosing this point


@dataclass(frozen=True)
class Definition:
    """A definition recognised in the tree, before it becomes chunks."""

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
    receiver: str = ""  # for its members' scope (see Scope.receiver)
    aliases: tuple[str, ...] = ()  # more symbols for the same text (Go ``var a, b = ...``)


def binds_nothing(node: Node) -> list[str]:
    """For grammars whose imports bind no names the resolver reads."""
    return []


@dataclass(frozen=True)
class Rules:
    """What one grammar's definitions, scopes, calls, imports and comments look like."""

    define: Callable[[Node, Scope], Definition | None]
    enter: Callable[[Node, Scope], Scope | None]
    call_target: Callable[[Node], str | None]
    imports: Callable[[Node], list[str]]
    comment_types: frozenset[str]
    relevant_types: frozenset[str]  # node types any of the above acts on; the rest are only walked through
    # ``target as name`` bindings a node makes (imported names, aliases, re-exports): ``aliases`` edges
    aliases: Callable[[Node], list[str]] = binds_nothing
    # ``name: type`` facts a node states (typed parameters, ``x = new Foo()``): ``types`` edges
    types: Callable[[Node], list[str]] = binds_nothing


def first_line(node: Node) -> int:
    """1-based first line of a node."""
    return node.start_point[0] + 1


def last_line(node: Node) -> int:
    """1-based last line; a node ending right after a newline ends on the line before."""
    row, column = node.end_point
    if column == 0 and row > node.start_point[0]:
        return row
    return row + 1


def text_of(node: Node | None) -> str:
    """A node's source text ('' for no node)."""
    return node.text.decode("utf-8", errors="replace") if node is not None and node.text else ""


def qualify(qualifier: str, name: str) -> str:
    """``A.b`` for name ``b`` in scope ``A``."""
    return f"{qualifier}.{name}" if qualifier else name


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


def dotted(node: Node | None) -> str | None:
    """``a.b.c`` for an identifier / member-access chain, None for anything else."""
    if node is None or node.end_byte - node.start_byte > 3 * MAX_TARGET_CHARS:
        return None  # bounds the recursion as well as the result
    if node.type in _NAME_TYPES:
        return text_of(node)
    if node.type in _MEMBER_FIELDS:
        owner_field, member_field = _MEMBER_FIELDS[node.type]
        member = dotted(node.child_by_field_name(member_field))
        owner = node.child_by_field_name(owner_field)
        if member is None or owner is None:
            return member  # Rust ``::name`` has no owner
        head = dotted(owner)
        return f"{head}.{member}" if head else None
    if node.type in _WRAPPER_FIELDS:
        wrapped_field = _WRAPPER_FIELDS[node.type]
        wrapped = node.child_by_field_name(wrapped_field) if wrapped_field else node.named_child(0)
        return dotted(wrapped)
    return None


def as_target(name: str | None) -> str | None:
    """A call target worth an edge: a plain name chain, not bare ``this``/``self``."""
    if not name or name in SELF_NAMES or len(name) > MAX_TARGET_CHARS or not CHAIN.match(name):
        return None
    return name


_TYPE_PREFIX = re.compile(r"^(?:[&*~]|'\w+\s*|(?:mut|dyn|impl|const)\s+)+")


def plain_type(text: str) -> str:
    """``Base<T>``, ``*pkg.Base``, ``&'a mut fmt::Display`` -> ``Base``, ``pkg.Base``, ``fmt.Display``."""
    text = _TYPE_PREFIX.sub("", text.strip())
    text = re.split(r"[<\[({]", text, maxsplit=1)[0]
    text = re.sub(r"\s+", "", text).replace("::", ".").strip(".")
    return text if len(text) <= MAX_TARGET_CHARS and CHAIN.match(text) else ""


def type_names(nodes: Iterable[Node]) -> tuple[str, ...]:
    """The plain type names of type nodes, unnamable ones dropped."""
    return tuple(name for name in (plain_type(text_of(node)) for node in nodes) if name)


def string_value(node: Node | None) -> str:
    """A string literal's text without its quotes."""
    return text_of(node).strip().strip("\"'`") if node is not None else ""


def key_name(node: Node | None) -> str:
    """A property, method or specifier name as written, without quotes."""
    if node is None:
        return ""
    if node.type == "string":
        return string_value(node)
    return text_of(node)


def leading_sibling(node: Node, leading_types: frozenset[str], comment_types: frozenset[str]) -> Node | None:
    """The earliest decorator / attribute sibling placed before a definition, if any."""
    first = None
    sibling = node.prev_named_sibling
    while sibling is not None and (sibling.type in leading_types or sibling.type in comment_types):
        if sibling.type in leading_types:
            first = sibling
        sibling = sibling.prev_named_sibling
    return first


def define(
    kind: str,
    name: str,
    scope: Scope,
    span: Node,
    body: Node | None,
    *,
    first: Node | None = None,
    is_test: bool = False,
    bases: tuple[str, ...] = (),
) -> Definition:
    """A definition named within the current scope (the common case)."""
    return Definition(
        kind=kind,
        symbol=qualify(scope.qualifier, name),
        parent=scope.qualifier,
        span=span,
        body=body,
        first=first,
        is_test=is_test,
        bases=bases,
    )


def no_scope(node: Node, scope: Scope) -> Scope | None:
    """For grammars whose only scopes are their definitions."""
    return None
