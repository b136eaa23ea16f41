"""Go: functions, methods, types, and package-level ``var`` / ``const`` specs."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from .nodes import (
    Definition,
    Rules,
    Scope,
    as_target,
    define,
    dotted,
    no_scope,
    plain_type,
    qualify,
    string_value,
    text_of,
    type_names,
)

if TYPE_CHECKING:
    from tree_sitter import Node

_GO_TEST_NAME = re.compile(r"^(?:Test|Benchmark|Fuzz)(?:[^a-z]|$)")
_GO_COMMENTS = frozenset({"comment"})


def _go_receiver(node: Node) -> str:
    """``Router`` for ``func (r *Router)`` and ``func (g G[T])``."""
    receiver = node.child_by_field_name("receiver")
    parameter = receiver.named_child(0) if receiver is not None and receiver.named_child_count else None
    type_node = parameter.child_by_field_name("type") if parameter is not None else None
    return plain_type(text_of(type_node)) if type_node is not None else ""


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
    return type_names(embedded)


def _go_type_definition(node: Node, scope: Scope) -> Definition | None:
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
    return define(kind, text_of(name), scope, span, body, bases=_go_embedded(type_node) if kind != "type" else ())


def _go_declaration(spec: Node) -> Node | None:
    """The ``var`` / ``const`` declaration a spec belongs to (through a ``( ... )`` list)."""
    parent = spec.parent
    if parent is not None and parent.type == "var_spec_list":
        parent = parent.parent
    return parent if parent is not None and parent.type in ("var_declaration", "const_declaration") else None


def _go_value_definition(spec: Node, scope: Scope) -> Definition | None:
    """A package-level ``var`` / ``const`` spec, one symbol per name; ``var f = func(...)`` is a function.

    A spec alone in its declaration spans the ``var`` keyword; inside ``var ( ... )`` just the spec.
    """
    declaration = _go_declaration(spec)
    if declaration is None or declaration.parent is None or declaration.parent.type != "source_file":
        return None  # locals are not symbols
    names = [text_of(child) for child in spec.children_by_field_name("name")]
    if not names:
        return None
    values = spec.child_by_field_name("value")
    function = values.named_child(0) if values is not None and values.named_child_count == 1 else None
    is_function = function is not None and function.type == "func_literal"
    kind = "function" if is_function else ("variable" if spec.type == "var_spec" else "constant")
    siblings = [c for c in spec.parent.named_children if c.type == spec.type] if spec.parent is not None else []
    span = declaration if len(siblings) == 1 else spec
    body = function.child_by_field_name("body") if is_function and function is not None else None
    definition = define(kind, names[0], scope, span, body)
    return replace(definition, aliases=tuple(qualify(scope.qualifier, name) for name in names[1:]))


def _go_define(node: Node, scope: Scope) -> Definition | None:
    if node.type == "function_declaration":
        name = text_of(node.child_by_field_name("name"))
        parameters = text_of(node.child_by_field_name("parameters"))
        is_test = bool(_GO_TEST_NAME.match(name)) and "testing." in parameters
        return define("function", name, scope, node, node.child_by_field_name("body"), is_test=is_test)
    if node.type == "method_declaration":
        name = text_of(node.child_by_field_name("name"))
        receiver = _go_receiver(node)
        return Definition(
            kind="method",
            symbol=qualify(receiver, name),
            parent=receiver,
            span=node,
            body=node.child_by_field_name("body"),
        )
    if node.type in ("type_spec", "type_alias"):
        return _go_type_definition(node, scope)
    if node.type in ("var_spec", "const_spec"):
        return _go_value_definition(node, scope)
    return None


def _go_call_target(node: Node) -> str | None:
    if node.type == "call_expression":
        return as_target(dotted(node.child_by_field_name("function")))
    return None


def _go_imports(node: Node) -> list[str]:
    if node.type == "import_spec":
        path = string_value(node.child_by_field_name("path"))
        return [path] if path else []
    return []


def _go_aliases(node: Node) -> list[str]:
    """``import c "example.com/client"`` -> ``example.com/client as c`` (``as .`` for a dot import)."""
    name = node.child_by_field_name("name") if node.type == "import_spec" else None
    path = string_value(node.child_by_field_name("path")) if name is not None else ""
    if name is None or not path or name.type == "blank_identifier":
        return []
    return [f"{path} as {text_of(name)}"]


GO_RULES = Rules(
    define=_go_define,
    enter=no_scope,
    call_target=_go_call_target,
    imports=_go_imports,
    comment_types=_GO_COMMENTS,
    relevant_types=frozenset({"function_declaration", "method_declaration", "type_spec", "type_alias"})
    | {"var_spec", "const_spec", "call_expression", "import_spec"},
    aliases=_go_aliases,
)
