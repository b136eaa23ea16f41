"""JavaScript, TypeScript and TSX: what their definitions, scopes, calls and imports look like.

Besides declarations, a function is often a *value*: stored under a name
(``const f = () => {}``, ``exports.f = function () {}``, ``{ m() {} }``), or passed to a
factory whose result is stored (``export const Thing = makeKind("Thing", (inst) => {...})``).
Both are definitions named after where they are stored; members the callback hangs on
its first parameter (``inst.parse = ...``) are named under it (``Thing.parse``). Inside a
function body such a call is a local value (``const result = produce(base, (draft) => ...)``):
its callback belongs to the enclosing function. A long callback passed to a call at file level
(``app.get("/x", (req, res) => {...})``) is a definition of its own, honestly named after the
call it is passed to (``app.get("/x", …) callback``), never after the callee: the callee is
defined elsewhere, and a lookup of its definition must not find the call site. Nor is a one-line member of
an unnamed object, written after other code (``Object.defineProperty(exports, "x", { get: function () {...} })``),
a definition: its line is the statement's.

What a file imports and the names it binds from other modules are read in ``javascript_imports``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .javascript_imports import js_aliases, js_imports
from .nodes import (
    SELF_NAMES,
    Definition,
    Rules,
    Scope,
    as_target,
    define,
    dotted,
    first_line,
    key_name,
    last_line,
    leading_sibling,
    plain_type,
    qualify,
    text_of,
)

if TYPE_CHECKING:
    from tree_sitter import Node

FILE_LEVEL_CALLBACK_MIN_LINES = 5
"""A callback passed to a call at file level becomes a chunk from this many lines on."""
MAX_ARGUMENT_LABEL_CHARS = 40
"""Longest first argument quoted in a callback's name (``each(objectTraps, …) callback``)."""

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
    elif node.type in ("assignment_expression", "call_expression") and parent is not None \
            and parent.type == "expression_statement":
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
    names = (as_target(dotted(base)) or plain_type(text_of(base)) for base in bases)
    return tuple(name for name in names if name)


def _js_assigned_name(left: Node, scope: Scope) -> tuple[str, str] | None:
    """(name, kind) for ``exports.f = ...``, ``Foo.prototype.m = ...``, ``inst.m = ...``, ``f = ...``."""
    chain = dotted(left)
    if not chain or chain.split(".")[0] in SELF_NAMES:
        return None
    head, _, rest = chain.partition(".")
    if scope.receiver and head == scope.receiver and rest:
        return rest, "method"  # a member hung on the object a factory callback builds
    for prefix in ("module.exports.", "exports."):
        if chain.startswith(prefix):
            return chain[len(prefix) :], "function"
    if ".prototype." in chain:
        return chain.replace(".prototype.", "."), "method"
    if chain in ("module.exports", "exports"):
        return None
    return chain, "function"


def _callback_argument(call: Node) -> Node | None:
    """The first function passed to a call, or to a call among its arguments (``memo(forwardRef(fn))``)."""
    arguments = call.child_by_field_name("arguments")
    if arguments is None:
        return None
    nested = None
    for argument in arguments.named_children:
        if argument.type in _JS_FUNCTION_VALUES:
            return argument
        inner_arguments = argument.child_by_field_name("arguments") if argument.type == "call_expression" else None
        if nested is None and inner_arguments is not None:
            nested = next((a for a in inner_arguments.named_children if a.type in _JS_FUNCTION_VALUES), None)
    return nested


def _receiver_of(function: Node) -> str:
    """The first parameter's name of a callback: the object it fills in, by convention."""
    parameters = function.child_by_field_name("parameters") or function.child_by_field_name("parameter")
    if parameters is None:
        return ""
    if parameters.type == "identifier":  # ``inst => {...}``
        return text_of(parameters)
    first = parameters.named_child(0) if parameters.named_child_count else None
    if first is not None and first.type in ("required_parameter", "optional_parameter"):
        first = first.child_by_field_name("pattern")
    return text_of(first) if first is not None and first.type == "identifier" else ""


