"""A string literal read as a message template, and how well a printed message fits it.

The code that printed a message holds its words in a string literal, with placeholders where the values
went: ``f"... {char!r} at position {idx}."``, ``"%s too long"``, ``fmt.Errorf("no plugin %q", name)``,
``format!("{} of {:?}", ..)``, `` `doesn't resolve: ${path}` ``, or a concatenation (``"... operation: " + op``,
Python's adjacent literals over several lines). :func:`template_around` reads the template around a position of
the code as its literal runs and holes; :func:`template_fit` lays a message over it: each literal run must occur
in the message, in order, and a hole takes whatever value the program printed there.

Both are plain scans with bounded look-aheads (``str.find`` and fixed patterns): linear in what they read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .message_values import alnum_count, normalized, speaker_end, value_spans

# A template is a tuple of literal runs and holes (``None``).
Part = str | None
CODE_QUOTES = "'\"`"
# ``# note``: a comment (Python, shell, Ruby); ``#[derive]``, ``#define``, ``#{x}`` and ``#private`` are code.
COMMENT_HASH_NEXT = ("", " ", "\t", "\n")
# ``f"``, ``rb'``, ``u8"``: the letters a language puts before a quote; ``r`` makes it raw (no escapes).
MAX_PREFIX = 2
# A placeholder longer than this (``{`` to ``}``) is a brace of the message, not a placeholder.
MAX_PLACEHOLDER_CHARS = 120
# printf-style conversions: C, Python's ``%`` and ``%(name)s``, Go's ``%v``/``%+v``/``%q``/``%w``, Java's ``%1$s``.
PRINTF = re.compile(r"%(?:%|(?:\d{1,2}\$)?(?:\([\w.]{1,40}\))?[-+#0]{0,4}(?:\d{1,3}|\*)?(?:\.(?:\d{1,3}|\*))?"
                    r"(?:hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGcrsaqvTtwpbn])")
INTERPOLATED_NAME = re.compile(r"[A-Za-z_]\w*")
ESCAPED_WHITESPACE = frozenset("ntrfv")
# ``\x07``, ``\u00e9``, ``\0``: a character the message printed as itself, which the paste may show any way.
ESCAPED_CHARACTER = re.compile(r"x[0-9A-Fa-f]{1,2}|u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{1,3}")
# A template whose literal runs hold fewer letters and digits than this (``"{}: {}"``) fits any message.
MIN_TEMPLATE_CHARS = 10


@dataclass(frozen=True)
class Literal:
    """A string literal of the code: where it lies (``start`` to ``end``) and its text as template parts."""

    start: int
    end: int
    parts: tuple[Part, ...]


def string_literals(code: str) -> list[Literal]:
    """The string literals of ``code`` (a few lines), in order; comments are skipped.

    A quote not closed on its line opens no literal (an apostrophe, a Rust lifetime), except a backtick or a
    triple quote, which may span lines.
    """
    literals: list[Literal] = []
    # A quote found unclosed up to the end of its line: no later one of that kind can open a literal before it (it
    # would have closed the first), so none is read again (a line of escaped quotes is read once, not once each).
    unclosed_until: dict[str, int] = {}
    position, size = 0, len(code)
    while position < size:
        char = code[position]
        if code.startswith("//", position) or (char == "#" and code[position + 1:position + 2] in COMMENT_HASH_NEXT):
            line_end = code.find("\n", position)
            position = size if line_end < 0 else line_end
        elif code.startswith("/*", position):
            closing = code.find("*/", position + 2)
            position = size if closing < 0 else closing + 2
        elif char in CODE_QUOTES and position >= unclosed_until.get(char, -1):
            literal, reached = read_literal(code, position)
            if literal is None:
                if reached >= 0:
                    unclosed_until[char] = reached
                position += 1
            else:
                literals.append(literal)
                position = literal.end
        else:
            position += 1
    return literals


def read_literal(code: str, start: int) -> tuple[Literal | None, int]:
    """The literal whose quote is at ``start`` (``None`` when it opens none), and where an unclosed one's line ends.

    The second value is -1 unless the quote stayed unclosed to the end of its line.
    """
    quote = code[start]
    prefix_start = start
    while prefix_start > 0 and start - prefix_start < MAX_PREFIX and code[prefix_start - 1].isalpha():
        prefix_start -= 1
    if prefix_start > 0 and (code[prefix_start - 1].isalnum() or code[prefix_start - 1] == "_"):
        prefix_start = start  # letters of a name before the quote, not a prefix
    raw = "r" in code[prefix_start:start].lower()  # Python's r"..", Rust's r".."; backticks are read with escapes
    delimiter = quote * 3 if quote != "`" and code.startswith(quote * 3, start) else quote
    spans_lines = quote == "`" or len(delimiter) == 3
    position, size = start + len(delimiter), len(code)
    while position < size:
        char = code[position]
        if char == "\\" and not raw:
            position += 2
        elif char == "\n" and not spans_lines:
            return None, position
        elif quote == "`" and code.startswith("${", position):
            position = matching_close(code, position + 1, "{", "}") or position + 2
        elif code.startswith(delimiter, position):
            after = code[position + len(delimiter):position + len(delimiter) + 1]
            if quote == "'" and (after.isalnum() or after == "_"):
                return None, -1  # ``&'a str``: a lifetime, not a literal
            body = code[start + len(delimiter):position]
            return Literal(prefix_start, position + len(delimiter), body_parts(body, raw)), -1
        else:
            position += 1
    if not spans_lines:
        return None, size
    return Literal(prefix_start, size, body_parts(code[start + len(delimiter):], raw)), -1


def matching_close(text: str, start: int, opening: str, closing: str) -> int:
    """The position after the ``closing`` that balances the ``opening`` at ``start``, or 0 (within a bound)."""
    depth, limit = 0, min(len(text), start + MAX_PLACEHOLDER_CHARS)
    for position in range(start, limit):
        char = text[position]
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return position + 1
        elif char == "\n":
            return 0
    return 0


def body_parts(body: str, raw: bool) -> tuple[Part, ...]:
    r"""A literal's text as template parts: its placeholders and escaped characters become holes.

    Placeholders of every language indexed: ``{}``/``{name!r}``/``{:?}``/``{0}`` (Python, Rust, C#, SLF4J),
    ``${expr}`` and ``$name`` (JavaScript, Kotlin, shell), ``#{expr}`` (Ruby), ``\(expr)`` (Swift), printf's
    ``%s``/``%5.2f``/``%(name)s``/``%v``. ``{{`` and ``%%`` are the characters themselves; ``\n`` is a space.
    """
    parts: list[Part] = []
    text: list[str] = []

    def hole() -> None:
        parts.append("".join(text))
        parts.append(None)
        text.clear()

    position, size = 0, len(body)
    while position < size:
        char, following = body[position], body[position + 1:position + 2]
        end = 0
        if char == "\\" and not raw:
            if following in ESCAPED_WHITESPACE:
                text.append(" ")
                end = position + 2
            elif following == "(":
                end = matching_close(body, position + 1, "(", ")")
                if end:
                    hole()
            elif (escaped := ESCAPED_CHARACTER.match(body, position + 1)) is not None:
                hole()
                end = escaped.end()
            else:
                text.append(following)
                end = position + 2
        elif char in "{}" and following == char:
            text.append(char)
            end = position + 2
        elif char == "{" or (char in "$#" and following == "{"):
            end = matching_close(body, position + (char != "{"), "{", "}")
            if end:
                hole()
        elif char == "$" and (name := INTERPOLATED_NAME.match(body, position + 1)) is not None:
            hole()
            end = name.end()
        elif char == "%" and (conversion := PRINTF.match(body, position)) is not None:
            if following == "%":
                text.append("%")
            else:
                hole()
            end = conversion.end()
        if not end:
            text.append(char)
            end = position + 1
        position = end
    parts.append("".join(text))
    return tidy(parts)


def tidy(parts: list[Part]) -> tuple[Part, ...]:
    """Parts with literal runs whitespace-collapsed and stripped, empty runs dropped and holes never doubled."""
    tidied: list[Part] = []
    for part in parts:
        if part is not None:
            part = normalized(part)
            if not part:
                continue
            if tidied and tidied[-1] is not None:
                tidied[-1] = f"{tidied[-1]} {part}"
                continue
        elif tidied and tidied[-1] is None:
            continue
        tidied.append(part)
    return tuple(tidied)


def joined(between: str) -> str | None:
    """How two literals with ``between`` in the code between them make one text.

    ``""`` when they are adjacent or ``+``-ed (``"a " "b"``, ``"a " + "b"``), ``"hole"`` when an expression is
    concatenated between them (``"a " + name + " b"``), ``None`` when they are separate texts (two arguments).
    """
    code = between.replace("\\\n", " ").strip()
    if code in ("", "+"):
        return ""
    if code.startswith("+") and code.endswith("+") and "," not in code and ";" not in code:
        return "hole"
    return None


def template_around(code: str, offset: int) -> tuple[Part, ...] | None:
    """The message template of the literal at ``offset`` of ``code``, with the literals concatenated to it.

    An expression concatenated before or after the text (``"... operation: " + op``) is a hole there.
    """
    literals = string_literals(code)
    index = next((i for i, literal in enumerate(literals) if literal.start <= offset < literal.end), None)
    if index is None:
        return None
    first = last = index
    while first > 0 and joined(code[literals[first - 1].end:literals[first].start]) is not None:
        first -= 1
    while last + 1 < len(literals) and joined(code[literals[last].end:literals[last + 1].start]) is not None:
        last += 1
    parts: list[Part] = []
    before = code[literals[first - 1].end if first else 0:literals[first].start]
    if before.rstrip().endswith("+"):
        parts.append(None)
    for position in range(first, last + 1):
        if position > first and joined(code[literals[position - 1].end:literals[position].start]) == "hole":
            parts.append(None)
        parts.extend(literals[position].parts)
    if code[literals[last].end:].lstrip().startswith("+"):
        parts.append(None)
    return tidy(parts)


def template_fit(parts: tuple[Part, ...], message: str) -> float:
    """How well ``message`` reads as ``parts`` printed with values, from 0 to 1.

    The template's literal runs are found in the message in order (each at its first place after the last);
    the text between two found runs is what a hole printed. The fit is the share of the message's letters and
    digits explained (by the found runs, and by holes holding one printed value each) times the share of the
    template's that were found: 1.0 when the message is the template with values in its holes. Who printed it
    (``KeyError: ``) need not be explained.

    Nothing fits (0.0) a template with fewer than ``MIN_TEMPLATE_CHARS`` found, nor a message that shows neither
    a value in one of the template's holes nor who printed it: a sentence that merely shares a literal's words
    (a description quoting a log line) was not printed by it.
    """
    message = normalized(message)
    speaker = speaker_end(message)
    total = alnum_count(message[speaker:])
    template_chars = sum(alnum_count(part) for part in parts if part)
    if not total or not template_chars:
        return 0.0
    values = value_spans(message)
    found = explained = position = 0
    after_hole = printed = False
    for part in parts:
        if part is None:
            after_hole = True
            continue
        at = message.find(part, position)
        if at < 0:
            after_hole = False  # a run missing from the message: the text around it is not the template's
            continue
        if after_hole:
            chars, value = filled(message, position, at, values)
            explained, printed = explained + chars, printed or value
        found += alnum_count(part)
        position, after_hole = at + len(part), False
    if after_hole:
        chars, value = filled(message, position, len(message), values, last=True)
        explained, printed = explained + chars, printed or value
    if found < MIN_TEMPLATE_CHARS or not (printed or speaker):
        return 0.0
    return min(1.0, (found + explained) / total) * found / template_chars


def filled(message: str, start: int, end: int, values: list[tuple[int, int]], last: bool = False) -> tuple[int, bool]:
    r"""The letters and digits a hole explains between ``start`` and ``end``, and whether it holds one value.

    One token or printed values only (``''``, ``[object Object]``, ``12``) is a value, and explains all its
    characters; words beside them (``the 'x' of y``) are more than a placeholder prints, and only the values
    among them count. The template's ``last`` hole opening with a value printed it: the words after it are a
    wrapper's suffix (`` for dictionary value @ data['name']``), which the fit leaves unexplained.
    """
    text = message[start:end]
    inside = sum(alnum_count(message[max(start, a):min(end, b)]) for a, b in values if a < end and b > start)
    if text.strip() and (" " not in text.strip() or inside == alnum_count(text)):
        return alnum_count(text), True
    opening = start + len(text) - len(text.lstrip())
    return inside, last and any(a == opening for a, _ in values)
