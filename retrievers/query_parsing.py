"""What a query's text names: identifier-like tokens, file paths and traceback frames, and the text to embed.

Pure functions of the query string; :mod:`retrievers.query_shape` reads what kind of symbol it asks for.
"""

from __future__ import annotations

import re

from .query_shape import is_question, without_framing
from .tokenize import split_identifier, with_abbreviations

CODE_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
PATH_MENTION = re.compile(r"[A-Za-z0-9_\-./\\]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|mjs|cjs)\b")
TRACEBACK_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([A-Za-z_][A-Za-z0-9_]*))?')
MARKUP = re.compile(r":(?:class|func|meth|attr|mod|obj|data|exc|ref|py:\w+):|`+|\*\*")
MIN_SENTENCE_WORDS = 4
SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+)\s*([A-Z][a-z]+)\b")


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
    paths += PATH_MENTION.findall(query)
    return list(dict.fromkeys(p.replace("\\", "/") for p in paths))
