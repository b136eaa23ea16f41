"""What a query's text names: identifier-like tokens, file paths and traceback frames, and the text to embed.

Pure functions of the query string; :mod:`retrievers.query.shape` reads what kind of symbol it asks for.
"""

from __future__ import annotations

import re

from ..lexical.tokenize import IDENTIFIER_PATTERN, QUALIFIED_NAME_PATTERN, split_identifier, with_abbreviations
from .shape import is_question, without_framing

CODE_TOKEN = re.compile(QUALIFIED_NAME_PATTERN)
# A path mention is a run of path characters up to its last source-file ending (``src/app.py``); the two are
# found apart (see _path_mentions).
PATH_CHARACTERS = re.compile(r"[A-Za-z0-9_\-./\\]+")
PATH_ENDING = re.compile(r"\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|mjs|cjs)\b")
TRACEBACK_FRAME = re.compile(rf'File "([^"]+)", line (\d+)(?:, in ({IDENTIFIER_PATTERN}))?')
MARKUP = re.compile(r":(?:class|func|meth|attr|mod|obj|data|exc|ref|py:\w+):|`+|\*\*")
MIN_SENTENCE_WORDS = 4
# One \s after the stop, not \s+: \s+\s* splits a run of spaces every way before it gives up (quadratic).
SENTENCE_START = re.compile(r"(?:^|[.!?:]\s)\s*([A-Z][a-z]+)\b")
# One row of an environment listing: ``attrs  19.3.0``, ``attrs==19.3.0``, ``numpy: 1.19.1``, ``zarr: None``
# (pip list, pip freeze, conda list, a library's show-versions report), optionally with a location or build.
LISTING_ROW = re.compile(r"^\s*[A-Za-z][\w.\-\[\]]*(?:\s*[:=]=?\s*|\s+v?)(?:\d[\w.+\-!]*|None)(?:\s+\S+){0,3}\s*$")
MIN_LISTING_ROWS = 5


def without_environment_listing(text: str) -> str:
    """The text without runs of package-version rows (an issue report's pasted ``pip list``).

    A listing names hundreds of installed packages, which flood a lexical search with names that occur in the
    code for other reasons and outweigh the report's own words. A run is at least :data:`MIN_LISTING_ROWS`
    rows; one other line between rows (``OS: Darwin``) does not end it.
    """
    lines = text.split("\n")
    rows = [bool(LISTING_ROW.match(line)) for line in lines]
    dropped: set[int] = set()
    start = None
    for i in range(len(lines) + 1):
        inside = i < len(lines) and (rows[i] or (0 < i < len(lines) - 1 and rows[i - 1] and rows[i + 1]))
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            if sum(rows[start:i]) >= MIN_LISTING_ROWS:
                dropped.update(range(start, i))
            start = None
    return "\n".join(line for i, line in enumerate(lines) if i not in dropped) if dropped else text


def plain_text(text: str) -> str:
    """Text without reST roles, backticks and bold markers, which only confuse the sentence encoder."""
    return " ".join(MARKUP.sub(" ", text).split()) if len(text) < 2000 else MARKUP.sub(" ", text)


def is_code_like(token: str) -> bool:
    """``store_parse_result``, ``Searcher.search``, ``parseHTTP``, ``a::b`` look like code; ``the`` does not."""
    if "." in token or "::" in token or "_" in token.strip("_"):
        return True
    camel_word = token[:1].isupper() and any(c.islower() for c in token[1:]) and len(token) > 3
    return len(split_identifier(token)) > 1 or camel_word


def reads_as_prose(query: str) -> bool:
    """A sentence of words that mentions names of code (``Settings of openConnection ...``) rather than being them."""
    words = query.split()
    code_like = sum(is_code_like(word.strip(".,;:()`'\"")) for word in words)
    return len(words) >= MIN_SENTENCE_WORDS and 3 * code_like < len(words)


def code_tokens(query: str) -> list[str]:
    """The identifier-like tokens of a query, in order, without duplicates."""
    # "Returns the ...", "Register a ...": in a sentence, a capital that only starts it makes no class name
    # (a query of a word or two, "Searcher", still names one).
    capitalised = ({match.start(1) for match in SENTENCE_START.finditer(query)}
                   if len(query.split()) >= MIN_SENTENCE_WORDS else set())
    found = dict.fromkeys(match.group().replace("::", ".") for match in CODE_TOKEN.finditer(query)
                          if match.start() not in capitalised and is_code_like(match.group()))
    return [t.strip(".") for t in found if t.strip(".")]


def name_evidence(query: str, tokens: list[str]) -> list[str]:
    """The query tokens a definition's name may match: with code abbreviations, without a question's framing."""
    expanded = with_abbreviations(tokens)
    return without_framing(expanded) if is_question(query) else expanded


def mentioned_paths(query: str) -> list[str]:
    """File paths a query names (plain mentions and traceback frames), as written."""
    paths = [m.group(1) for m in TRACEBACK_FRAME.finditer(query)]
    paths += _path_mentions(query)
    return list(dict.fromkeys(p.replace("\\", "/") for p in paths))


def _path_mentions(text: str) -> list[str]:
    """Each run of path characters up to its last source-file ending, with at least one character before it.

    What one expression of both (``[...]+`` then the ending) finds, in linear time: that expression backtracks
    through a run from each of its characters (seconds for a 20,000-character query of paths).
    """
    endings = [(match.start(), match.end()) for match in PATH_ENDING.finditer(text)]
    found: list[str] = []
    next_ending = 0
    for run in PATH_CHARACTERS.finditer(text):
        last = None
        # An ending is made of path characters, so it lies inside one run; runs and endings come in order.
        while next_ending < len(endings) and endings[next_ending][1] <= run.end():
            start, end = endings[next_ending]
            if start > run.start():
                last = end
            next_ending += 1
        if last is not None:
            found.append(text[run.start() : last])
    return found
