"""Java: classes, interfaces, annotation types, enums, records, methods and constructors."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .nodes import Definition, Rules, Scope, as_target, define, dotted, no_scope, plain_type, text_of, type_names

if TYPE_CHECKING:
    from tree_sitter import Node

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
    return type_names(bases)


def _java_annotations(node: Node) -> list[str]:
    modifiers = next((c for c in node.named_children if c.type == "modifiers"), None)
    if modifiers is None:
        return []
    return [
        text_of(a.child_by_field_name("name"))
        for a in modifiers.named_children
        if a.type in ("marker_annotation", "annotation")
    ]


def _java_define(node: Node, scope: Scope) -> Definition | None:
    kind = _JAVA_KINDS.get(node.type)
    name = node.child_by_field_name("name") if kind else None
    if kind is None or name is None:
        return None
    is_test = kind == "method" and any(_JAVA_TEST_ANNOTATION.search(a) for a in _java_annotations(node))
    return define(
        kind,
        text_of(name),
        scope,
        node,
        node.child_by_field_name("body"),
        is_test=is_test,
        bases=_java_bases(node) if kind not in ("method", "constructor") else (),
    )


def _java_call_target(node: Node) -> str | None:
    if node.type == "method_invocation":
        name = text_of(node.child_by_field_name("name"))
        owner = node.child_by_field_name("object")
        if owner is None:
            return as_target(name)
        head = dotted(owner)
        return as_target(f"{head}.{name}") if head else None
    if node.type == "object_creation_expression":
        return as_target(plain_type(text_of(node.child_by_field_name("type"))))
    return None


def _java_imports(node: Node) -> list[str]:
    if node.type == "import_declaration":
        name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        return [text_of(name)] if name is not None else []
    return []


JAVA_RULES = Rules(
    define=_java_define,
    enter=no_scope,
    call_target=_java_call_target,
    imports=_java_imports,
    comment_types=_JAVA_COMMENTS,
    relevant_types=frozenset(_JAVA_KINDS) | {"method_invocation", "object_creation_expression", "import_declaration"},
)
