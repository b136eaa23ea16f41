"""Queries mined from one package's files: docstrings, pasted code lines and error messages.

The package is copied from ``data/source`` to ``data/corpus``; the doc comments of the sampled docstring
targets are blanked in that copy (their lines become empty, a Python docstring that was the whole body
becomes ``pass``), so line numbers stay and the definition must be found from its code. A docstring query
whose words still occur anywhere in the stripped copy is dropped. Code-line and error-message queries are
read from the stripped copy, so their gold lines are where a searcher will see them.
"""

from __future__ import annotations

import ast
import os
import random
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .common import family_of, is_auxiliary, is_test_path, language_of
from .definitions import Definition, definitions, innermost, tree_of
from .doc_text import drop_leading_name, first_sentence, normalised_tokens, usable
from .error_sites import error_sites

MAX_CORPUS_FILE_BYTES = 2_000_000
MAX_ERROR_DEFINITIONS = 3
CODE_LINE_CHARS = (20, 160)
_COMMENT_START = ("#", "//", "/*", "*", '"""', "'''", "<!--", "--")
_IMPORT_LINE = re.compile(r"^(import\b|from\s+\S+\s+import\b|use\s|package\s|extern crate\b|mod\s+\w+;|"
                          r"(const|let|var)\s+\w+\s*=\s*require\(|export\s+\*|export\s+\{[^}]*\}\s+from)")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w+")


@dataclass
class SourceFile:
    """One source file of the package's language, read and parsed."""

    rel: str
    language: str  # the file's own language (tsx apart from typescript)
    data: bytes
    defs: list[Definition]
    aside: bool  # a test, example, benchmark or docs file: never a gold


@dataclass
class Candidate:
    """A docstring query before sampling."""

    file: SourceFile
    definition: Definition
    query: str
    original: str


def read_sources(root: Path, language: str) -> list[SourceFile]:
    """Every file of the package's language under root, parsed, in path order."""
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for filename in sorted(filenames):
            path = Path(dirpath, filename)
            rel = path.relative_to(root).as_posix()
            file_language = language_of(rel)
            if file_language is None or family_of(file_language) != language or path.is_symlink():
                continue
            data = path.read_bytes()
            files.append(SourceFile(rel, file_language, data, definitions(rel, data, file_language),
                                    is_test_path(rel) or is_auxiliary(rel)))
    return files


def docstring_candidates(files: list[SourceFile], language: str) -> tuple[list[Candidate], dict]:
    """Documented definitions whose first doc sentence is a usable query, unique in the package.

    Definitions in tests, examples and docs, body-less declarations and deprecated ones are left out.
    """
    counts: Counter = Counter()
    raw = []
    for source in files:
        symbols = Counter(d.symbol for d in source.defs)
        for definition in source.defs:
            if definition.doc is None:
                continue
            original = first_sentence(definition.doc.raw, language)
            query = drop_leading_name(original, definition.name, definition.symbol)
            counts[query.lower()] += 1
            if (source.aside or not definition.has_body or definition.deprecated
                    or definition.doc.inline or definition.kind == "impl" or symbols[definition.symbol] > 1):
                continue
            if "deprecated" in definition.doc.raw.lower() or not usable(query, definition.name):
                continue
            raw.append(Candidate(source, definition, query, original))
    kept = [c for c in raw if counts[c.query.lower()] == 1]
    documented = sum(1 for f in files for d in f.defs if d.doc)
    return kept, {"definitions": sum(len(f.defs) for f in files), "documented": documented,
                  "candidates": len(kept), "public_candidates": sum(c.definition.public for c in kept),
                  "duplicates": len(raw) - len(kept)}


def blank(data: bytes, candidates: list[Candidate]) -> bytes:
    """The file with the candidates' doc comments blanked (``pass`` where a docstring was the whole body)."""
    lines = data.split(b"\n")
    for candidate in candidates:
        doc = candidate.definition.doc
        for first, last in doc.ranges:
            for index in range(first - 1, last):
                lines[index] = b"\r" if lines[index].endswith(b"\r") else b""
        if doc.pass_column >= 0:
            first = doc.ranges[0][0] - 1
            lines[first] = b" " * doc.pass_column + b"pass" + lines[first]
    return b"\n".join(lines)


