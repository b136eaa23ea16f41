"""What kind of symbol a description asks for, read from how it opens.

Docstrings and the questions people type share a habit: a type is described with a noun phrase ("A field
that infers ...", "Raised when ...", "Base class for ..."), a function or method with a verb ("Return the
...", "Parses ..."). The opening words are a cheap prior on the kind of the answer.
"""

from __future__ import annotations

import re

from ..lexical.tokenize import STOP_WORDS, stem

# Nouns that name the kind outright, looked for among the first few words.
TYPE_NOUNS = frozenset({"class", "classes", "exception", "mixin", "metaclass", "interface",
                        "struct", "enum", "trait", "dataclass", "namedtuple", "subclass", "record"})
CALLABLE_NOUNS = frozenset({"function", "functions", "method", "methods", "decorator", "helper", "callback",
                            "routine", "shortcut", "hook"})
# Openers that start a noun phrase or an exception's docstring ("Raised if ...").
TYPE_OPENERS = frozenset({"a", "an", "raised", "thrown", "represents"})
HEAD_WORDS = 4
# A word that opens a verb's object: "Return *the* ...", "Check *whether* ...", "Split *an* ...".
# Not "that" / "which": "Field that ..." is a noun and its relative clause.
OBJECT_OPENERS = frozenset({"a", "an", "the", "this", "these", "those", "all", "each", "every", "whether", "if",
                            "true", "false", "it", "its", "self", "some", "any", "both", "none"})
# Words after a plural noun, not after a verb: "Options *of* ...", "Hooks *that* ...".
NOUN_FOLLOWERS = frozenset({"are", "of", "that", "which", "who", "for", "with", "in", "and", "or", "to"})
QUESTION_WORDS = frozenset({"how", "what", "where", "why", "which", "when", "who", "does", "is", "can"})
# Words that frame a question ("which class represents ...") rather than name what it asks for.
FRAMING_WORDS = frozenset({"class", "classes", "type", "types", "function", "functions", "method", "methods",
                           "represents", "represent"})
MAX_DESCRIPTION_WORDS = 40
# "Raised when ...", "Thrown if ...", "Exception thrown when ...": an exception type's own description.
EXCEPTION_OPENERS = frozenset({"raised", "thrown"})
EXCEPTION_NOUNS = frozenset({"exception", "error"})
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def is_question(query: str) -> bool:
    """Starts with a question word or ends with a question mark."""
    first = query.strip().split(maxsplit=1)[0].lower() if query.strip() else ""
    return first in QUESTION_WORDS or query.strip().endswith("?")


def without_framing(tokens: list[str]) -> list[str]:
    """A question's tokens minus the words that frame it ("class", "function", "represents")."""
    return [token for token in tokens if token not in _FRAMING_STEMS]


def described_kind(query: str) -> str | None:
    """``"type"``, ``"callable"`` or ``None`` (no opinion) for a one-sentence description or question."""
    if len(query.split()) > MAX_DESCRIPTION_WORDS:  # an issue report opening "A crash when ..." is no description
        return None
    words = [word.lower() for word in WORD.findall(query[:200])][:HEAD_WORDS]
    if not words:
        return None
    for word in words:
        if word in CALLABLE_NOUNS:
            return "callable"
        if word in TYPE_NOUNS:
            return "type"
    if words[0] in TYPE_OPENERS:
        return "type"
    return "callable" if opens_with_verb(query) else None


def describes_exception(query: str) -> bool:
    """Worded like an exception type's docstring: "Raised when ...", "An exception that ...", "Error raised if ..."."""
    if len(query.split()) > MAX_DESCRIPTION_WORDS:
        return False
    words = [word.lower() for word in WORD.findall(query[:200])][:2]
    if not words or words[0] in EXCEPTION_OPENERS:
        return bool(words)
    head = words[1] if words[0] in ("a", "an", "the") and len(words) > 1 else words[0]
    return head in EXCEPTION_NOUNS


def opens_with_verb(query: str) -> bool:
    """``Return the ...``, ``Converts a ...``: a verb and its object, the way a function's docstring opens."""
    words = WORD.findall(query[:200])[:2]
    if len(words) < 2 or words[0].lower() in STOP_WORDS or not words[0][1:].islower():
        return False
    first, second = words[0].lower(), words[1].lower()
    if second in OBJECT_OPENERS:
        return True
    # "Converts from ...", "Groups elements ...": a third-person verb; "Options of ..." is a plural noun.
    return first.endswith("s") and not first.endswith(("ss", "us", "is")) and second not in NOUN_FOLLOWERS


# Words that end a description's head noun phrase: "Checker [which ...]", "A column [that ...]".
HEAD_PHRASE_ENDS = frozenset({"that", "which", "who", "whose", "for", "from", "with", "to", "when", "if", "of",
                              "in", "on", "used", "where", "by", "as"})


def head_phrase(query: str) -> list[str]:
    """The lowercased words of a description's opening noun phrase ("A IPv6 Socket Address column")."""
    if len(query.split()) > MAX_DESCRIPTION_WORDS:
        return []
    words = [word.lower() for word in WORD.findall(query[:200])]
    head = []
    for word in words[:8]:
        if word in HEAD_PHRASE_ENDS:
            break
        head.append(word)
    return head


_FRAMING_STEMS = frozenset(stem(word) for word in FRAMING_WORDS)