def _looks_like_type_name(name: str) -> bool:
    """``Thing`` and ``$Thing`` name types by convention; ``thing`` names a value."""
    bare = name.lstrip("$_")
    return bool(bare) and bare[0].isupper()


def _js_named_value(node: Node, scope: Scope) -> Definition | None:
    """A function or class stored under a name: ``const f = () => ...``, ``{ m: function () {} }``.

    A call whose argument is a function counts too: ``const Thing = make((inst) => {...})``
    defines ``Thing`` (a class if its name is capitalised), with the callback's body.
    """
    value = node.child_by_field_name("right" if node.type == "assignment_expression" else "value")
    while value is not None and value.type in ("await_expression", "parenthesized_expression") \
            and value.named_child_count == 1:
        value = value.named_child(0)
    if value is None:
        return None
    function = value if value.type in _JS_FUNCTION_VALUES or value.type == "class" else None
    if function is None and value.type == "call_expression":
        function = _callback_argument(value)
    if function is None or (node.type == "pair" and _inline_in_anonymous_object(node)):
        return None

    kind = "function" if node.type == "variable_declarator" else "method"
    receiver_member = False
    if node.type == "variable_declarator":
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.type != "identifier":
            return None  # destructuring patterns name nothing
        name = text_of(name_node)
    elif node.type == "pair":
        name = key_name(node.child_by_field_name("key"))
    elif node.type == "assignment_expression":
        left = node.child_by_field_name("left")
        assigned = _js_assigned_name(left, scope) if left is not None else None
        if assigned is None:
            if function.child_by_field_name("name") is None:
                return None
            assigned = (text_of(function.child_by_field_name("name")), "function")  # module.exports = function f() {}
        name, kind = assigned
        receiver_member = bool(scope.receiver) and (dotted(left) or "").startswith(scope.receiver + ".")
    else:  # class field: TS names it "name", JS "property"
        name = key_name(node.child_by_field_name("name") or node.child_by_field_name("property"))
    if not name:
        return None

    made_by_call = function is not value
    if made_by_call and not receiver_member and _inside_function_body(node):
        return None  # a local holding a call's result: the callback is the enclosing function's
    if function.type == "class":
        kind = "class"
    elif made_by_call and kind == "function" and _looks_like_type_name(name.rpartition(".")[2]):
        kind = "class"  # ``const Thing = make(...)``, and CommonJS's ``exports.Thing = make(...)``
    symbol = qualify(scope.qualifier, name)
    return Definition(
        kind=kind,
        symbol=symbol,
        parent=scope.qualifier if receiver_member else symbol.rpartition(".")[0],
        span=_js_span(node),
        body=function.child_by_field_name("body"),
        bases=_js_bases(function) if function.type == "class" else (),
        receiver=_receiver_of(function) if made_by_call else "",
    )


_JS_FUNCTION_BOUNDARIES = _JS_FUNCTION_VALUES | {"function_declaration", "generator_function_declaration",
                                                 "method_definition"}


def _inline_in_anonymous_object(member: Node) -> bool:
    """A member of an object nobody names, written on one line after other code of its statement.

    ``Object.defineProperty(exports, "x", { get: function () { return x; } })``, ``return { error: () => e }``:
    its line is the statement's, which a chunk of its own would list as a definition (a call as method ``get``).
    """
    owner = member.parent
    if owner is None or owner.type != "object" or first_line(member) != last_line(member):
        return False
    if owner.parent is not None and _js_object_name(owner.parent):
        return False  # ``const api = { get() { ... } }``: a named object's members are its methods
    before = member.prev_sibling  # the object's ``{``, a comma or the member before
    return before is not None and last_line(before) == first_line(member)


def _inside_function_body(node: Node) -> bool:
    """Whether ``node`` sits in a function's body rather than at file, namespace or class level."""
    parent = node.parent
    while parent is not None:
        if parent.type in _JS_FUNCTION_BOUNDARIES:
            return True
        if parent.type in ("class_body", "program"):
            return False
        parent = parent.parent
    return False


