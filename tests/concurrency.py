"""Concurrent searches while the index is rewritten: the harness of the concurrency suite and its benchmark.

A small repository (a copy of ``tests/fixtures/sample_repo``) is indexed with vectors once. A
re-index loop then rewrites a few of its files between two versions and re-indexes them (lexically:
``embed=False``, so Chroma keeps exactly the vectors of the first index and an answer depends on the
committed generation alone). After each commit the loop copies the committed index aside, by
generation. Searchers meanwhile run a fixed mix of queries; every answer records the generation(s)
its nodes saw (the ``generation`` of the trace entries). Afterwards each answer is compared with the
answer the same query gets alone, on a fresh searcher over the copy of that generation.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grepgraph.retrievers.store.index import CodeIndex
from grepgraph.retrievers.store.trust import MARK

SAMPLE_REPO = Path(__file__).resolve().parent / "fixtures" / "sample_repo"

# A fixed mix: questions, code names, graph questions, a structured query, a decomposed question, filters,
# literal and regex modes. Names ending in "+llm" run with the Ollama-protocol test server.
QUERIES: dict[str, dict[str, Any]] = {
    "question": {"query": "how are call edges inserted into the graph database", "limit": 5},
    "code name": {"query": "GraphStore.delete_file", "limit": 5},
    "callers": {"query": "who calls delete_file", "limit": 10},
    "subclasses": {"query": "subclasses of BaseParser", "limit": 10},
    "structured": {"query": "forget a removed file", "keywords": ["delete", "edges"],
                   "concepts": ["drop every row recorded for a path"], "limit": 5},
    "decomposed": {"query": "where is the config file loaded and also how are routes dispatched", "limit": 5},
    "scoped": {"query": "parse a source file", "paths": ["graphstore/**"], "limit": 5},
    "literal": {"query": "def ", "mode": "literal", "limit": 50},
    "regex": {"query": r"def \w+_(?:file|edges)\(", "mode": "regex", "limit": 20},
    "question+llm": {"query": "why would the parser miss the calls made inside a file?", "limit": 5,
                     "rewrite": True, "rerank": True},
}
# What the test LLM answers every prompt with: rewrite terms and a rerank order (each node reads its key).
LLM_REPLY = json.dumps({"terms": ["parse", "calls", "visitor"], "ranking": [2, 1, 3]})

# The two versions the re-index loop switches between: the second adds definitions, callers and edges
# the queries above find, and removes a file.
VARIANT_APPEND = {
    "graphstore/store.py": (
        "\n\ndef delete_file_edges(store: GraphStore, path: str) -> None:\n"
        '    """Remove the edges of a deleted file, then the file."""\n'
        "    store.delete_file(path)\n"
    ),
    "graphstore/parser.py": (
        "\n\nclass RustParser(BaseParser):\n"
        '    """Parse Rust sources into call edges."""\n\n'
        "    def parse(self, path: str, source: str) -> ParseResult:\n"
        "        return ParseResult(path=path)\n"
    ),
}
VARIANT_REMOVE = ["graphstore/config.py"]


def copy_sample_repo(target: Path) -> Path:
    """A fresh copy of the fixture repository at ``target``."""
    shutil.copytree(SAMPLE_REPO, target)
    return target


def write_variant(repo: Path, variant: int) -> None:
    """Switch the repository's files to version 0 (as in the fixture) or 1 (see ``VARIANT_APPEND``)."""
    for path, addition in VARIANT_APPEND.items():
        original = (SAMPLE_REPO / path).read_text()
        (repo / path).write_text(original + addition if variant else original)
    for path in VARIANT_REMOVE:
        if variant:
            (repo / path).unlink(missing_ok=True)
        else:
            shutil.copyfile(SAMPLE_REPO / path, repo / path)


def committed_generation(index_dir: Path) -> str:
    """The BM25 generation the index at ``index_dir`` points at now."""
    connection = sqlite3.connect(index_dir / "index.sqlite", timeout=30)
    try:
        return connection.execute("SELECT value FROM meta WHERE key = 'bm25_generation'").fetchone()[0]
    finally:
        connection.close()


