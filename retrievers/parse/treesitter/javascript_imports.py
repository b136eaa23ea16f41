"""JavaScript, TypeScript and TSX imports: the modules a file loads and the names it binds from them.

``import``, ``export ... from``, ``require()`` and dynamic ``import()`` name the modules a
file depends on (``js_imports``); the same statements, ``module.exports = x`` and
``export default x`` bind names to what those modules define (``js_aliases``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .nodes import dotted, key_name, string_value, text_of

if TYPE_CHECKING:
    from tree_sitter import Node


def js_imports(node: Node) -> list[str]:
    """The module an ``import`` / ``export ... from`` / ``require("m")`` / ``import("m")`` loads, as written."""
    if node.type in ("import_statement", "export_statement"):
        source = node.child_by_field_name("source")
        if source is None and node.type == "import_statement":  # TS ``import fs = require("fs")``
            clause = next((c for c in node.named_children if c.type == "import_require_clause"), None)
            source = clause.child_by_field_name("source") if clause is not None else None
        return [string_value(source)] if source is not None else []
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        is_loader = function is not None and (
            function.type == "import" or (function.type == "identifier" and text_of(function) == "require")
        )
        arguments = node.child_by_field_name("arguments")
        if is_loader and arguments is not None and arguments.named_child_count:
            first = arguments.named_child(0)
            if first is not None and first.type == "string":
                return [string_value(first)]
    return []


def js_aliases(node: Node) -> list[str]:
    """What names an import, re-export or ``require`` binds: ``module.exported as local``.

    ``import D, { A as B } from "./x"`` -> ``./x.default as D``, ``./x.A as B``; ``import * as ns``
    and ``const ns = require("./x")`` -> ``./x.* as ns``; ``export { a as b } from "./z"`` ->
    ``./z.a as b`` and ``export * from "./w"`` -> ``./w.* as *`` (names the module passes on);
    ``export default foo`` / ``module.exports = foo`` -> ``foo as default`` (no module: this file).
    The exported name never has a dot, so the module is what precedes the last one.
    """
    if node.type == "import_statement":
        return _js_import_aliases(node)
    if node.type == "export_statement":
        return _js_export_aliases(node)
    if node.type == "variable_declarator":
        return _js_require_aliases(node)
    if node.type == "assignment_expression" and dotted(node.child_by_field_name("left")) == "module.exports":
        value = node.child_by_field_name("right")
        return [f"{text_of(value)} as default"] if value is not None and value.type == "identifier" else []
    return []


def _js_import_aliases(node: Node) -> list[str]:
    source = string_value(node.child_by_field_name("source"))
    found: list[str] = []
    for clause in node.named_children:
        if clause.type == "import_require_clause":  # TS ``import fs = require("fs")``
            name = next((c for c in clause.named_children if c.type == "identifier"), None)
            module = string_value(clause.child_by_field_name("source"))
            found += [f"{module}.* as {text_of(name)}"] if name is not None and module else []
        if clause.type != "import_clause" or not source:
            continue
        for part in clause.named_children:
            if part.type == "identifier":
                found.append(f"{source}.default as {text_of(part)}")
            elif part.type == "namespace_import" and part.named_child_count:
                found.append(f"{source}.* as {text_of(part.named_child(0))}")
            elif part.type == "named_imports":
                found += [_js_specifier(source, specifier) for specifier in part.named_children
                          if specifier.type == "import_specifier"]
    return found


def _js_export_aliases(node: Node) -> list[str]:
    source = string_value(node.child_by_field_name("source"))
    if any(child.type == "default" for child in node.children):
        declared = node.child_by_field_name("declaration")
        value = node.child_by_field_name("value")
        name = declared.child_by_field_name("name") if declared is not None else value
        return [f"{text_of(name)} as default"] if name is not None and name.type in (
            "identifier", "type_identifier") else []
    clause = next((c for c in node.named_children if c.type in ("export_clause", "namespace_export")), None)
    if clause is None:
        return [f"{source}.* as *"] if source else []  # ``export * from``
    if clause.type == "namespace_export":
        return [f"{source}.* as {text_of(clause.named_child(0))}"] if source and clause.named_child_count else []
    specifiers = [c for c in clause.named_children if c.type == "export_specifier"]
    if source:
        return [_js_specifier(source, specifier) for specifier in specifiers]
    local = [_js_specifier("", specifier) for specifier in specifiers]
    return [binding for binding in local if binding.split(" as ")[0] != binding.split(" as ")[1]]


def _js_specifier(source: str, specifier: Node) -> str:
    """``{ A as B }`` from ``source`` -> ``source.A as B`` (``A as B`` when the module is this file)."""
    name = key_name(specifier.child_by_field_name("name"))
    alias = specifier.child_by_field_name("alias")
    bound = key_name(alias) if alias is not None else name
    return f"{source}.{name} as {bound}" if source else f"{name} as {bound}"


def _js_require_aliases(node: Node) -> list[str]:
    """``x = require("m")`` -> ``m.* as x``; ``{ a, b: c } = require("m")`` -> ``m.a as a``, ``m.b as c``."""
    value = node.child_by_field_name("value")
    if value is None or value.type != "call_expression" or text_of(value.child_by_field_name("function")) != "require":
        return []
    module = js_imports(value)
    pattern = node.child_by_field_name("name")
    if not module or pattern is None:
        return []
    if pattern.type == "identifier":
        return [f"{module[0]}.* as {text_of(pattern)}"]
    found: list[str] = []
    for part in pattern.named_children if pattern.type == "object_pattern" else ():
        if part.type == "shorthand_property_identifier_pattern":
            found.append(f"{module[0]}.{text_of(part)} as {text_of(part)}")
        elif part.type == "pair_pattern":
            bound = part.child_by_field_name("value")
            if bound is not None and bound.type == "identifier":
                found.append(f"{module[0]}.{key_name(part.child_by_field_name('key'))} as {text_of(bound)}")
    return found