def _file_level_callback(node: Node, scope: Scope) -> Definition | None:
    """``app.get("/x", (req, res) => {...})`` written at file level: a definition named after the call.

    A named function expression keeps its own name (``each(items, function visit() {...})``
    defines ``visit``); an anonymous one is ``each(items, …) callback``. Never the callee's
    bare name: that would make the call site a second definition of the callee.
    """
    if scope.caller or scope.owner >= 0 or node.parent is None or node.parent.type != "expression_statement":
        return None
    if _js_callee_root(node) in _JS_TEST_BLOCKS:
        return None
    callee = as_target(dotted(node.child_by_field_name("function")))
    function = _callback_argument(node)
    if not callee or function is None or last_line(function) - first_line(function) + 1 < FILE_LEVEL_CALLBACK_MIN_LINES:
        return None
    own_name = function.child_by_field_name("name")
    name = text_of(own_name) if own_name is not None else _callback_name(node, callee, function)
    return define("function", name, scope, _js_span(node), function.child_by_field_name("body"))


def _callback_name(call: Node, callee: str, function: Node) -> str:
    """``each(objectTraps, …) callback``: the call as written, its first argument when short and plain."""
    arguments = call.child_by_field_name("arguments")
    first = arguments.named_child(0) if arguments is not None and arguments.named_child_count else None
    label = ""
    if first is not None and first != function and first.type in ("identifier", "string", "number"):
        text = text_of(first)
        # a dot would read as a qualifier in the symbol (``a.b``): such an argument stays unquoted
        if len(text) <= MAX_ARGUMENT_LABEL_CHARS and "." not in text and "\n" not in text:
            label = text + ", "
    return f"{callee}({label}…) callback"


def _js_define(node: Node, scope: Scope) -> Definition | None:
    if scope.skip_definitions:
        return None
    kind = _JS_DECLARATION_KINDS.get(node.type)
    if kind is not None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return None
        span = _js_span(node)
        return define(
            kind,
            text_of(name_node),
            scope,
            span,
            node.child_by_field_name("body"),
            first=leading_sibling(span, _JS_LEADING, _JS_COMMENTS),
            bases=_js_bases(node) if kind in ("class", "interface") else (),
        )
    if node.type == "method_definition":
        name = key_name(node.child_by_field_name("name"))
        if not name or _inline_in_anonymous_object(node):
            return None
        return define(
            "method",
            name,
            scope,
            node,
            node.child_by_field_name("body"),
            first=leading_sibling(node, _JS_LEADING, _JS_COMMENTS),
        )
    if node.type in _JS_NAMED_VALUE_TYPES:
        return _js_named_value(node, scope)
    if node.type == "call_expression":
        return _file_level_callback(node, scope)
    return None


def _js_callee_root(call: Node) -> str:
    """``describe`` for ``describe(...)``, ``describe.each(t)(...)``, ``it.only(...)``."""
    node = call.child_by_field_name("function")
    while node is not None and node.type in ("call_expression", "member_expression"):
        node = node.child_by_field_name("function" if node.type == "call_expression" else "object")
    return text_of(node) if node is not None and node.type == "identifier" else ""


def _is_js_test_block(node: Node) -> bool:
    if node.type != "call_expression" or _js_callee_root(node) not in _JS_TEST_BLOCKS:
        return False
    arguments = node.child_by_field_name("arguments")
    return arguments is not None and any(arg.type in _JS_FUNCTION_VALUES for arg in arguments.named_children)


def _js_enter(node: Node, scope: Scope) -> Scope | None:
    """Scopes that name things without being chunks: namespaces, object literals, test blocks."""
    if _is_js_test_block(node):
        return replace(scope, skip_definitions=True, in_test=True)
    if node.type == "internal_module":  # TS ``namespace A.B { ... }``
        name_node = node.child_by_field_name("name")
        if name_node is not None and name_node.type != "string":
            return replace(scope, qualifier=qualify(scope.qualifier, text_of(name_node)), container="namespace")
    if node.type == "object" and node.parent is not None:
        name = _js_object_name(node.parent)
        if name:
            return replace(scope, qualifier=qualify(scope.qualifier, name), container="object")
    return None