class GenerationCopies:
    """Copies of the committed index, one per generation, each searchable on its own."""

    def __init__(self, root: Path, index_dir: Path) -> None:
        """Keep copies of ``index_dir`` under ``root``; its Chroma directory is copied once (it never changes)."""
        self.root = root
        self.index_dir = index_dir
        self.chroma = root / "chroma"
        root.mkdir(parents=True, exist_ok=True)
        shutil.copytree(index_dir / "chroma", self.chroma)
        self.generations: list[str] = []

    def path(self, generation: str) -> Path:
        """Where the copy of ``generation`` is."""
        return self.root / generation

    def copy_committed(self) -> str:
        """Copy the index as committed now (only the re-index loop writes it, so nothing commits meanwhile)."""
        generation = committed_generation(self.index_dir)
        target = self.path(generation)
        if target.exists():
            return generation
        target.mkdir()
        shutil.copy2(self.index_dir / MARK, target / MARK)  # the copy is this user's index too
        source = sqlite3.connect(self.index_dir / "index.sqlite", timeout=30)
        copy = sqlite3.connect(target / "index.sqlite")
        try:
            source.backup(copy)
        finally:
            copy.close()
            source.close()
        shutil.copytree(self.index_dir / "bm25" / generation, target / "bm25" / generation,
                        ignore=shutil.ignore_patterns("lease"))
        (target / "chroma").symlink_to(self.chroma, target_is_directory=True)
        self.generations.append(generation)
        return generation


@dataclass
class Answer:
    """What one search returned, and which generations its nodes saw."""

    name: str
    generations: frozenset[str]
    results: list[dict]
    total: int | None


def answer_of(name: str, output: dict) -> Answer:
    """An :class:`Answer` from a graph output (``results``, ``trace``, maybe ``total_matches``)."""
    seen = frozenset(entry["generation"] for entry in output["trace"] if entry.get("generation"))
    return Answer(name, seen, [dict(result) for result in output["results"]], output.get("total_matches"))


@dataclass
class Tally:
    """Counts of a concurrent run."""

    searches: int = 0
    errors: list[str] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    reindexes: int = 0
    mismatches: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, answer: Answer | None = None, error: str = "") -> None:
        """Count one search: its answer, or its error."""
        with self.lock:
            self.searches += 1
            if error:
                self.errors.append(error)
            if answer is not None:
                self.answers.append(answer)

    def summary(self) -> dict:
        """The counts a report prints."""
        return {"searches": self.searches, "answers": len(self.answers), "errors": len(self.errors),
                "mismatches": len(self.mismatches), "reindexes": self.reindexes,
                "generations_seen": len({g for a in self.answers for g in a.generations})}


def reindex_loop(repo: Path, index_dir: Path, copies: GenerationCopies, tally: Tally, stop: threading.Event,
                 pause_s: float, reindex: Callable[[], None] | None = None) -> None:
    """Switch the repository's version and re-index until ``stop``; copy each committed generation."""
    reindex = reindex or (lambda: CodeIndex(repo, index_dir).update(embed=False, wait_for_lock=True))
    variant = 0
    while not stop.is_set():
        variant = 1 - variant
        write_variant(repo, variant)
        try:
            reindex()
            copies.copy_committed()
        except Exception:  # noqa: BLE001 - reported with the searches' errors
            tally.record(error="re-index: " + traceback.format_exc(limit=3))
            return
        with tally.lock:
            tally.reindexes += 1
        stop.wait(pause_s)


def run_concurrently(workers: int, seconds: float, search: Callable[[str], Answer], tally: Tally,
                     names: list[str]) -> None:
    """``workers`` threads run the queries named in ``names`` in rotation for ``seconds``."""
    deadline = time.monotonic() + seconds

    def work(offset: int) -> None:
        turn = offset
        while time.monotonic() < deadline:
            name = names[turn % len(names)]
            turn += 1
            try:
                tally.record(search(name))
            except Exception:  # noqa: BLE001 - every failure is counted, none may happen
                tally.record(error=f"{name}: {traceback.format_exc(limit=4)}")

    threads = [threading.Thread(target=work, args=(offset,), daemon=True) for offset in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 120)
        if thread.is_alive():
            tally.record(error="a search thread did not finish")


def compare_with_references(tally: Tally, search_alone: Callable[[str, str], Answer]) -> None:
    """Record a mismatch for every answer that differs from the same query alone on its generation."""
    expected: dict[tuple[str, str], Answer] = {}
    for answer in tally.answers:
        if len(answer.generations) != 1:
            tally.mismatches.append(f"{answer.name}: saw generations {sorted(answer.generations)}")
            continue
        (generation,) = answer.generations
        key = (answer.name, generation)
        if key not in expected:
            expected[key] = search_alone(answer.name, generation)
        reference = expected[key]
        if (answer.results, answer.total) != (reference.results, reference.total):
            tally.mismatches.append(f"{answer.name} on {generation}: {answer.results[:2]} != {reference.results[:2]}")