def _still_sound(source: SourceFile, new: bytes, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates whose definition, after blanking, is still there, undocumented, at the same end line."""
    if source.language == "python":
        try:
            ast.parse(new.decode("utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            return []
    elif tree_of(source.rel, new, source.language).root_node.has_error and not tree_of(
            source.rel, source.data, source.language).root_node.has_error:
        return []
    after = {(d.symbol, d.end): d for d in definitions(source.rel, new, source.language)}
    return [c for c in candidates
            if (c.definition.symbol, c.definition.end) in after and after[(c.definition.symbol, c.definition.end)].doc
            is None]


def strip_files(root: Path, sample: list[Candidate]) -> list[Candidate]:
    """Blank the sample's doc comments in the corpus copy; the candidates that were stripped cleanly."""
    by_file: dict[str, list[Candidate]] = {}
    for candidate in sample:
        by_file.setdefault(candidate.file.rel, []).append(candidate)
    stripped = []
    for rel, candidates in by_file.items():
        source = candidates[0].file
        for _ in range(2):  # a second pass without the targets the first one broke
            new = blank(source.data, candidates)
            sound = _still_sound(source, new, candidates)
            if len(sound) == len(candidates):
                break
            candidates = sound
        if candidates and len(_still_sound(source, new, candidates)) == len(candidates):
            (root / rel).write_bytes(new)
            stripped.extend(candidates)
    return stripped


def corpus_text(root: Path) -> str:
    """The whole corpus copy in normalised word form, for the leak check."""
    parts = []
    for dirpath, _, filenames in os.walk(root):
        for filename in filenames:
            path = Path(dirpath, filename)
            if not path.is_symlink() and path.stat().st_size < MAX_CORPUS_FILE_BYTES:
                parts.append(normalised_tokens(path.read_bytes().decode("utf-8", "replace")))
    return "\x00".join(parts)


def gold_of(rel: str, definition: Definition, line: int | None = None) -> dict:
    """The gold record of a definition; a line in a container's head points at the head only."""
    end = definition.target_end if (line is None or line <= definition.head_end) else definition.end
    gold = {"path": rel, "symbol": definition.symbol, "kind": definition.kind, "start_line": definition.start,
            "end_line": end}
    if line is not None:
        gold["line"] = line
    return gold


def _header_end(lines: list[bytes], definition: Definition) -> int:
    """Last line of a definition's header: decorators down to the line that names it."""
    name = definition.name.encode()
    for number in range(definition.start, min(definition.end, definition.start + 8) + 1):
        if name in lines[number - 1]:
            return number
    return definition.start


def _line_ok(text: str) -> bool:
    stripped = text.strip()
    return (CODE_LINE_CHARS[0] <= len(stripped) <= CODE_LINE_CHARS[1] and not stripped.startswith(_COMMENT_START)
            and not _IMPORT_LINE.match(stripped) and len(_IDENTIFIER.findall(stripped)) >= 3
            and not re.fullmatch(r"""["'`].*["'`][,;]?""", stripped))


def code_line_queries(files: list[SourceFile], rng: random.Random, limit: int) -> list[tuple[str, list[dict]]]:
    """Lines pasted from the code, one per sampled definition: lines found once in the package, not headers."""
    counts: Counter = Counter()
    for source in files:
        for line in source.data.decode("utf-8", "replace").split("\n"):
            counts[" ".join(line.split())] += 1
    per_definition = []
    for source in files:
        if source.aside or not source.defs:
            continue
        raw_lines = source.data.split(b"\n")
        text_lines = source.data.decode("utf-8", "replace").split("\n")
        owners = {}
        for definition in sorted(source.defs, key=lambda d: d.start - d.end):  # largest first, inner overwrite
            for number in range(definition.start, definition.end + 1):
                owners[number] = definition
        for definition in source.defs:  # doc comments are prose, not code: never a pasted line
            for first, last in definition.doc.ranges if definition.doc else []:
                for number in range(first, last + 1):
                    owners.pop(number, None)
        for definition in source.defs:
            if definition.kind == "impl":
                continue
            header_end = _header_end(raw_lines, definition)
            choices = [number for number in range(header_end + 1, definition.end + 1)
                       if owners.get(number) is definition and number <= len(text_lines)
                       and _line_ok(text_lines[number - 1]) and counts[" ".join(text_lines[number - 1].split())] == 1]
            if choices:
                number = rng.choice(choices)
                per_definition.append((text_lines[number - 1].strip(), [gold_of(source.rel, definition, number)]))
    return rng.sample(per_definition, min(limit, len(per_definition)))


def error_queries(files: list[SourceFile], rng: random.Random, limit: int) -> list[tuple[str, list[dict]]]:
    """Error messages with where they are raised; a message raised in more than three definitions is dropped."""
    by_message: dict[str, dict] = {}
    for source in files:
        if source.aside:
            continue
        for site in error_sites(source.rel, source.data, source.language):
            definition = innermost(source.defs, site.line)
            if definition is not None:
                by_message.setdefault(site.message, {})[(source.rel, definition.symbol, definition.start)] = gold_of(
                    source.rel, definition, site.line)
    usable_messages = [(message, sorted(golds.values(), key=lambda g: (g["path"], g["start_line"])))
                       for message, golds in sorted(by_message.items()) if len(golds) <= MAX_ERROR_DEFINITIONS]
    return rng.sample(usable_messages, min(limit, len(usable_messages)))


def mine_package(source_root: Path, corpus_root: Path, language: str, seed: str, limits: dict) -> tuple[list, dict]:
    """Copy, strip and mine one package: ([(kind, query, gold, extra)], statistics)."""
    if corpus_root.exists():
        shutil.rmtree(corpus_root)
    shutil.copytree(source_root, corpus_root, symlinks=True)
    files = read_sources(corpus_root, language)
    candidates, stats = docstring_candidates(files, language)
    rng = random.Random(f"{seed}-docstring")
    public = [c for c in candidates if c.definition.public]
    private = [c for c in candidates if not c.definition.public]
    # Public definitions first (the kind users look for), then the documented internals.
    sample = (rng.sample(public, len(public)) + rng.sample(private, len(private)))[: limits["docstring"]]
    stripped = strip_files(corpus_root, sample)
    text = corpus_text(corpus_root)
    kept = [c for c in stripped if normalised_tokens(c.query).strip() and normalised_tokens(c.query) not in text]
    kept.sort(key=lambda c: (c.file.rel, c.definition.start))
    stats.update(files=len(files), sampled=len(sample), stripped=len(stripped), leaked=len(stripped) - len(kept))
    queries = [("docstring", c.query, [gold_of(c.file.rel, c.definition)],
                {"query_original": c.original, "public": c.definition.public}) for c in kept]
    stripped_files = read_sources(corpus_root, language)
    queries += [("code_line", q, gold, {}) for q, gold in
                code_line_queries(stripped_files, random.Random(f"{seed}-code_line"), limits["code_line"])]
    queries += [("error_message", q, gold, {}) for q, gold in
                error_queries(stripped_files, random.Random(f"{seed}-error_message"), limits["error_message"])]
    return queries, stats
