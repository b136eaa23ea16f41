"""Chunks and edges of a Python file, read with the standard library's ``ast``.

A chunk per ``def`` and ``class`` (a class's chunk is its header and class-level statements; its methods
are chunks of their own) and one for the module's remaining lines; edges for calls (the target as written),
imports, aliases, base classes and the types names are given (``types``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from ..core.model import Chunk, Edge, ParsedFile
from ..source.languages import is_test_path
from .line_chunks import numbered_chunks, window_chunks
from .windows import CONTAINER_WINDOW_LINES, MAX_CHUNK_LINES, MAX_DEFINITION_DEPTH, source_lines

MAX_TARGET_CHARS = 100
"""Longest call target kept; anything longer is an expression rather than a name."""
MAX_TYPE_CHARS = 200
"""Longer annotations (a long ``Union``) are no help in naming one class."""


def dotted_name(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain (calls on calls become ``f().g`` -> ``g``)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def typed_name(node: ast.AST) -> str:
    """``x`` or ``self.x``: a name whose type an assignment or an annotation states (``""`` for others)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
        return f"{node.value.id}.{node.attr}"
    return ""


def produced_by(value: ast.AST) -> str:
    """What an assigned value's type comes from: ``Foo()`` for a call, ``~name`` for another name.

    A call's type is what the callee builds or returns; ``self.report = report`` has ``report``'s type.
    """
    if isinstance(value, ast.Await):
        value = value.value
    if isinstance(value, ast.Name):
        return f"~{value.id}"
    if not isinstance(value, ast.Call):
        return ""
    name = dotted_name(value.func)
    return f"{name}()" if name else ""


def call_target(node: ast.AST) -> str:
    """A call's target as written, with what the receiver is kept visible.

    ``a.b.c`` for a name chain, ``super().m`` and ``self.client().send`` through calls, and
    ``.join`` (a leading dot) when the receiver is no name at all (``", ".join``, ``x[0].send``):
    a bare ``send`` must mean a name in scope, or the resolver would take a method for a function.
    ``""`` for targets that are no chain (``x[0]()``) or longer than ``MAX_TARGET_CHARS``.
    """
    pieces: list[str] = []
    while isinstance(node, (ast.Attribute, ast.Call)) and len(pieces) < MAX_TARGET_CHARS:
        pieces.append("." + node.attr if isinstance(node, ast.Attribute) else "()")
        node = node.value if isinstance(node, ast.Attribute) else node.func
    if isinstance(node, ast.Name):
        pieces.append(node.id)
    while pieces and pieces[-1] == "()":  # ``(a or b)().m``: the receiver is still no name
        pieces.pop()
    target = "".join(reversed(pieces))
    return target if len(target) <= MAX_TARGET_CHARS and not target.endswith("()") else ""


def header_end(text: str) -> int:
    """Index of the ``:`` that ends a ``def``/``class`` header (outside brackets and strings), or -1."""
    depth = 0
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif text.startswith(quote, index):
                index += len(quote) - 1
                quote = ""
        elif char in "\"'":
            quote = text[index : index + 3] if text[index : index + 3] in ('"""', "'''") else char
            index += len(quote) - 1
        elif char == "#":
            newline = text.find("\n", index)
            if newline == -1:
                return -1
            index = newline
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0:
            return index
        index += 1
    return -1


