"""Code-aware tokenisation shared by indexing and querying.

Identifiers are kept whole *and* split into their camelCase / snake_case parts, so
``storeParseResult`` matches a query for ``store_parse_result``, ``parse`` and
``storeparseresult``. Words are lowercased and lightly stemmed so prose ("parses
the headers") meets code (``parse_header``). Stop words are dropped from queries
only: in code they are rarely noise worth the bookkeeping.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache

# The shortest word a run-together name (``readline``, ``getsendbuffer``) is split into.
MIN_COMPOUND_PART = 3

# An identifier: ASCII letters, digits and underscores, not starting with a digit. Indexing, query tokens and the
# regexes that find names in text build on this one definition; the variants below say how and why they differ.
IDENTIFIER_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"
IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
# Identifiers joined by dots or ``::``: a name a query spells out (``os.path.join``, ``std::fs::read``).
QUALIFIED_NAME_PATTERN = rf"{IDENTIFIER_PATTERN}(?:(?:\.|::){IDENTIFIER_PATTERN})*"
# Joined by dots only: a type named in an annotation (``typing.Optional``, ``models.User``).
DOTTED_NAME_PATTERN = rf"{IDENTIFIER_PATTERN}(?:\.{IDENTIFIER_PATTERN})*"
# A name as a question may spell a JavaScript one: ``$`` anywhere (``$store``), ``#`` first (a private ``#send``).
SCRIPT_IDENTIFIER_PATTERN = r"[A-Za-z_$#][A-Za-z0-9_$]*"
# A name as a definition line spells it: JavaScript's ``$`` too, and after the first letter any word character.
DEFINED_NAME_PATTERN = r"[A-Za-z_$][\w$]*"

# The endings that name an exception type: ``ValueError``, ``IOException``, ``DeprecationWarning``.
EXCEPTION_ENDINGS = ("Error", "Exception", "Warning")
# A type's name makes it an exception with these too: the roots of Java's and Python's hierarchies (``Throwable``,
# ``KeyboardInterrupt``). Only for names of types: in text, ``Interrupt`` is mostly a word of the prose.
EXCEPTION_TYPE_ENDINGS = (*EXCEPTION_ENDINGS, "Throwable", "Interrupt")
# A word of text naming an exception, the bare ending included (``ValueError: ...``, ``Error: ...``): a regex part.
EXCEPTION_WORD_PATTERN = rf"\w*(?:{'|'.join(EXCEPTION_ENDINGS)})"
# Only a compound name (``ValueError``), not the word ``Error`` a sentence may start with: a regex part.
EXCEPTION_NAME_PATTERN = rf"\w+(?:{'|'.join(EXCEPTION_ENDINGS)})"

_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+|\d+")

STOP_WORDS = frozenset(
    """a an the and or but if then else when while of in on at to for from by with without into onto
    over under about as is are was were be been being do does did done have has had having it its
    this that these those there here which who whom whose what where why how can could should would
    will shall may might must i me my we our you your he she they them their not no nor so than too
    very just also any all each every some such only own same other more most few both again once
    get gets got given use used uses using please via etc e g ie eg one two""".split()
)

_NOTHING: frozenset[str] = frozenset()
# Python keywords and builtins carry no topical signal inside code chunks.
CODE_NOISE = frozenset(
    """self cls def return none true false pass import from class elif else try except finally raise
    lambda yield async await global nonlocal del assert with args kwargs var let const function new
    this null undefined void public private protected static final func fn pub impl mut""".split()
)


def is_exception_name(name: str) -> bool:
    """Whether a type named ``name`` is an exception by its name alone (``ValueError``, ``Throwable``)."""
    return name.endswith(EXCEPTION_TYPE_ENDINGS)


@lru_cache(maxsize=200_000)
def split_identifier(identifier: str) -> tuple[str, ...]:
    """Split ``parseHTTPResponse_v2`` into ``("parse", "http", "response", "v2")``-like parts."""
    parts: list[str] = []
    for piece in identifier.split("_"):
        if not piece:
            continue
        parts.extend(p.lower() for p in _CAMEL_PARTS.findall(piece))
    return tuple(parts)


# Prose words and the short forms identifiers spell them with ("the minimum index" -> ``min_idx``).
CODE_ABBREVIATIONS = {
    "minimum": ("min",), "maximum": ("max",), "length": ("len",), "string": ("str",), "number": ("num",),
    "index": ("idx",), "configuration": ("config", "cfg"), "context": ("ctx",), "message": ("msg",),
    "error": ("err",), "argument": ("arg",), "parameter": ("param",), "reference": ("ref",),
    "attribute": ("attr",), "directory": ("dir",), "environment": ("env",), "initialize": ("init",),
    "object": ("obj",), "previous": ("prev",), "temporary": ("tmp", "temp"), "value": ("val",),
    "source": ("src",), "destination": ("dst", "dest"), "position": ("pos",), "information": ("info",),
    "specification": ("spec",), "callback": ("cb",), "buffer": ("buf",), "character": ("char",),
    "command": ("cmd",), "current": ("cur", "curr"), "database": ("db",), "dictionary": ("dict",),
    "document": ("doc",), "element": ("elem",), "expression": ("expr",), "identifier": ("id",),
    "library": ("lib",), "original": ("orig",), "package": ("pkg",), "pointer": ("ptr",), "request": ("req",),
    "response": ("resp",), "sequence": ("seq",), "statistic": ("stat",), "synchronize": ("sync",),
    "utility": ("util",), "variable": ("var",), "address": ("addr",), "allocate": ("alloc",),
    "authentication": ("auth",), "calculate": ("calc",), "column": ("col",), "compare": ("cmp",),
    "connection": ("conn",), "description": ("desc",), "execute": ("exec",), "format": ("fmt",),
    "generate": ("gen",), "implementation": ("impl",), "operation": ("op",), "option": ("opt",),
    "property": ("prop",), "random": ("rand",), "receive": ("recv",), "repository": ("repo",),
    "separator": ("sep",), "standard": ("std",), "transaction": ("txn",),
}


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A deliberately light English stemmer: plural and verb endings only.

    Heavier stemmers (Porter) conflate identifiers that mean different things in
    code (``general``/``generator``); these few rules fix the common prose/code mismatch.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("ing") and len(word) >= 6:
        word = _undouble(word[:-3])
    elif word.endswith("ed") and len(word) >= 5:
        word = _undouble(word[:-2])
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    # Drop a final "e" so parse / parses / parsed / parsing all meet at "pars".
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _abbreviations_by_stem() -> dict[str, tuple[str, ...]]:
    """``CODE_ABBREVIATIONS`` keyed the way query tokens arrive (stemmed: ``"messag"``)."""
    return {stem(word): shorts for word, shorts in CODE_ABBREVIATIONS.items()}


def _undouble(word: str) -> str:
    """``runn`` -> ``run``: undo the consonant doubling of ``running`` / ``stopped``."""
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        return word[:-1]
    return word


# Identifiers repeat across a repository's chunks: each one's tokens are worked out once per process.
IDENTIFIER_CACHE_LIMIT = 400_000
_document_tokens_of: dict[str, tuple[str, ...]] = {}


@lru_cache(maxsize=65_536)  # a long query repeats its identifiers, and every node of a run reads the query
def _tokens_of_identifier(identifier: str, skip: frozenset[str], skip_parts: frozenset[str]) -> tuple[str, ...]:
    """An identifier whole when it has several parts, then its stemmed parts, lowercased; ``skip`` drops words."""
    lowered = identifier.lower()
    if lowered in skip or len(lowered) < 2:
        return ()
    parts = split_identifier(identifier)
    whole = (lowered.strip("_"),) if len(parts) > 1 else ()
    return whole + tuple(stem(part) for part in parts if len(part) > 1 and part not in skip_parts)


def _identifier_tokens(text: str, skip: frozenset[str], skip_parts: frozenset[str]) -> Iterator[str]:
    """Every identifier's tokens in ``text``, in order."""
    for identifier in IDENTIFIER.findall(text):
        yield from _tokens_of_identifier(identifier, skip, skip_parts)


