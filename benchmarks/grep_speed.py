"""Literal and regex search latency on a large corpus (default: the CPython standard library), next to ripgrep.

    python benchmarks/grep_speed.py --index-dir /tmp/gg-grep            # lexical-only index, kept there
    python benchmarks/grep_speed.py --repo ~/src/big --index-dir /tmp/x --json

Queries: a fixed list of typical literals and regexes (identifiers, messages, definitions,
patterns with and without a literal part) plus ``--sampled`` lines drawn from the corpus with
a fixed seed, pasted as literals. Every query runs ``--repeat`` times after a warm-up, through:

- ``Searcher.grep`` (trigram candidates from the text store, then verification; the default),
- the compiled graph (``mode`` literal/regex), to show the graph's own overhead,
- the same search without the trigram index (every stored text verified, from memory once loaded),
  and a bare count of matching lines over every text in memory: the alternatives the trigram index
  was measured against,
- ``rg -n`` on the same files when ripgrep is installed (a process per query, as a user runs it; given
  the indexed files, so it skips what the index skips, such as ``site-packages``).

Then the regexes a backtracking engine takes exponential time on (the tests check they are searched and
match nothing), each over the one line that triggers it, through the line scan every search uses.

Prints one table with p50 / p95 milliseconds per mode and engine.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.grep.patterns import compile_pattern
from grepgraph.retrievers.grep.scan import lines_in
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex
from grepgraph.retrievers.store.textstore import TextStore

DEFAULT_REPO = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
LITERALS = [
    "frozenset", "def parse_args(", 'raise ValueError("', "self", "import os", "_PyObject", "socket.AF_INET6",
    "SIGINT", "class TestCase", "return NotImplemented", "zipimport", "async def", "Connection refused",
    "if __name__ == '__main__':", "xyzzy_not_there", "encoding='utf-8'", "TODO", "__slots__ = (",
]
REGEXES = [
    r"def \w+_args\(", r"raise \w+Error\(", r"\bfoo\b", r"[A-Z]{5,}_[A-Z]+", r"(?i)connection refused",
    r"^\s*except\s*:", r"\d+\.\d+\.\d+", r"class \w+\(Exception\)", r"^import (os|sys)$", r"self\.\w+ = None",
    r"#\s*XXX", r"lambda \w+: \w+\.\w+", r"\w+Error", r"https?://\S+", r"^def test_\w+",
]
MIN_SAMPLED_CHARS = 30
# Each takes exponential time in Python's re on PATHOLOGICAL_LINE, linear time in RE2.
PATHOLOGICAL = ["(a+)+$", "(a|aa)+$", "(a*)*b", "(a*)*!$", "(.*a){12}$", "(.*a){20}$"]
PATHOLOGICAL_LINE = b"a" * 50_000 + b"!"


def sampled_lines(searcher: Searcher, count: int, seed: int) -> list[str]:
    """``count`` lines of the corpus (at least 30 characters once stripped), drawn with ``seed``."""
    store = TextStore(searcher.connection)
    with searcher.connection_lock():
        texts = [data for _, data in store.iter_texts()]
    rng = random.Random(seed)
    lines: list[str] = []
    while len(lines) < count and texts:
        candidates = [line.strip() for line in rng.choice(texts).decode("utf-8", "replace").splitlines()
                      if len(line.strip()) >= MIN_SAMPLED_CHARS]
        if candidates:
            lines.append(rng.choice(candidates))
    return lines


def timed(function: Callable[[], object], repeat: int) -> list[float]:
    """Milliseconds of each of ``repeat`` calls (after one warm-up call)."""
    function()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return times


def percentile(values: list[float], share: float) -> float:
    """The ``share`` percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def in_memory_scan(texts: list[bytes], text: str, mode: str) -> int:
    """Matching lines over texts already in memory (the alternative to the trigram index)."""
    pattern = compile_pattern(text, mode)
    return sum(1 for data in texts for _ in lines_in(data, pattern))