def _signature(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """The ``def``/``class`` header without decorators, comments or a same-line body."""
    body = getattr(node, "body", None)
    last = max(body[0].lineno, node.lineno) if body else node.lineno
    header = "\n".join(lines[node.lineno - 1 : last])
    end = header_end(header)
    if end != -1:
        header = header[: end + 1]
    return " ".join(header.split())[:200]


def _defaults(node: ast.AST) -> list[ast.expr]:
    arguments = getattr(node, "args", None)
    if not isinstance(arguments, ast.arguments):
        return []
    return [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]


class _PythonVisitor(ast.NodeVisitor):
    """Walks one module, collecting a chunk per def/class and the edges inside each."""

    def __init__(self, path: str, lines: list[str], is_test: bool) -> None:
        self.path = path
        self.lines = lines
        self.is_test = is_test
        self.scope: list[tuple[str, str]] = []  # (name, kind)
        self.chunks: list[Chunk] = []
        self.edges: list[Edge] = []
        self.covered: set[int] = set()
        self.child_lines: dict[str, set[int]] = {}

    def visit(self, node: ast.AST) -> None:
        """``NodeVisitor.visit``, with each node type's handler looked up once and leaves not walked.

        A module has tens of thousands of nodes: the stock lookup (a method name built per node) and
        walks into names, constants and operators were half of parsing a Python file.
        """
        handler = _HANDLERS.get(type(node))
        if handler is None:
            handler = _HANDLERS[type(node)] = _handler_for(type(node))
        handler(self, node)

    def generic_visit(self, node: ast.AST) -> None:  # noqa: D102
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    @property
    def qualified(self) -> str:
        return ".".join(name for name, _ in self.scope)

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, kind: str) -> None:
        if len(self.scope) >= MAX_DEFINITION_DEPTH:  # its calls belong to the enclosing definition
            self.generic_visit(node)
            return
        parent = self.qualified
        # Decorators and default values run in the enclosing scope: their calls belong to it.
        for expression in [*node.decorator_list, *_defaults(node)]:
            self.visit(expression)
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        end = node.end_lineno or node.lineno
        self.scope.append((node.name, kind))
        symbol = self.qualified
        self.covered.update(range(start, end + 1))
        if parent in self.child_lines:
            self.child_lines[parent].update(range(start, end + 1))
        self.child_lines[symbol] = set()
        if not isinstance(node, ast.ClassDef):
            arguments = node.args
            for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                if argument.annotation is not None:
                    self._type_fact(argument.arg, ast.unparse(argument.annotation), node.lineno)
        for child in node.body:
            self.visit(child)
        self.scope.pop()
        if kind == "class":
            # The class chunk is its header and class-level statements; methods are their own chunks.
            own = [n for n in range(start, end + 1) if n not in self.child_lines[symbol]]
            window_lines = CONTAINER_WINDOW_LINES
        else:
            own = list(range(start, end + 1))
            window_lines = MAX_CHUNK_LINES
        is_test = self.is_test or node.name.startswith("test") or (
            kind == "class" and node.name.startswith("Test")
        )
        template = Chunk(path=self.path, language="python", kind=kind, symbol=symbol, start_line=start,
                         end_line=end, text="", signature=_signature(self.lines, node),
                         docstring=(ast.get_docstring(node, clean=True) or "")[:1000], parent=parent,
                         is_test=is_test)
        self.chunks.extend(numbered_chunks(template, [(n, self.lines[n - 1]) for n in own], window_lines))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:  # noqa: D102, N802
        kind = "method" if self.scope and self.scope[-1][1] == "class" else "function"
        self._definition(node, kind)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:  # noqa: D102, N802
        kind = "method" if self.scope and self.scope[-1][1] == "class" else "function"
        self._definition(node, kind)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:  # noqa: D102, N802
        for base in node.bases if len(self.scope) < MAX_DEFINITION_DEPTH else ():
            name = dotted_name(base.value if isinstance(base, ast.Subscript) else base)  # ``Base[T]`` -> ``Base``
            if name and name != "object":
                self.edges.append(Edge(self.path, ".".join([*(n for n, _ in self.scope), node.name]),
                                       name, "inherits", node.lineno))
        self._definition(node, "class")

    def visit_Call(self, node: ast.Call) -> None:  # noqa: D102, N802
        name = call_target(node.func)
        if name:
            self.edges.append(Edge(self.path, self.qualified, name, "calls", node.lineno))
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:  # noqa: D102, N802
        if len(node.targets) == 1:
            self._type_fact(typed_name(node.targets[0]), produced_by(node.value), node.lineno)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:  # noqa: D102, N802
        self._type_fact(typed_name(node.target), ast.unparse(node.annotation), node.lineno)
        self.generic_visit(node)

    def _type_fact(self, name: str, type_text: str, line: int) -> None:
        """A ``types`` edge ``name: Foo`` (annotated) or ``name: make()`` (assigned a call's result)."""
        if name and type_text and len(type_text) <= MAX_TYPE_CHARS:
            self.edges.append(Edge(self.path, self.qualified, f"{name}: {type_text}", "types", line))

    def visit_Import(self, node: ast.Import) -> None:  # noqa: D102, N802
        for alias in node.names:
            self.edges.append(Edge(self.path, self.qualified, alias.name, "imports", node.lineno))
            self._alias(alias, alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:  # noqa: D102, N802
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            target = f"{module}.{alias.name}" if module and not module.endswith(".") else module + alias.name
            self.edges.append(Edge(self.path, self.qualified, target, "imports", node.lineno))
            self._alias(alias, target, node.lineno)

    def _alias(self, alias: ast.alias, target: str, line: int) -> None:
        """``import a.b as c`` / ``from a import b as c``: an ``aliases`` edge ``a.b as c`` (calls through ``c``)."""
        if alias.asname and alias.asname != alias.name.rsplit(".", 1)[-1]:
            self.edges.append(Edge(self.path, self.qualified, f"{target} as {alias.asname}", "aliases", line))


# Nodes with nothing to collect below them: a name, a constant, a context or an operator.
_LEAVES = (ast.Name, ast.Constant, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
_HANDLERS: dict[type, Callable[[_PythonVisitor, Any], None]] = {}


def _handler_for(node_type: type) -> Callable[[_PythonVisitor, Any], None]:
    if issubclass(node_type, _LEAVES):
        return lambda visitor, node: None
    handler = getattr(_PythonVisitor, "visit_" + node_type.__name__, None)
    return handler if handler is not None else _PythonVisitor.generic_visit


def parse_python(path: str, source: str) -> ParsedFile:
    """Chunk a Python file with ``ast``; a file that does not parse becomes line windows."""
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return ParsedFile(chunks=window_chunks(path, source, "python"), error=f"syntax error: {error}")
    lines = source_lines(source)
    visitor = _PythonVisitor(path, lines, is_test_path(path, "python"))
    for node in tree.body:
        visitor.visit(node)
    module_lines = [n for n in range(1, len(lines) + 1) if n not in visitor.covered and lines[n - 1].strip()]
    chunks = visitor.chunks
    if module_lines:
        template = Chunk(path=path, language="python", kind="module", symbol=PurePosixPath(path).stem,
                         start_line=module_lines[0], end_line=module_lines[-1], text="",
                         docstring=(ast.get_docstring(tree, clean=True) or "")[:1000],
                         is_test=visitor.is_test)
        chunks[:0] = numbered_chunks(template, [(n, lines[n - 1]) for n in module_lines], MAX_CHUNK_LINES)
    chunks.sort(key=lambda c: (c.start_line, -c.end_line))
    return ParsedFile(chunks=chunks, edges=visitor.edges)