def _js_object_name(owner: Node) -> str:
    """What an object literal's methods are qualified with: ``o`` in ``const o = {...}``."""
    if owner.type == "variable_declarator":
        name = owner.child_by_field_name("name")
        return text_of(name) if name is not None and name.type == "identifier" else ""
    if owner.type == "pair":
        return key_name(owner.child_by_field_name("key"))
    return ""


def _js_call_target(node: Node) -> str | None:
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        target = as_target(dotted(function)) or _js_method_of_value(function)
        return None if target == "require" else target  # require() is an import, not a call
    if node.type == "new_expression":
        return as_target(dotted(node.child_by_field_name("constructor")))
    return None


def _js_method_of_value(function: Node | None) -> str | None:
    """``new Foo().m`` -> ``Foo().m``; ``a().m``, ``x[0].m``, ``"s".m`` -> ``.m``.

    A method called on a value that is no name chain keeps its leading dot, so the resolver
    never takes it for a function in scope and callers list it *by name only*.
    """
    if function is None or function.type != "member_expression":
        return None
    method = text_of(function.child_by_field_name("property"))
    if not as_target(method) or "." in method:
        return None
    receiver = function.child_by_field_name("object")
    while receiver is not None and receiver.type == "parenthesized_expression" and receiver.named_child_count == 1:
        receiver = receiver.named_child(0)
    if receiver is not None and receiver.type == "new_expression":
        constructor = as_target(dotted(receiver.child_by_field_name("constructor")))
        if constructor:
            return f"{constructor}().{method}"
    return "." + method


def _js_value_type(value: Node | None) -> str:
    """What an assigned value's type comes from: ``Foo()`` for ``new Foo()`` or a call, ``~name`` for a name."""
    if value is not None and value.type == "await_expression" and value.named_children:
        value = value.named_children[0]
    if value is None:
        return ""
    if value.type == "identifier":
        return "~" + text_of(value)
    field = {"new_expression": "constructor", "call_expression": "function"}.get(value.type)
    callee = dotted(value.child_by_field_name(field)) if field else None
    return f"{callee}()" if callee else ""


def _js_annotation(node: Node) -> str:
    """``Foo`` of a ``: Foo`` type annotation."""
    annotation = node.child_by_field_name("type")
    return text_of(annotation).lstrip(":").strip() if annotation is not None else ""


def _js_types(node: Node) -> list[str]:
    """``name: type`` facts: typed parameters and fields, ``x = new Foo()``, ``this.x = ...``."""
    if node.type == "variable_declarator":
        name = node.child_by_field_name("name")
        spec = _js_annotation(node) or _js_value_type(node.child_by_field_name("value"))
        return [f"{text_of(name)}: {spec}"] if name is not None and name.type == "identifier" and spec else []
    if node.type in ("required_parameter", "optional_parameter", "public_field_definition"):
        name = node.child_by_field_name("pattern" if node.type != "public_field_definition" else "name")
        spec = _js_annotation(node)
        return [f"{text_of(name)}: {spec}"] if name is not None and name.type.endswith("identifier") and spec else []
    if node.type == "assignment_expression":
        left = dotted(node.child_by_field_name("left"))
        spec = _js_value_type(node.child_by_field_name("right"))
        return [f"{left}: {spec}"] if left and left.count(".") == 1 and left.startswith("this.") and spec else []
    return []


JS_RULES = Rules(
    define=_js_define,
    enter=_js_enter,
    call_target=_js_call_target,
    imports=js_imports,
    comment_types=_JS_COMMENTS,
    relevant_types=frozenset(_JS_DECLARATION_KINDS)
    | _JS_NAMED_VALUE_TYPES
    | {"method_definition", "call_expression", "new_expression", "import_statement", "export_statement"}
    | {"internal_module", "object"}
    | {"variable_declarator", "required_parameter", "optional_parameter", "public_field_definition"}
    | {"assignment_expression"},
    aliases=js_aliases,
    types=_js_types,
)
