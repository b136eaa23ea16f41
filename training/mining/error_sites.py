"""Where a file raises an error with a literal message, and the message as a user would see it.

Recognised: Python ``raise X("...")`` (f-strings, ``%`` and ``.format`` included); JavaScript/TypeScript
``throw new X("...")`` (template strings and ``+`` included); Go ``errors.New``, ``fmt.Errorf`` and ``panic``;
Rust ``panic!``-like macros, ``bail!``/``anyhow!``, ``.expect("...")`` and ``Err(format!(...))``; Java
``throw new XException("...")`` (``+`` and ``String.format`` included). Format placeholders become plausible
values chosen from the expression's name, so the text reads like a real error, not a template.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .definitions import text_of, tree_of

MIN_LITERAL_CHARS = 12
MIN_WORDS = 3


@dataclass
class ErrorSite:
    """One raise/throw/panic with a literal message: the line it is on and what the user reads."""

    line: int
    message: str  # the rendered text a user would paste
    literal: str  # the message's literal parts alone (for the quality filter)


_HINTS = [
    (r"url|uri|endpoint|href", "https://example.com/api/v1"),
    (r"host", "example.com"),
    (r"port", "8080"),
    (r"path|file|dir|folder|filename", "/tmp/data/config.json"),
    (r"status|code", "404"),
    (r"count|size|len|length|num|n$|limit|max|min|total|index|idx|offset|line|col|width|height|depth|pos|\bi\b",
     "3"),
    (r"err|error|exc|cause", "unexpected EOF"),
    (r"key", "user_id"),
    (r"field|attr|prop", "name"),
    (r"type|kind|cls|class", "int"),
    (r"method", "GET"),
    (r"name|ident|id\b|label|tag", "foo"),
    (r"version", "1.2.3"),
    (r"char|ch\b|token|tok", "'}'"),
    (r"time|duration|timeout|delay", "30s"),
    (r"value|val|arg|param|option|opt|input", "abc"),
]
_NUMERIC_SPECS = set("dixXobfeEgGnu")


def plausible(expression: str, spec: str = "", field: str = "") -> str:
    """A value that reads naturally in an error message for a placeholder filled by ``expression``.

    ``field`` is the placeholder's own name where it has one (``{path}``), tried first.
    """
    if spec and spec[-1] in _NUMERIC_SPECS:
        return "3"
    for name in (field, expression):
        words = re.sub(r"([a-z])([A-Z])", r"\1_\2", name.split("(")[0]).lower()
        last = re.split(r"[.\[\]]", words.rstrip("])"))[-1] if words else ""
        for pattern, value in _HINTS:
            if (last or words) and re.search(pattern, last or words):
                return f"'{value}'" if spec.endswith(("r", "q")) and not value.startswith("'") else value
    return "'foo'" if spec.endswith(("r", "q")) else "foo"


def _substitute_printf(template: str, arguments: list[str], named: dict[str, str] | None = None) -> str:
    """``%s`` / ``%(name)s`` / Go verbs (``%v %q %w %d``) replaced in order."""
    position = iter(arguments)

    def replace(match: re.Match) -> str:
        if match.group(0) == "%%":
            return "%"
        key, spec = match.group(1), match.group(2)
        if key:
            return plausible(key, spec, field=key)
        return plausible(next(position, ""), spec)

    return re.sub(r"%%|%(?:\((\w+)\))?[-+ #0]*(?:\d+|\*)?(?:\.\d+)?([sdifrqvwxXbcoeEgGTptU])", replace, template)


def _substitute_braces(template: str, arguments: list[str], keywords: dict[str, str] | None = None) -> str:
    """``{}`` / ``{0}`` / ``{name}`` / ``{:?}`` / ``{name!r:>10}`` replaced (Python .format and Rust format!)."""
    position = iter(arguments)
    keywords = keywords or {}

    def replace(match: re.Match) -> str:
        inner = match.group(1)
        if inner is None:
            return match.group(0)[0]  # an escaped {{ or }}
        field_name, _, spec = inner.partition(":")
        field_name, _, conversion = field_name.partition("!")
        if not field_name:
            return plausible(next(position, ""), spec or conversion)
        if field_name.isdigit():
            index = int(field_name)
            return plausible(arguments[index] if index < len(arguments) else "", spec or conversion)
        return plausible(keywords.get(field_name, field_name), spec or conversion, field=field_name)

    return re.sub(r"\{\{|\}\}|\{([^{}]*)\}", replace, template)


# ---------------------------------------------------------------------------------------------------- Python
def _python_message(node) -> tuple[str, str] | None:
    """(rendered, literal parts) of a message expression, or None when it is not literal enough."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, node.value
    if isinstance(node, ast.JoinedStr):
        rendered, literal = [], []
        for value in node.values:
            if isinstance(value, ast.Constant):
                rendered.append(str(value.value))
                literal.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                spec = ast.unparse(value.format_spec)[2:-1] if value.format_spec else ""
                conversion = "r" if value.conversion == ord("r") else ""
                rendered.append(plausible(ast.unparse(value.value), spec + conversion))
        return "".join(rendered), "".join(literal)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) and (
            isinstance(node.left.value, str)):
        right = node.right
        arguments = [ast.unparse(e) for e in right.elts] if isinstance(right, ast.Tuple) else [ast.unparse(right)]
        return _substitute_printf(node.left.value, arguments), re.sub(r"%\S", "", node.left.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _python_message(node.left), _python_message(node.right)
        left = left or (plausible(ast.unparse(node.left)), "")
        right = right or (plausible(ast.unparse(node.right)), "")
        return left[0] + right[0], left[1] + right[1]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
        template = node.func.value.value
        arguments = [ast.unparse(a) for a in node.args]
        keywords = {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg}
        return _substitute_braces(template, arguments, keywords), re.sub(r"\{[^{}]*\}", "", template)
    return None


def _python_sites(source: str) -> list[ErrorSite]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    sites = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call) or not node.exc.args:
            continue
        func = node.exc.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not name[:1].isupper():
            continue
        message = _python_message(node.exc.args[0])
        if message:
            sites.append(ErrorSite(node.lineno, f"{name}: {message[0]}", message[1]))
    return sites


