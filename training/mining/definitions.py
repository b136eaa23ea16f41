"""The definitions of one source file, with their doc comments and line spans, in all six languages.

Python is read with ``ast``; JavaScript, TypeScript, Go, Rust and Java with tree-sitter. A definition is a
function, method or class-like type reached without entering a function body (a nested helper belongs to the
function around it). Lines are 1-based and inclusive. ``start`` is the definition's first line after its doc
comment (decorators and attributes included); a container's ``head_end`` is the last line before its first
member, which is its span when it is the target of a docstring query.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .common import is_declaration_file


@dataclass
class Doc:
    """A doc comment: its text with markers, the line ranges it occupies, and whether it shares a line with code."""

    raw: str
    ranges: list[tuple[int, int]]
    inline: bool = False
    # Python: a docstring that is the whole body becomes ``pass`` (at this column) so the file still parses.
    pass_column: int = -1


@dataclass
class Definition:
    """One definition of a file."""

    symbol: str
    name: str
    kind: str  # function method class struct interface trait enum type
    start: int
    end: int
    head_end: int = 0
    doc: Doc | None = None
    public: bool = True
    has_body: bool = True
    deprecated: bool = False
    container: bool = False
    members: list[Definition] = field(default_factory=list)

    @property
    def target_end(self) -> int:
        """Last line of the span a query about this definition points at (a container's head)."""
        return self.head_end if self.container else self.end


def _finish_heads(defs: list[Definition]) -> list[Definition]:
    for definition in defs:
        definition.head_end = definition.end
        if definition.container and definition.members:
            first_member = min(member.start for member in definition.members)
            doc_starts = [m.doc.ranges[0][0] for m in definition.members if m.doc and not m.doc.inline]
            first_member = min([first_member] + doc_starts)
            definition.head_end = max(definition.start, min(definition.end, first_member - 1))
    return defs


# ---------------------------------------------------------------------------------------------------- Python
def _python_doc(lines: list[str], node) -> Doc | None:
    body = node.body
    if not body or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Constant):
        return None
    if not isinstance(body[0].value.value, str):
        return None
    statement = body[0]
    before = lines[statement.lineno - 1][: statement.col_offset]
    after = lines[statement.end_lineno - 1][statement.end_col_offset :].strip()
    inline = bool(before.strip()) or statement.lineno == node.lineno or (after and after[0] not in ";#") or (
        len(body) > 1 and body[1].lineno <= statement.end_lineno)
    return Doc(raw=statement.value.value, ranges=[(statement.lineno, statement.end_lineno)], inline=bool(inline),
               pass_column=statement.col_offset if len(body) == 1 else -1)


def _python_walk(lines, body, prefix, out, parent_public=True):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            symbol = prefix + node.name
            is_class = isinstance(node, ast.ClassDef)
            kind = "class" if is_class else ("method" if prefix else "function")
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            doc = _python_doc(lines, node)
            public = parent_public and not node.name.startswith("_")
            deprecated = bool(doc and "deprecated" in doc.raw.lower()) or any(
                "deprecat" in ast.unparse(d).lower() for d in node.decorator_list)
            definition = Definition(symbol, node.name, kind, start, node.end_lineno, doc=doc, public=public,
                                    deprecated=deprecated, container=is_class)
            out.append(definition)
            if is_class:
                before = len(out)
                _python_walk(lines, node.body, symbol + ".", out, public)
                definition.members = [d for d in out[before:] if d.symbol.count(".") == symbol.count(".") + 1]
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.TryStar)):
            for name in ("body", "orelse", "finalbody"):
                _python_walk(lines, getattr(node, name, []) or [], prefix, out, parent_public)
            for handler in getattr(node, "handlers", []):
                _python_walk(lines, handler.body, prefix, out, parent_public)