def tokenize_code(text: str) -> list[str]:
    """Tokens for a document: whole identifiers plus their parts, stemmed, lowercased."""
    cache = _document_tokens_of
    if len(cache) > IDENTIFIER_CACHE_LIMIT:
        cache.clear()
    tokens: list[str] = []
    for identifier in IDENTIFIER.findall(text):
        found = cache.get(identifier)
        if found is None:
            found = cache[identifier] = _tokens_of_identifier(identifier, CODE_NOISE, _NOTHING)
        tokens.extend(found)
    return tokens


def tokenize_query(text: str) -> list[str]:
    """Tokens for a query: like documents, minus English stop words and duplicates."""
    return list(_query_tokens(text))


@lru_cache(maxsize=64)  # the graph's nodes and each result's snippet tokenize the same query again
def _query_tokens(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_identifier_tokens(text, STOP_WORDS, STOP_WORDS)))


def repeated_by_frequency(tokens: list[str], text: str) -> list[str]:
    """``tokens`` with each one repeated by how often ``text`` uses it: 1 + log2 of its count.

    BM25 adds a repeated query token's score again, so the words a query recurs to (the feature a report is about)
    outweigh the words it uses once (its environment, its prose); a short query rarely repeats one.
    """
    counts = Counter(_identifier_tokens(text, STOP_WORDS, STOP_WORDS))
    return [token for token in tokens for _ in range(1 + int(math.log2(max(counts[token], 1))))]