# ---------------------------------------------------------------------------------------------------- tree-sitter
def _walk(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _string_content(node) -> str:
    """The text inside a string literal's quotes, common escapes resolved."""
    body = text_of(node)
    if node.type == "raw_string_literal":  # Rust r#"..."#, Go `...`: no escapes
        return re.sub(r'^r#*"|"#*$|^`|`$', "", body)
    if len(body) >= 2 and body[0] in "\"'`":
        body = body[1:-1]
    body = re.sub(r"\\\r?\n\s*", "", body)  # a line continuation inside the literal
    return re.sub(r"\\([\\\"'nrt])", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


_ESCAPES = {"n": " ", "r": "", "t": " "}
_STRINGS = {"string", "string_literal", "interpreted_string_literal", "raw_string_literal"}


def _script_message(node) -> tuple[str, str] | None:
    """(rendered, literal) of a JS/TS/Java message expression: strings, template strings, ``+`` chains."""
    if node.type in _STRINGS:
        content = _string_content(node)
        return content, content
    if node.type == "template_string":
        rendered, literal = [], []
        for child in node.named_children:
            if child.type == "template_substitution":
                inner = child.named_children[0] if child.named_children else None
                rendered.append(plausible(text_of(inner)))
            else:
                rendered.append(text_of(child))
                literal.append(text_of(child))
        return "".join(rendered), "".join(literal)
    if node.type == "binary_expression" and node.child_by_field_name("operator") is not None and text_of(
            node.child_by_field_name("operator")) == "+":
        parts = [_script_message(node.child_by_field_name(side)) for side in ("left", "right")]
        if not any(parts):
            return None
        sides = [node.child_by_field_name("left"), node.child_by_field_name("right")]
        filled = [p or (plausible(text_of(s)), "") for p, s in zip(parts, sides)]
        return filled[0][0] + filled[1][0], filled[0][1] + filled[1][1]
    if node.type == "method_invocation" and text_of(node.child_by_field_name("name")) == "format":
        arguments = node.child_by_field_name("arguments").named_children
        if arguments and arguments[0].type in _STRINGS:
            template = _string_content(arguments[0])
            return (_substitute_printf(template, [text_of(a) for a in arguments[1:]]),
                    re.sub(r"%\S", "", template))
    if node.type == "parenthesized_expression" and node.named_children:
        return _script_message(node.named_children[0])
    return None


def _script_sites(root, java: bool) -> list[ErrorSite]:
    sites = []
    for node in _walk(root):
        if node.type != "throw_statement" or not node.named_children:
            continue
        created = node.named_children[0]
        if created.type not in ("new_expression", "object_creation_expression", "call_expression"):
            continue
        kind = created.child_by_field_name("type" if java else "constructor") or created.child_by_field_name(
            "function")
        arguments = created.child_by_field_name("arguments")
        if kind is None or arguments is None or not arguments.named_children:
            continue
        name = text_of(kind).split(".")[-1].split("<")[0]
        if not name[:1].isupper():
            continue
        message = _script_message(arguments.named_children[0])
        if message:
            sites.append(ErrorSite(first_line(node), f"{name}: {message[0]}", message[1]))
    return sites


def first_line(node) -> int:
    """1-based first line of a node."""
    return node.start_point[0] + 1


def _go_sites(root) -> list[ErrorSite]:
    sites = []
    for node in _walk(root):
        if node.type != "call_expression":
            continue
        function = text_of(node.child_by_field_name("function"))
        if function not in ("errors.New", "fmt.Errorf", "panic"):
            continue
        arguments = node.child_by_field_name("arguments").named_children
        if not arguments:
            continue
        first = arguments[0]
        rest = arguments[1:]
        if function == "panic" and first.type == "call_expression" and text_of(
                first.child_by_field_name("function")) in ("fmt.Sprintf", "fmt.Errorf", "errors.New"):
            inner = first.child_by_field_name("arguments").named_children
            first, rest = (inner[0], inner[1:]) if inner else (first, [])
        if first.type not in _STRINGS:
            continue
        template = _string_content(first)
        message = _substitute_printf(template, [text_of(a) for a in rest])
        if function == "panic":
            message = f"panic: {message}"
        sites.append(ErrorSite(first_line(node), message, re.sub(r"%\S", "", template)))
    return sites


_RUST_PANICS = {"panic", "unreachable", "unimplemented", "todo", "bail", "anyhow", "format_err", "err_msg"}


def _rust_format(token_tree) -> tuple[str, str] | None:
    """(rendered, literal) of a format-macro's token tree: its first string literal and the arguments after it."""
    children = token_tree.children
    strings = [i for i, c in enumerate(children) if c.type in _STRINGS]
    if not strings:
        return None
    first = strings[0]
    template = _string_content(children[first])
    arguments, keywords, current = [], {}, []
    for child in children[first + 1 : -1]:
        if child.type == ",":
            if current:
                arguments.append(current)
            current = []
        else:
            current.append(text_of(child))
    if current:
        arguments.append(current)
    positional = []
    for tokens in arguments:
        if len(tokens) > 2 and tokens[1] == "=":
            keywords[tokens[0]] = "".join(tokens[2:])
        else:
            positional.append("".join(tokens))
    return _substitute_braces(template, positional, keywords), re.sub(r"\{[^{}]*\}", "", template)


def _rust_sites(root) -> list[ErrorSite]:
    sites = []
    for node in _walk(root):
        if node.type == "macro_invocation":
            name = text_of(node.child_by_field_name("macro")).split("::")[-1]
            tree = next((c for c in node.children if c.type == "token_tree"), None)
            if name in _RUST_PANICS and tree is not None:
                message = _rust_format(tree)
                if message:
                    sites.append(ErrorSite(first_line(node), message[0], message[1]))
        elif node.type == "call_expression":
            function = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            if function is None or arguments is None or not arguments.named_children:
                continue
            first = arguments.named_children[0]
            if function.type == "field_expression" and text_of(function.child_by_field_name("field")) == "expect":
                if first.type in _STRINGS:
                    content = _string_content(first)
                    sites.append(ErrorSite(first_line(node), content, content))
            elif text_of(function) == "Err":
                for inner in _walk(first):
                    if inner.type == "macro_invocation" and text_of(inner.child_by_field_name("macro")) == "format":
                        tree = next((c for c in inner.children if c.type == "token_tree"), None)
                        message = _rust_format(tree) if tree is not None else None
                        if message:
                            sites.append(ErrorSite(first_line(node), message[0], message[1]))
                        break
                    if inner.type in _STRINGS:
                        content = _string_content(inner)
                        sites.append(ErrorSite(first_line(node), content, content))
                        break
    return sites


def error_sites(rel: str, data: bytes, language: str) -> list[ErrorSite]:
    """Every error raised with a literal message in a file, with messages long enough to search for."""
    if language == "python":
        try:
            sites = _python_sites(data.decode("utf-8"))
        except UnicodeDecodeError:
            return []
    else:
        root = tree_of(rel, data, language).root_node
        if language == "go":
            sites = _go_sites(root)
        elif language == "rust":
            sites = _rust_sites(root)
        else:
            sites = _script_sites(root, java=language == "java")
    kept = []
    for site in sites:
        message = " ".join(site.message.split())
        literal_words = re.findall(r"[A-Za-z]{2,}", site.literal)
        if len("".join(literal_words)) >= MIN_LITERAL_CHARS and len(literal_words) >= MIN_WORDS - 1 and len(
                message.split()) >= MIN_WORDS and len(message) <= 300:
            kept.append(ErrorSite(site.line, message, site.literal))
    return kept
