"""The query's shape as the ranking reads it: a question, an exception's description, a description's head.

Docstrings and the questions people type share habits: an exception is described as "Raised when ...", a kind
of a base class opens with that class's name ("Checker which ..."), a question with its question word. Which
kind of definition a description asks for, a type or a function, is a model learned from docstrings
(:mod:`retrievers.query.described`).
"""

from __future__ import annotations

import re

from ..lexical.tokenize import stem

QUESTION_WORDS = frozenset({"how", "what", "where", "why", "which", "when", "who", "does", "is", "can"})
# Words that frame a question ("which class represents ...") rather than name what it asks for.
FRAMING_WORDS = frozenset({"class", "classes", "type", "types", "function", "functions", "method", "methods",
                           "represents", "represent"})
# "Raised when ...", "Thrown if ...", "Exception thrown when ...": an exception type's own description.
EXCEPTION_OPENERS = frozenset({"raised", "thrown"})
EXCEPTION_NOUNS = frozenset({"exception", "error"})
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def is_question(query: str) -> bool:
    """Starts with a question word or ends with a question mark."""
    first = query.strip().split(maxsplit=1)[0].lower() if query.strip() else ""
    return first in QUESTION_WORDS or query.strip().endswith("?")


def is_multiline(query: str) -> bool:
    """More than one non-blank line: a report with its body, a traceback or a pasted block, not a phrase or a line."""
    lines = (line for line in query.splitlines() if line.strip())
    return next(lines, None) is not None and next(lines, None) is not None


def without_framing(tokens: list[str]) -> list[str]:
    """A question's tokens minus the words that frame it ("class", "function", "represents")."""
    return [token for token in tokens if token not in _FRAMING_STEMS]


def describes_exception(query: str) -> bool:
    """Worded like an exception type's docstring: "Raised when ...", "An exception that ...", "Error raised if ..."."""
    words = [word.lower() for word in WORD.findall(query[:200])][:2]
    if not words or words[0] in EXCEPTION_OPENERS:
        return bool(words)
    head = words[1] if words[0] in ("a", "an", "the") and len(words) > 1 else words[0]
    return head in EXCEPTION_NOUNS


# Words that end a description's head noun phrase: "Checker [which ...]", "A column [that ...]".
HEAD_PHRASE_ENDS = frozenset({"that", "which", "who", "whose", "for", "from", "with", "to", "when", "if", "of",
                              "in", "on", "used", "where", "by", "as"})


def head_phrase(query: str) -> list[str]:
    """The lowercased words of a description's opening noun phrase ("A IPv6 Socket Address column")."""
    words = [word.lower() for word in WORD.findall(query[:200])]
    head = []
    for word in words[:8]:
        if word in HEAD_PHRASE_ENDS:
            break
        head.append(word)
    return head


_FRAMING_STEMS = frozenset(stem(word) for word in FRAMING_WORDS)
