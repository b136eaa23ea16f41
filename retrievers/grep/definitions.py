"""Definition lines: whether a matching line defines the name the match covers (``def parse_args(``, ``class Foo``).

One regex recognises the definition shapes of every indexed language. It is run on the start of a
line only (``DEFINITION_WINDOW`` characters): a definition names itself there, and Python's
backtracking engine would take time quadratic in the length of a long line (minified code,
data) of modifier-like words.
"""

from __future__ import annotations

import re

from ..lexical.tokenize import DEFINED_NAME_PATTERN

MODIFIERS = (r"(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|final|abstract|"
             r"async|unsafe|extern|override|readonly|declare|sealed|synchronized|native|const|open|inline)\s+)")
NAME = DEFINED_NAME_PATTERN
# Words that start statements, never a field's name (``return err``, ``go run()``, ``defer f()``).
STATEMENT_WORDS = (r"(?:return|go|defer|goto|break|continue|fallthrough|else|case|default|package|import|yield|"
                   r"raise|await|throw|delete|typeof|new|assert|del|pass|print|not|in|is|panic)")
# One regex, three shapes of line, each naming the defined name in its own group (one match call per line).
DEFINITION_LINE = re.compile("|".join((
    # keyword definitions in every indexed language: def, class, fn, func (with a Go receiver), type, let...
    rf"^\s*{MODIFIERS}*(?:def|class|function\*?|func|fn|interface|type|struct|enum|trait|record|module|namespace|"
    rf"macro_rules!|let|var|const|val)\s+(?:\([^)]*\)\s*)?(?P<keyword>{NAME})",
    # a typed declaration with at least one modifier (Java, C#, TypeScript members)
    rf"^\s*{MODIFIERS}+(?:[\w$<>\[\],.?]+\s+)+(?P<typed>{NAME})\s*[(=;:]",
    # an assignment at the start of a line (module constants, Go ``X := ...``, class attributes)
    rf"^\s*(?P<assigned>{NAME})\s*(?::[^=\n]*)?:?=(?!=)",
    # an annotated member: ``name: str``, ``name?: Type;`` (Python and TypeScript fields, object keys)
    rf"^\s*{MODIFIERS}*(?P<member>{NAME})\??\s*:\s*[^\s=].*$",
    # a Go struct field or interface method: ``Name Type``, ``Run func(cmd *Command)``, ``Close() error``
    rf"^\s*(?!{STATEMENT_WORDS}\b)(?P<field>{NAME})(?:\s+(?:func\b.*|[*\[\]]*[A-Za-z_][\w.]*(?:\[[^\]]*\])?"
    rf"(?:\s+`[^`]*`)?\s*(?://.*)?)|\([^)]*\)[\w*\[\](), .\t]*(?://.*)?)$",
)))
# Longer than any definition's head (indentation, modifiers, type, name and what follows the name); a line of
# at most this many characters is classified as a whole.
DEFINITION_WINDOW = 1_000
# Stands for the rest of a longer line, so an end-of-line anchor never matches where the window cuts it.
LINE_GOES_ON = "\u2026"


def is_definition_line(text: str, column: int, width: int) -> bool:
    """Whether the match (``column``, ``width`` on the line ``text``) covers the name a definition line defines.

    ``def parse_args(`` and ``parse_args`` both do on ``def parse_args(argv):``; ``def`` and ``parse``
    do not, nor does ``parse_args`` on ``def test_parse_args():`` (a definition of another name).
    Of a line longer than ``DEFINITION_WINDOW`` characters only the start is read.
    """
    if len(text) > DEFINITION_WINDOW:
        if column >= DEFINITION_WINDOW:
            return False  # no definition names itself that far into its line
        text = text[:DEFINITION_WINDOW] + LINE_GOES_ON
    found = DEFINITION_LINE.match(text)
    if found is None:
        return False
    name = found.lastgroup or ""
    return column <= found.start(name) and column + width >= found.end(name)