def pathological_rows(repeat: int) -> list[dict]:
    """One row per pattern of ``PATHOLOGICAL``: the line scan over ``PATHOLOGICAL_LINE``."""
    rows = []
    for text in PATHOLOGICAL:
        pattern = compile_pattern(text, "regex")
        matches = sum(1 for _ in lines_in(PATHOLOGICAL_LINE, pattern))
        times = timed(lambda: list(lines_in(PATHOLOGICAL_LINE, pattern)), repeat)
        rows.append({"mode": "pathological regex", "engine": f"{text} on {len(PATHOLOGICAL_LINE):,} characters",
                     "queries": 1, "p50_ms": round(statistics.median(times), 1),
                     "p95_ms": round(percentile(times, 0.95), 1), "median_matching_lines": matches})
    return rows


def run_rg(repo: Path, files: list[str], text: str, mode: str) -> None:
    """ripgrep as a user would run it (line numbers, every match), on exactly the indexed files."""
    flags = ["-F"] if mode == "literal" else []
    subprocess.run(["rg", "-n", "--no-heading", *flags, "--", text, *files], cwd=repo, capture_output=True,
                   check=False)


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    parser.add_argument("--index-dir", type=Path, required=True, help="where the lexical-only index is kept")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sampled", type=int, default=20, help="corpus lines pasted as literals")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    index = CodeIndex(args.repo, args.index_dir)
    summary = index.update(embed=False)
    print(f"index: {summary.files} files, {summary.chunks} chunks ({summary.seconds:.1f}s)", file=sys.stderr)
    searcher = Searcher(index)
    from grepgraph.graphs.code_search import graph

    context = {"repo": str(index.repo), "index_dir": str(index.index_dir), "llm_enabled": False}
    queries = {"literal": LITERALS + sampled_lines(searcher, args.sampled, args.seed), "regex": REGEXES}
    with searcher.connection_lock():
        stored = list(TextStore(searcher.connection).iter_texts())
    texts, files = [data for _, data in stored], [path for path, _ in stored]
    has_rg = shutil.which("rg") is not None
    rows = []
    for mode, texts_of_mode in queries.items():
        engines: dict[str, list[float]] = {"grepgraph (trigram index)": [], f"graph (mode={mode})": [],
                                           "no trigram index (every text verified)": [],
                                           "bare scan of every text in memory (count only)": []}
        if has_rg:
            engines["rg -n"] = []
        matches = []
        for text in texts_of_mode:
            answer = searcher.grep(text, mode, args.limit, focus="all")
            matches.append(answer.total)
            engines["grepgraph (trigram index)"] += timed(lambda: searcher.grep(text, mode, args.limit), args.repeat)
            engines[f"graph (mode={mode})"] += timed(lambda: graph.invoke(
                {"query": text, "mode": mode, "limit": args.limit}, context=context), args.repeat)
            engines["no trigram index (every text verified)"] += timed(
                lambda: _without_trigrams(searcher, text, mode, args.limit), args.repeat)
            engines["bare scan of every text in memory (count only)"] += timed(
                lambda: in_memory_scan(texts, text, mode), args.repeat)
            if has_rg:
                engines["rg -n"] += timed(lambda: run_rg(index.repo, files, text, mode), args.repeat)
        for engine, times in engines.items():
            rows.append({"mode": mode, "engine": engine, "queries": len(texts_of_mode),
                         "p50_ms": round(statistics.median(times), 1), "p95_ms": round(percentile(times, 0.95), 1),
                         "median_matching_lines": statistics.median(matches)})
    rows += pathological_rows(args.repeat)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"corpus: {index.repo} ({summary.files} files); {args.repeat} runs per query after a warm-up")
    print("| mode | engine | queries | p50 ms | p95 ms |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['mode']} | {row['engine']} | {row['queries']} | {row['p50_ms']} | {row['p95_ms']} |")


def _without_trigrams(searcher: Searcher, text: str, mode: str, limit: int) -> None:
    """``Searcher.grep`` with the trigram index switched off: every stored text is read and verified."""
    original = TextStore.candidate_ids
    TextStore.candidate_ids = lambda self, literals: None  # type: ignore[method-assign]
    try:
        searcher.grep(text, mode, limit)
    finally:
        TextStore.candidate_ids = original  # type: ignore[method-assign]


if __name__ == "__main__":
    main()