def python_definitions(source: str) -> list[Definition]:
    """Definitions of a Python file ([] when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out: list[Definition] = []
    _python_walk(source.splitlines(), tree.body, "", out)
    return _finish_heads(out)


# ---------------------------------------------------------------------------------------------------- tree-sitter
_PARSERS: dict = {}


def parser_for(language: str):
    """A tree-sitter parser for one of the five tree-sitter languages (tsx separate from typescript)."""
    if language not in _PARSERS:
        from tree_sitter import Language, Parser

        if language in ("typescript", "tsx"):
            import tree_sitter_typescript as grammar

            capsule = grammar.language_typescript() if language == "typescript" else grammar.language_tsx()
        else:
            module = {"javascript": "tree_sitter_javascript", "go": "tree_sitter_go", "rust": "tree_sitter_rust",
                      "java": "tree_sitter_java"}[language]
            capsule = __import__(module).language()
        _PARSERS[language] = Parser(Language(capsule))
    return _PARSERS[language]


def first_line(node) -> int:
    """1-based first line of a node."""
    return node.start_point[0] + 1


def last_line(node) -> int:
    """1-based last line of a node (a line comment's trailing newline does not count)."""
    row, column = node.end_point
    if column == 0 and row > node.start_point[0]:
        row -= 1
    return row + 1


def text_of(node) -> str:
    """A node's source text."""
    return node.text.decode("utf-8", "replace") if node is not None else ""


class _File:
    def __init__(self, rel: str, data: bytes):
        self.rel = rel
        self.lines = data.split(b"\n")

    def alone_on_lines(self, node) -> bool:
        """Nothing but whitespace before the node on its first line and after it on its last."""
        row, column = node.start_point
        end_row, end_column = node.end_point
        if end_column == 0 and end_row > row:
            return not self.lines[row][:column].strip()
        return not self.lines[row][:column].strip() and not self.lines[end_row][end_column:].strip()

    def blank_between(self, above: int, below: int) -> bool:
        return all(not self.lines[i - 1].strip() for i in range(above + 1, below))


def _line_comments_doc(source: _File, node, accept: Callable[[Any], bool]) -> Doc | None:
    """The run of line comments ``accept`` takes, each on the line right above the next, ending above a node."""
    comments, expected = [], first_line(node) - 1
    sibling = node.prev_named_sibling
    while sibling is not None and last_line(sibling) == expected and accept(sibling):
        comments.append(sibling)
        expected = first_line(sibling) - 1
        sibling = sibling.prev_named_sibling
    if not comments:
        return None
    comments.reverse()
    inline = not all(source.alone_on_lines(c) for c in comments)
    return Doc("\n".join(text_of(c) for c in comments), [(first_line(c), last_line(c)) for c in comments], inline)


def _is_slash_comment(node) -> bool:
    """A ``///`` line comment (not a ``////`` rule)."""
    body = text_of(node)
    return "comment" in node.type and body.startswith("///") and not body.startswith("////")


def _slash_doc(source: _File, node) -> Doc | None:
    """Consecutive ``///`` line comments right above a node (TypeScript projects that document that way)."""
    return _line_comments_doc(source, node, _is_slash_comment)


def _block_doc(source: _File, node, slashes: bool = False) -> Doc | None:
    """A ``/** ... */`` comment right above a node (blank lines allowed between): JavaScript, TypeScript, Java.

    With ``slashes``, a run of ``///`` line comments directly above counts too.
    """
    sibling = node.prev_named_sibling
    if sibling is None or "comment" not in sibling.type:
        return None
    body = text_of(sibling)
    if slashes and body.startswith("///"):
        return _slash_doc(source, node)
    if not body.startswith("/**") or body.startswith(("/***", "/**/")):
        return None
    if last_line(sibling) < first_line(node) and source.blank_between(last_line(sibling), first_line(node)):
        return Doc(body, [(first_line(sibling), last_line(sibling))], inline=not source.alone_on_lines(sibling))
    return None


# ---------------------------------------------------------------------------------------------------- Go
def _go_doc(source: _File, node) -> Doc | None:
    return _line_comments_doc(source, node,
                              lambda sibling: sibling.type == "comment" and text_of(sibling).startswith("//"))


def _go_receiver(receiver) -> str:
    for parameter in receiver.named_children if receiver is not None else []:
        if parameter.type == "parameter_declaration":
            kind = parameter.child_by_field_name("type")
            while kind is not None and kind.type in ("pointer_type", "generic_type", "parenthesized_type"):
                kind = kind.child_by_field_name("type") if kind.type == "generic_type" else (
                    kind.named_children[0] if kind.named_children else None)
            return text_of(kind)
    return ""


def _go_definitions(source: _File, root) -> list[Definition]:
    package = next((text_of(c.named_children[0]) for c in root.named_children
                    if c.type == "package_clause" and c.named_children), "")
    exported_package = package != "main" and "internal" not in source.rel.split("/")[:-1]
    out = []

    def add(outer, name, symbol, kind, exported):
        doc = _go_doc(source, outer)
        out.append(Definition(symbol, name, kind, first_line(outer), last_line(outer), doc=doc,
                              public=exported and exported_package,
                              deprecated=bool(doc and "deprecated" in doc.raw.lower())))

    for child in root.named_children:
        if child.type == "function_declaration":
            name = text_of(child.child_by_field_name("name"))
            add(child, name, name, "function", name[:1].isupper())
        elif child.type == "method_declaration":
            name = text_of(child.child_by_field_name("name"))
            receiver = _go_receiver(child.child_by_field_name("receiver"))
            add(child, name, f"{receiver}.{name}" if receiver else name, "method",
                name[:1].isupper() and receiver[:1].isupper())
        elif child.type == "type_declaration":
            specs = [s for s in child.named_children if s.type in ("type_spec", "type_alias")]
            grouped = any(c.type == "(" for c in child.children)
            for spec in specs:
                name = text_of(spec.child_by_field_name("name"))
                kind_node = spec.child_by_field_name("type")
                kind = {"struct_type": "struct", "interface_type": "interface"}.get(
                    kind_node.type if kind_node is not None else "", "type")
                add(spec if grouped else child, name, name, kind, name[:1].isupper())
    return _finish_heads(out)


# ---------------------------------------------------------------------------------------------------- Rust
def _rust_is_doc(node) -> bool:
    if node.type not in ("line_comment", "block_comment"):
        return False
    body = text_of(node)
    return (body.startswith("///") and not body.startswith("////")) or (
        body.startswith("/**") and not body.startswith(("/***", "/**/")))


def _rust_doc(source: _File, node):
    """(doc, attributes) directly above an item; doc lines and attributes may interleave."""
    docs, attributes, current = [], [], first_line(node)
    sibling = node.prev_named_sibling
    while sibling is not None and last_line(sibling) >= current - 1:
        if sibling.type == "attribute_item":
            attributes.append(sibling)
        elif _rust_is_doc(sibling):
            docs.append(sibling)
        else:
            break
        current = first_line(sibling)
        sibling = sibling.prev_named_sibling
    if not docs:
        return None, attributes
    docs.reverse()
    inline = not all(source.alone_on_lines(d) for d in docs)
    return Doc("\n".join(text_of(d).rstrip("\r\n") for d in docs), [(first_line(d), last_line(d)) for d in docs],
               inline), attributes


def _rust_public(node) -> bool:
    return any(c.type == "visibility_modifier" and text_of(c).strip() == "pub" for c in node.named_children)


def _rust_type_name(node) -> str:
    if node is None:
        return ""
    if node.type == "type_identifier":
        return text_of(node)
    if node.type in ("generic_type", "reference_type", "pointer_type"):
        return _rust_type_name(node.child_by_field_name("type"))
    if node.type == "scoped_type_identifier":
        return _rust_type_name(node.child_by_field_name("name"))
    names = [c for c in node.named_children if c.type == "type_identifier"]
    return text_of(names[-1]) if names else text_of(node)


_RUST_TYPES = {"struct_item": "struct", "enum_item": "enum", "union_item": "type", "type_item": "type",
               "trait_item": "trait"}


def _rust_definitions(source: _File, root) -> list[Definition]:
    out = []

    def make(node, symbol, name, kind, public, has_body=True):
        doc, attributes = _rust_doc(source, node)
        hidden = any(re.search(r"doc\s*\(\s*hidden", text_of(a)) for a in attributes)
        doc_last = doc.ranges[-1][1] if doc else 0
        start = min([first_line(a) for a in attributes if first_line(a) > doc_last] + [first_line(node)])
        deprecated = bool(doc and "deprecated" in doc.raw.lower()) or any(
            "deprecated" in text_of(a) for a in attributes)
        definition = Definition(symbol, name, kind, start, last_line(node), doc=doc, public=public and not hidden,
                                has_body=has_body, deprecated=deprecated)
        out.append(definition)
        return definition

    def walk(body, prefix, module_public):
        for child in body.named_children:
            if child.type == "function_item":
                name = text_of(child.child_by_field_name("name"))
                make(child, prefix + name, name, "function", module_public and _rust_public(child))
            elif child.type in _RUST_TYPES:
                name = text_of(child.child_by_field_name("name"))
                definition = make(child, prefix + name, name, _RUST_TYPES[child.type],
                                  module_public and _rust_public(child))
                if child.type == "trait_item":
                    definition.container = True
                    members = child.child_by_field_name("body")
                    for member in members.named_children if members is not None else []:
                        if member.type in ("function_item", "function_signature_item"):
                            method = text_of(member.child_by_field_name("name"))
                            definition.members.append(make(member, f"{prefix}{name}.{method}", method, "method",
                                                           definition.public,
                                                           has_body=member.type == "function_item"))
            elif child.type == "impl_item":
                type_name = _rust_type_name(child.child_by_field_name("type"))
                trait = child.child_by_field_name("trait")
                label = f"impl {_rust_type_name(trait)} for {type_name}" if trait is not None else f"impl {type_name}"
                definition = make(child, prefix + label, label, "impl", False, has_body=False)
                definition.container = True
                members = child.child_by_field_name("body")
                for member in members.named_children if members is not None else []:
                    if member.type == "function_item":
                        method = text_of(member.child_by_field_name("name"))
                        public = module_public and trait is None and _rust_public(member)
                        definition.members.append(make(member, f"{prefix}{type_name}.{method}", method, "method",
                                                       public, has_body=trait is None))
            elif child.type == "mod_item":
                body_node = child.child_by_field_name("body")
                _, attributes = _rust_doc(source, child)
                in_test = text_of(child.child_by_field_name("name")) in ("test", "tests") or any(
                    re.search(r"cfg\s*\(\s*test", text_of(a)) for a in attributes)
                if body_node is not None and not in_test:  # unit tests inside a source file are no gold
                    name = text_of(child.child_by_field_name("name"))
                    walk(body_node, f"{prefix}{name}.", module_public and _rust_public(child))

    walk(root, "", True)
    return _finish_heads(out)


# ---------------------------------------------------------------------------------------------------- Java
_JAVA_TYPES = {"class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
               "record_declaration": "class", "annotation_type_declaration": "interface"}
_JAVA_MEMBERS = ("method_declaration", "constructor_declaration", "compact_constructor_declaration")


def _java_modifiers(node) -> str:
    return next((text_of(c) for c in node.children if c.type == "modifiers"), "")


def _java_definitions(source: _File, root) -> list[Definition]:
    out = []

    def make(node, symbol, name, kind, public, has_body=True):
        doc = _block_doc(source, node)
        modifiers = _java_modifiers(node)
        deprecated = "@Deprecated" in modifiers or bool(doc and "@deprecated" in doc.raw.lower())
        definition = Definition(symbol, name, kind, first_line(node), last_line(node), doc=doc, public=public,
                                has_body=has_body, deprecated=deprecated)
        out.append(definition)
        return definition

    def visible(modifiers: str, in_interface: bool) -> bool:
        words = set(re.findall(r"\b\w+\b", modifiers))
        return bool(words & {"public", "protected"}) or (in_interface and "private" not in words)

    def walk_type(node, prefix, outer_public, in_interface):
        name = text_of(node.child_by_field_name("name"))
        public = outer_public and visible(_java_modifiers(node), in_interface)
        definition = make(node, prefix + name, name, _JAVA_TYPES[node.type], public)
        definition.container = True
        is_interface = node.type in ("interface_declaration", "annotation_type_declaration")
        body = node.child_by_field_name("body")
        members = []
        for child in body.named_children if body is not None else []:
            members.extend(child.named_children if child.type == "enum_body_declarations" else [child])
        for member in members:
            if member.type in _JAVA_TYPES:
                definition.members.append(walk_type(member, f"{prefix}{name}.", public, is_interface))
            elif member.type in _JAVA_MEMBERS:
                method = text_of(member.child_by_field_name("name")) or name
                has_body = member.type == "method_declaration" and member.child_by_field_name("body") is not None
                definition.members.append(make(member, f"{prefix}{name}.{method}", method, "method",
                                               public and visible(_java_modifiers(member), is_interface),
                                               has_body=has_body))
        return definition

    for child in root.named_children:
        if child.type in _JAVA_TYPES:
            walk_type(child, "", True, False)
    return _finish_heads(out)


# ---------------------------------------------------------------------------------------------------- JS / TS
_JS_PRIVATE_TAGS = re.compile(r"@(private|internal|ignore|hidden|protected|package)\b|@access\s+(private|protected)")
_JS_CLASSES = {"class_declaration", "abstract_class_declaration", "class"}
_JS_FUNCTIONS = {"function_expression", "function", "arrow_function", "generator_function"}


def _member_chain(node) -> list[str] | None:
    if node.type in ("identifier", "property_identifier", "this"):
        return [text_of(node)]
    if node.type == "member_expression":
        owner = _member_chain(node.child_by_field_name("object"))
        prop = node.child_by_field_name("property")
        if owner is None or prop is None or prop.type != "property_identifier":
            return None
        return owner + [text_of(prop)]
    return None


def _script_definitions(source: _File, root) -> list[Definition]:
    out = []
    declaration_file = is_declaration_file(source.rel)
    module = any(c.type == "export_statement" for c in root.named_children)
    exported_names = set()
    for child in root.named_children:
        if child.type == "export_statement" and child.child_by_field_name("source") is None:
            for clause in child.named_children:
                if clause.type == "export_clause":
                    for spec in clause.named_children:
                        if spec.type == "export_specifier":
                            exported_names.add(text_of(spec.child_by_field_name("name")))
            value = child.child_by_field_name("value")
            if value is not None and value.type == "identifier":  # export default name
                exported_names.add(text_of(value))

    def make(outer, symbol, name, kind, public, has_body=True, anchor=None):
        doc = _block_doc(source, anchor or outer, slashes=True)
        if doc is not None and _JS_PRIVATE_TAGS.search(doc.raw):
            public = False
        start = first_line(anchor or outer)
        hidden_name = any(part.startswith(("_", "#")) for part in symbol.split("."))
        definition = Definition(symbol, name, kind, start, last_line(outer), doc=doc,
                                public=public and not hidden_name and not declaration_file,
                                has_body=has_body and not declaration_file,
                                deprecated=bool(doc and "@deprecated" in doc.raw.lower()))
        out.append(definition)
        return definition

    def class_members(definition, body, prefix):
        definition.container = True
        children = body.named_children
        for index, member in enumerate(children):
            if member.type not in ("method_definition", "abstract_method_signature", "method_signature"):
                continue
            name_node = member.child_by_field_name("name")
            if name_node is None or name_node.type not in ("property_identifier", "identifier"):
                continue
            anchor, j = member, index
            while j > 0 and children[j - 1].type == "decorator":
                j -= 1
                anchor = children[j]
            access = [text_of(c) for c in member.children if c.type == "accessibility_modifier"]
            public = definition.public and not (access and access[0] in ("private", "protected"))
            name = text_of(name_node)
            has_body = member.type == "method_definition" and name != "constructor"
            definition.members.append(make(member, prefix + name, name, "method", public, has_body, anchor))

    def declaration(node, outer, prefix, exported):
        kind = node.type
        if kind in ("function_declaration", "generator_function_declaration"):
            name = text_of(node.child_by_field_name("name"))
            make(outer, prefix + name, name, "function", exported or not module or name in exported_names)
        elif kind in _JS_CLASSES:
            name_node = node.child_by_field_name("name")
            if name_node is None:
                return
            name = text_of(name_node)
            definition = make(outer, prefix + name, name, "class",
                              exported or not module or name in exported_names)
            body = node.child_by_field_name("body")
            if body is not None:
                class_members(definition, body, f"{prefix}{name}.")
        elif kind in ("interface_declaration", "type_alias_declaration", "enum_declaration"):
            name = text_of(node.child_by_field_name("name"))
            label = {"interface_declaration": "interface", "type_alias_declaration": "type",
                     "enum_declaration": "enum"}[kind]
            make(outer, prefix + name, name, label, exported or name in exported_names)
        elif kind in ("lexical_declaration", "variable_declaration"):
            declarators = [c for c in node.named_children if c.type == "variable_declarator"]
            if len(declarators) != 1:
                return
            value = declarators[0].child_by_field_name("value")
            name_node = declarators[0].child_by_field_name("name")
            if value is None or name_node is None or name_node.type != "identifier":
                return
            if value.type == "assignment_expression":
                value = value.child_by_field_name("right")
            name = text_of(name_node)
            public = exported or not module or name in exported_names
            if value is not None and value.type == "call_expression" and any(
                    a.type in _JS_FUNCTIONS for a in (value.child_by_field_name("arguments") or value).named_children):
                make(outer, prefix + name, name, "function", public)  # const f = curry(function f(a, b) {...})
            elif value is not None and value.type in _JS_FUNCTIONS:
                make(outer, prefix + name, name, "function", public)
            elif value is not None and value.type in _JS_CLASSES:
                definition = make(outer, prefix + name, name, "class", public)
                body = value.child_by_field_name("body")
                if body is not None:
                    class_members(definition, body, f"{prefix}{name}.")
        elif kind == "internal_module":
            name_node, body = node.child_by_field_name("name"), node.child_by_field_name("body")
            if name_node is not None and body is not None and name_node.type == "identifier":
                walk(body, f"{prefix}{text_of(name_node)}.", exported)

    def assignment(statement, expression):
        right = expression.child_by_field_name("right")
        chain = _member_chain(expression.child_by_field_name("left"))
        if right is None or chain is None or right.type not in _JS_FUNCTIONS | _JS_CLASSES:
            return
        chain = [part for part in chain if part != "prototype"]
        if chain[:2] == ["module", "exports"]:
            chain = chain[2:]
        elif chain[:1] == ["exports"]:
            chain = chain[1:]
        if not chain:
            name_node = right.child_by_field_name("name")
            if name_node is None:
                return
            chain = [text_of(name_node)]
        symbol = ".".join(chain)
        if right.type in _JS_CLASSES:
            definition = make(statement, symbol, chain[-1], "class", not module)
            body = right.child_by_field_name("body")
            if body is not None:
                class_members(definition, body, symbol + ".")
        else:
            make(statement, symbol, chain[-1], "method" if len(chain) > 1 else "function", not module)

    def walk(body, prefix, exported_scope):
        for child in body.named_children:
            if child.type == "export_statement":
                node = child.child_by_field_name("declaration") or child.child_by_field_name("value")
                if node is not None:
                    declaration(node, child, prefix, exported_scope)
            elif child.type == "expression_statement":
                expression = child.named_children[0] if child.named_children else None
                if expression is not None and expression.type == "internal_module":
                    declaration(expression, child, prefix, False)
                elif expression is not None and expression.type == "assignment_expression" and not prefix:
                    assignment(child, expression)
            elif child.type in ("function_declaration", "generator_function_declaration", "lexical_declaration",
                                "variable_declaration", "interface_declaration", "type_alias_declaration",
                                "enum_declaration", "internal_module") or child.type in _JS_CLASSES:
                declaration(child, child, prefix, False)

    walk(root, "", True)
    return _finish_heads(out)


_WALKERS = {"go": _go_definitions, "rust": _rust_definitions, "java": _java_definitions,
            "javascript": _script_definitions, "typescript": _script_definitions, "tsx": _script_definitions}


def tree_of(rel: str, data: bytes, language: str):
    """The tree-sitter tree of a file."""
    return parser_for(language).parse(data)


def definitions(rel: str, data: bytes, language: str) -> list[Definition]:
    """Definitions of one file, outer before inner, in source order ([] when it cannot be read)."""
    if language == "python":
        try:
            return python_definitions(data.decode("utf-8"))
        except UnicodeDecodeError:
            return []
    tree = tree_of(rel, data, language)
    return _WALKERS[language](_File(rel, data), tree.root_node)


def innermost(defs: list[Definition], line: int) -> Definition | None:
    """The smallest definition whose span holds a line."""
    best = None
    for definition in defs:
        if definition.start <= line <= definition.end and (
                best is None or definition.end - definition.start < best.end - best.start):
            best = definition
    return best
