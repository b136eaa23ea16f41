"""Rust: functions, types, traits, ``impl`` blocks (inherent and trait), ``macro_rules!`` and modules."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from .nodes import Definition, Rules, Scope, as_target, define, dotted, plain_type, qualify, text_of, type_names

if TYPE_CHECKING:
    from tree_sitter import Node

_RUST_ITEM_KINDS = {
    "struct_item": "struct",
    "union_item": "struct",
    "enum_item": "enum",
    "trait_item": "trait",
    "type_item": "type",
    "macro_definition": "macro",
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
    return any(_RUST_TEST_ATTRIBUTE.match(text_of(attribute)) for attribute in attributes)


def _rust_impl_owner(node: Node, scope: Scope) -> str:
    """The qualified type an ``impl`` block is for: ``Circle`` in ``impl<T> Shape for Circle<T>``."""
    type_node = node.child_by_field_name("type")
    type_name = plain_type(text_of(type_node)) or " ".join(text_of(type_node).split())
    return qualify(scope.qualifier, type_name)


def _rust_impl(node: Node, scope: Scope) -> Definition:
    """An ``impl`` block is a chunk; its methods are named ``Type.method``.

    ``impl Trait for Type`` is named ``Trait for Type`` and records that Type inherits
    Trait; an inherent ``impl Type`` is named ``impl Type`` (the type itself is ``Type``).
    """
    owner = _rust_impl_owner(node, scope)
    trait = plain_type(text_of(node.child_by_field_name("trait")))
    attributes = _rust_attributes(node)
    return Definition(
        kind="impl",
        symbol=f"{trait} for {owner}" if trait else f"impl {owner}",
        parent=scope.qualifier,
        span=node,
        body=node.child_by_field_name("body"),
        first=attributes[0] if attributes else None,
        members=owner,
        is_test=_rust_is_test(attributes),
        bases=(trait,) if trait else (),
        bases_source=owner,
    )


def _rust_define(node: Node, scope: Scope) -> Definition | None:
    kind = _RUST_ITEM_KINDS.get(node.type)
    if node.type == "function_signature_item" and scope.container != "trait":
        return None  # declarations in ``extern`` blocks
    if node.type in ("function_item", "function_signature_item"):
        kind = "method" if scope.container in ("impl", "trait") else "function"
    elif node.type == "impl_item":
        return _rust_impl(node, scope)
    elif node.type == "type_item" and scope.container == "impl":
        return None  # ``type Item = u8;`` binds a trait's associated type: the impl's chunk holds it
    if kind is None:
        return None
    name = node.child_by_field_name("name")
    if name is None:
        return None
    attributes = _rust_attributes(node)
    bounds = node.child_by_field_name("bounds") if kind == "trait" else None
    return define(
        kind,
        text_of(name),
        scope,
        node,
        node.child_by_field_name("body"),
        first=attributes[0] if attributes else None,
        is_test=_rust_is_test(attributes),
        bases=type_names(b for b in bounds.named_children if b.type != "lifetime") if bounds is not None else (),
    )


def _rust_enter(node: Node, scope: Scope) -> Scope | None:
    """``mod name { ... }`` qualifies what it holds; ``#[cfg(test)]`` marks tests."""
    if node.type != "mod_item" or node.child_by_field_name("body") is None:
        return None
    name = text_of(node.child_by_field_name("name"))
    return replace(
        scope,
        qualifier=qualify(scope.qualifier, name),
        container="module",
        in_test=scope.in_test or _rust_is_test(_rust_attributes(node)),
    )


def _rust_call_target(node: Node) -> str | None:
    if node.type == "call_expression":  # macro invocations are a different node type
        return as_target(dotted(node.child_by_field_name("function")))
    return None


def _rust_use_paths(node: Node | None, prefix: str) -> list[str]:
    """Every path a ``use`` tree names: ``a::{b, c::D}`` -> ``a.b``, ``a.c.D``."""
    if node is None:
        return []
    if node.type in ("use_list",):
        return [path for child in node.named_children for path in _rust_use_paths(child, prefix)]
    if node.type == "scoped_use_list":
        path_node = node.child_by_field_name("path")
        inner = qualify(prefix, text_of(path_node).replace("::", ".")) if path_node is not None else prefix
        return _rust_use_paths(node.child_by_field_name("list"), inner)
    if node.type == "use_as_clause":
        return _rust_use_paths(node.child_by_field_name("path"), prefix)
    if node.type == "use_wildcard":  # ``a::*`` imports from module ``a``
        wildcard = node.named_child(0)
        return _rust_use_paths(wildcard, prefix) if wildcard is not None else ([prefix] if prefix else [])
    path = qualify(prefix, text_of(node).replace("::", "."))
    if path.endswith(".self"):  # ``use a::{self}`` names ``a``
        path = path[: -len(".self")]
    return [path] if path else []


def _rust_imports(node: Node) -> list[str]:
    if node.type == "use_declaration":
        return _rust_use_paths(node.child_by_field_name("argument"), "")
    if node.type == "extern_crate_declaration":
        return [text_of(node.child_by_field_name("name"))]
    return []


RUST_RULES = Rules(
    define=_rust_define,
    enter=_rust_enter,
    call_target=_rust_call_target,
    imports=_rust_imports,
    comment_types=_RUST_COMMENTS,
    relevant_types=frozenset(_RUST_ITEM_KINDS)
    | {"function_item", "function_signature_item", "impl_item", "mod_item", "call_expression"}
    | {"use_declaration", "extern_crate_declaration"},
)