def compound_words(word: str, wanted: set[str], known: Callable[[str], bool]) -> tuple[int, int]:
    """How many of a run-together word's words a query uses, and how many it has (``getsendbuffer``: 2 of 3).

    ``(0, 0)`` unless the query's words (at least :data:`MIN_COMPOUND_PART` letters) and known words of the
    repository's vocabulary spell the whole word, left to right.
    """
    position, found, parts = 0, 0, 0
    # Left to right; where two query words start at one letter (``buf``, ``buffer``), the longer spells more.
    inside = sorted((word.find(t), -len(t), t) for t in wanted if len(t) >= MIN_COMPOUND_PART and t in word)
    for start, _, token in inside:
        if start < position:
            continue
        if not _is_word(word[position:start], known):
            return 0, 0
        parts += (start > position) + 1
        found += 1
        # A stemmed query word takes the ending its stem dropped: "fixtur" spells "fixtures".
        ending = next((end for end in range(len(word), start + len(token) - 1, -1)
                       if stem(word[start:end]) == token), start + len(token))
        position = ending
    rest = word[position:]
    if not found or not _is_word(rest, known) or parts + bool(rest) < 2:
        return 0, 0
    return found, parts + bool(rest)


def _is_word(text: str, known: Callable[[str], bool]) -> bool:
    """Empty, or a word of the vocabulary long enough to be one."""
    return not text or (len(text) >= MIN_COMPOUND_PART and known(stem(text)))


def with_abbreviations(tokens: list[str]) -> list[str]:
    """Query tokens plus the short forms identifiers use for them (``minimum`` -> ``min``)."""
    return list(dict.fromkeys(tokens + [short for token in tokens for short in _ABBREVIATED.get(token, ())]))


def content_words(text: str) -> list[str]:
    """Lowercased words of a text that are not stop words (for heuristics)."""
    return [w for w in re.findall(r"[a-z0-9_]+", text.lower()) if w not in STOP_WORDS]


_ABBREVIATED = _abbreviations_by_stem()
