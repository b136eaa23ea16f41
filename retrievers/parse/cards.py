"""What each chunk contributes to the indexes: its BM25 document and its embedded views.

A *card* is a compact description of a chunk — where it lives, what it is called
(in words), its signature, the first paragraph of its docstring and its most
frequent identifiers. MiniLM embeds cards about twice as fast as raw code (they are
shorter) and they carry the vocabulary a question is asked in; the raw code view
adds what the card leaves out.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections import Counter
from functools import lru_cache
from pathlib import PurePosixPath

from ..core.model import Chunk, ParsedFile
from ..lexical.tokenize import CODE_NOISE, IDENTIFIER, split_identifier, tokenize_code

CARD_IDENTIFIERS = 30
SYMBOL_REPEAT = 3
PATH_REPEAT = 2
CODE_VIEW_MAX_LINES = 60
# A doc comment written above a definition (``/** ... */``, ``///``, ``//``): part of the chunk's text, so it is
# shown and literally searchable, but its words reach the indexes once, through the docstring in the card.
_LEADING_COMMENT_LINE = re.compile(r"^\s*(?://|/\*|\*|$)")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TYPE_ARGUMENTS_AND_PARENTHESIS = re.compile(r"\s*(?:<[^()]*>)?\s*\(")


def words_of(identifier: str) -> str:
    """``store_parse_result`` -> ``store parse result``."""
    return " ".join(split_identifier(identifier))


def first_paragraph(docstring: str) -> str:
    """The docstring up to its first blank line."""
    return re.split(r"\n\s*\n", docstring.strip(), maxsplit=1)[0].replace("\n", " ")


def salient_identifiers(text: str, exclude: set[str], limit: int = CARD_IDENTIFIERS) -> list[str]:
    """The most frequent identifiers of a chunk, most frequent first, noise words dropped."""
    counts = Counter(IDENTIFIER.findall(text))
    for name in [name for name in counts if len(name) < 3 or name in exclude or name.lower() in CODE_NOISE]:
        del counts[name]  # filtered once per distinct name; the kept names stay in first-seen order for ties
    return [name for name, _ in counts.most_common(limit)]


@lru_cache(maxsize=50_000)
def module_words(path: str) -> str:
    """``src/pkg/http_client.py`` -> ``src pkg http client``."""
    pure = PurePosixPath(path)
    return " ".join(words_of(part) for part in [*pure.parts[:-1], pure.stem])


def card_text(chunk: Chunk, members: list[str] | None = None, returns: str = "") -> str:
    """The compact description embedded for a chunk.

    Args:
        chunk: The chunk to describe.
        members: Names of the chunk's direct children (a class's methods), which say
            more about what a class is for than its header does.
        returns: For an undocumented function, the summary of the documented type it returns
            (a factory is best described by what it builds).
    """
    name = chunk.symbol.rsplit(".", 1)[-1]
    header = f"{chunk.kind} {words_of(chunk.symbol.replace('.', '_'))} in {module_words(chunk.path)}"
    parts = [header, chunk.signature or name]
    if chunk.docstring:
        parts.append(first_paragraph(chunk.docstring)[:400])
    elif returns:
        parts.append(f"returns {returns}")
    if members:
        parts.append("members: " + " ".join(list(dict.fromkeys(members))[:CARD_IDENTIFIERS]))
    identifiers = salient_identifiers(code_of(chunk), exclude={name})
    if identifiers:
        parts.append(" ".join(identifiers))
    return "\n".join(parts)


def return_type_text(signature: str, name: str) -> str:
    """The return type written in a signature, in any of the indexed languages' spellings.

    ``fn f(x: u8) -> Foo<T> where ...``, ``f(x): Foo``, ``func (r *R) F(x int) (*Foo, error)``,
    ``public <T> Foo<T> f(int x)``, ``def f(x) -> Foo``; ``""`` when none is written.
    """
    opening = _call_opening(signature, name) if name else None
    if opening is None:
        return signature.split("->", 1)[1].split(" where ", 1)[0] if "->" in signature else ""
    depth, close = 0, -1
    for position in range(opening[1] - 1, len(signature)):
        depth += {"(": 1, ")": -1}.get(signature[position], 0)
        if depth == 0:
            close = position
            break
    rest = signature[close + 1:].strip() if close >= 0 else ""
    if rest.startswith(("->", ":")):
        rest = rest.lstrip("-:>")
    rest = re.split(r"\bwhere\b|\bthrows\b|=>|\{", rest, maxsplit=1)[0].strip()
    return rest or signature[: opening[0]]  # Java and C-like: the type is written before the name


def _call_opening(signature: str, name: str) -> tuple[int, int] | None:
    """Where ``name(`` (or ``name<T>(``) first starts in ``signature``, and the index after its ``(``.

    A regular expression built from ``name`` finds the same, but compiling one per name cost ~1 s on 10k chunks.
    """
    first_is_word = _is_word_character(name[0])
    start = signature.find(name)
    while start >= 0:
        before_is_word = start > 0 and _is_word_character(signature[start - 1])
        if before_is_word != first_is_word:
            after = _TYPE_ARGUMENTS_AND_PARENTHESIS.match(signature, start + len(name))
            if after:
                return start, after.end()
        start = signature.find(name, start + 1)
    return None


def _is_word_character(character: str) -> bool:
    return character.isalnum() or character == "_"


def returned_summary(chunk: Chunk, type_summaries: dict[str, str]) -> str:
    """``"Foo: <Foo's summary>"`` for an undocumented function returning a documented type of the repository."""
    if chunk.docstring or chunk.kind not in ("function", "method") or not chunk.signature:
        return ""
    name = chunk.symbol.rsplit(".", 1)[-1]
    own = {name, chunk.parent.rsplit(".", 1)[-1] if chunk.parent else ""}
    for type_name in IDENTIFIER.findall(return_type_text(chunk.signature, name)):
        summary = type_summaries.get(type_name)
        if summary and type_name not in own:
            return f"{type_name}: {summary}"
    return ""


def type_summaries(types: list[tuple[str, str]]) -> dict[str, str]:
    """Type name -> the first sentence of its docstring, for names that mean one documented type."""
    found: dict[str, str] = {}
    ambiguous: set[str] = set()
    for name, docstring in types:
        summary = first_paragraph(docstring)[:200] if docstring else ""
        if not summary:
            continue
        if name in found and found[name] != summary:
            ambiguous.add(name)
        found[name] = summary
    return {name: summary for name, summary in found.items() if name not in ambiguous}


def code_of(chunk: Chunk) -> str:
    """The chunk's text without its doc comment, above it or a Python docstring (its words reach the card)."""
    if not chunk.docstring or chunk.part:
        return chunk.text
    if chunk.language == "python":
        return without_docstring(chunk.text)
    lines = chunk.text.split("\n")
    first_code = next((i for i, line in enumerate(lines) if not _LEADING_COMMENT_LINE.match(line)), len(lines))
    return "\n".join(lines[first_code:])


@lru_cache(maxsize=1024)  # the card, the BM25 document and the code view each read a chunk's code in turn
def without_docstring(text: str) -> str:
    """A Python definition's or module's text without the docstring statement (unchanged where it does not parse)."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return text
    body = tree.body
    if len(body) == 1 and isinstance(body[0], _DEFINITIONS):
        body = body[0].body  # a definition's chunk (decorators included): its own first statement
    if not body or not _is_docstring(body[0]):
        return text
    lines = text.split("\n")
    return "\n".join(lines[:body[0].lineno - 1] + lines[body[0].end_lineno or body[0].lineno:])


def _is_docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def code_text(chunk: Chunk) -> str:
    """The raw-code view: the chunk's first lines, prefixed with where it lives."""
    body = "\n".join(code_of(chunk).splitlines()[:CODE_VIEW_MAX_LINES])
    return f"{chunk.path} {chunk.symbol}\n{body}"


def members_by_parent(chunks: list[Chunk]) -> dict[str, list[str]]:
    """The direct children's names of every symbol in one file's chunks."""
    members: dict[str, list[str]] = {}
    for chunk in chunks:
        if chunk.parent and chunk.kind not in ("module", "text"):
            members.setdefault(chunk.parent, []).append(chunk.symbol.rsplit(".", 1)[-1])
    return members


def lexical_tokens(chunk: Chunk) -> list[str]:
    """The BM25 document of a chunk: its text, with its name and path repeated as field boosts."""
    name_tokens = tokenize_code(chunk.symbol.replace(".", " "))
    path_tokens = tokenize_code(module_words(chunk.path))
    return (
        tokenize_code(code_of(chunk))
        + tokenize_code(chunk.signature)
        + name_tokens * SYMBOL_REPEAT
        + path_tokens * PATH_REPEAT
    )


def with_index_texts(parsed: ParsedFile) -> ParsedFile:
    """``parsed`` with each chunk's BM25 document, card (without :func:`returned_summary`) and code view filled in."""
    members = members_by_parent(parsed.chunks)
    parsed.documents = [" ".join(lexical_tokens(chunk)) for chunk in parsed.chunks]
    parsed.cards = [card_text(chunk, members.get(chunk.symbol)) for chunk in parsed.chunks]
    parsed.codes = [code_text(chunk) for chunk in parsed.chunks]
    return parsed
