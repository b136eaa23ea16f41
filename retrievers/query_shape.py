"""What kind of symbol a description asks for, read from how it opens.

Docstrings and the questions people type share a habit: a type is described with a noun phrase ("A field
that infers ...", "Raised when ...", "Base class for ..."), a function or method with a verb ("Return the
...", "Parses ..."). The opening words are a cheap prior on the kind of the answer.
"""

from __future__ import annotations

import re

TYPE_KINDS = frozenset({"class", "interface", "enum", "struct", "trait", "record", "type"})
# Nouns that name the kind outright, looked for among the first few words.
TYPE_NOUNS = frozenset({"class", "classes", "exception", "mixin", "metaclass", "interface",
                        "struct", "enum", "trait", "dataclass", "namedtuple", "subclass", "record"})
CALLABLE_NOUNS = frozenset({"function", "functions", "method", "methods", "decorator", "helper", "callback",
                            "routine", "shortcut", "hook"})
# Openers that start a noun phrase or an exception's docstring ("Raised if ...").
TYPE_OPENERS = frozenset({"a", "an", "raised", "thrown"})
HEAD_WORDS = 4
MAX_DESCRIPTION_WORDS = 40
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def described_kind(query: str) -> str | None:
    """``"type"``, ``"callable"`` or ``None`` (no opinion) for a one-sentence description or question."""
    if len(query.split()) > MAX_DESCRIPTION_WORDS:  # an issue report opening "A crash when ..." is no description
        return None
    words = [word.lower() for word in _WORD.findall(query[:200])][:HEAD_WORDS]
    if not words:
        return None
    for word in words:
        if word in CALLABLE_NOUNS:
            return "callable"
        if word in TYPE_NOUNS:
            return "type"
    return "type" if words[0] in TYPE_OPENERS else None


# Words that end a description's head noun phrase: "Validator [which ...]", "A field [that ...]".
HEAD_PHRASE_ENDS = frozenset({"that", "which", "who", "whose", "for", "from", "with", "to", "when", "if", "of",
                              "in", "on", "used", "where", "by", "as"})


def head_phrase(query: str) -> list[str]:
    """The lowercased words of a description's opening noun phrase ("A IPv4 Network Interface field")."""
    if len(query.split()) > MAX_DESCRIPTION_WORDS:
        return []
    words = [word.lower() for word in _WORD.findall(query[:200])]
    head = []
    for word in words[:8]:
        if word in HEAD_PHRASE_ENDS:
            break
        head.append(word)
    return head
