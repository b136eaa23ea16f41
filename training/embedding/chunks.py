"""A corpus's chunks with the two texts the index embeds for each: its card and its raw-code view.

The same steps as an index build (``retrievers.store``): the repository walk, ``parse_job`` (chunks, cards),
the repository's documented types for :func:`returned_summary`, and :func:`code_text`; so a model trained on
these texts is trained on what it will embed.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.core.index_settings import MAX_FILE_BYTES  # noqa: E402
from grepgraph.retrievers.core.model import TYPE_KINDS, Chunk  # noqa: E402
from grepgraph.retrievers.parse.cards import (  # noqa: E402
    card_text,
    code_text,
    members_by_parent,
    returned_summary,
    type_summaries,
)
from grepgraph.retrievers.parse.parallel import parse_job  # noqa: E402
from grepgraph.retrievers.source.walk import generated_reason, walk_repository  # noqa: E402

# Chunks the index makes of no definition (a module's remainder, a text window): kept as candidates, as the index
# keeps them, but never as a hard negative (they overlap the definitions around them).
NOT_DEFINITIONS = ("module", "text")


@dataclass
class EmbeddedChunk:
    """One chunk: where it is, and its card and raw-code texts as the index embeds them."""

    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    part: int
    is_test: bool
    card: str
    code: str

    def to_dict(self) -> dict:
        """The chunk as a plain dict (JSON)."""
        return asdict(self)


def parsed_files(files: list[tuple[str, bytes, str]]) -> list[tuple[str, list[Chunk], list[str]]]:
    """``(path, chunks, cards)`` of each ``(path, bytes, language)``, parsed as the index parses them."""
    out = []
    for path, data, language in files:
        parsed = parse_job((path, data, language))
        out.append((path, parsed.chunks, parsed.cards))
    return out


def embedded_chunks(files: list[tuple[str, bytes, str]]) -> list[EmbeddedChunk]:
    """The chunks of these files with their cards completed by the files' documented types, as the index does."""
    parsed = parsed_files(files)
    summaries = type_summaries([(chunk.symbol.rsplit(".", 1)[-1], chunk.docstring) for _, chunks, _ in parsed
                                for chunk in chunks if chunk.kind in TYPE_KINDS and chunk.docstring and not chunk.part])
    out = []
    for _, chunks, cards in parsed:
        members: dict[str, list[str]] | None = None
        for chunk, card in zip(chunks, cards, strict=True):
            returns = returned_summary(chunk, summaries)
            if returns:
                members = members if members is not None else members_by_parent(chunks)
                card = card_text(chunk, members.get(chunk.symbol), returns)
            out.append(EmbeddedChunk(chunk.path, chunk.symbol, chunk.kind, chunk.start_line, chunk.end_line,
                                     chunk.part, chunk.is_test, card, code_text(chunk)))
    return out


def corpus_files(corpus: Path) -> list[tuple[str, bytes, str]]:
    """``(path, bytes, language)`` of every file an index of ``corpus`` would parse."""
    files = []
    for source in walk_repository(corpus, MAX_FILE_BYTES).files:
        data = source.absolute.read_bytes()
        if generated_reason(source.absolute.name, data[:8192]) is None:
            files.append((source.path, data, source.language))
    return files


def commit_files(git_dir: Path, commit: str, paths: list[str], language_of: dict[str, str]) -> list[tuple]:
    """``(path, bytes, language)`` of ``paths`` at ``commit`` (those that exist there)."""
    files = []
    for path in paths:
        shown = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True)
        if shown.returncode == 0 and path in language_of:
            files.append((path, shown.stdout, language_of[path]))
    return files


def is_hit(chunk: EmbeddedChunk | dict, gold: dict) -> bool:
    """The rulers' rule: same path and overlapping lines, or the gold's symbol (or its last part) in that path."""
    if isinstance(chunk, dict):
        path, start, end, symbol = chunk["path"], chunk["start_line"], chunk["end_line"], chunk["symbol"]
    else:
        path, start, end, symbol = chunk.path, chunk.start_line, chunk.end_line, chunk.symbol
    if path != gold["path"]:
        return False
    if start <= gold["end_line"] and end >= gold["start_line"]:
        return True
    return symbol in (gold["symbol"], gold["symbol"].split(".")[-1])


def best_match(chunks: list[EmbeddedChunk], gold: dict) -> EmbeddedChunk | None:
    """The chunk that is the gold definition: its symbol, holding the gold's line (a code line) or its start."""
    line = gold.get("line") or gold["start_line"]
    hits = [chunk for chunk in chunks if is_hit(chunk, gold)]
    if not hits:
        return None
    return max(hits, key=lambda chunk: (chunk.symbol == gold["symbol"], chunk.start_line <= line <= chunk.end_line,
                                        chunk.kind not in NOT_DEFINITIONS, -chunk.part))
