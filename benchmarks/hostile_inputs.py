"""How long the inputs that used to stall a search take now, through the compiled graph on a real index.

    python benchmarks/hostile_inputs.py                       # a copy of this repository, lexical index
    python benchmarks/hostile_inputs.py --repo ~/src/x --rounds 7

The repository is copied to a temporary folder with one more source file whose middle line is 700 KB long,
and indexed without vectors (the inputs stress glob matching, line scans and query parsing, not the model).
Each input runs ``--rounds`` times after a warm-up; the table shows the median and the slowest run, and what came
back (results, or the one-line error), next to the 1 s the security issue allows.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.graphs.code_search import graph
from grepgraph.graphs.nodes import InvalidSearchInput
from grepgraph.retrievers.store.index import CodeIndex

from benchmarks.tables import print_table

LONG_LINE_CHARS = 700_000
BUDGET_S = 1.0


def hostile_inputs(paths: list[str]) -> dict[str, dict]:
    """Name -> graph input, each built like the issue's cases."""
    many_paths = " ".join(paths)
    while len(many_paths) < 20_000:
        many_paths += " " + many_paths
    return {
        "glob of 14 '*?' pairs": {"query": "open the index", "paths": ["*?" * 14 + "x.py"]},
        "--literal over a 700 KB line": {"query": "needle_in_the_long_line", "mode": "literal"},
        "--regex over a 700 KB line": {"query": r"(a|aa)+b", "mode": "regex"},
        "20,000-character query of paths": {"query": many_paths[:20_000]},
        "--path '!tests/**' alone": {"query": "search the index", "paths": ["!tests/**"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "repo"
        shutil.copytree(args.repo, repo, ignore=shutil.ignore_patterns(".git", ".venv", ".grepgraph", "*.pyc",
                                                                     "__pycache__", "data", "results"))
        long_line = "x = '" + "ab " * (LONG_LINE_CHARS // 6) + "needle_in_the_long_line " + "ab " * (
            LONG_LINE_CHARS // 6) + "'"
        (repo / "long_line.py").write_text("def before():\n    pass\n\n" + long_line + "\n\ndef after():\n    pass\n")
        index_dir = Path(scratch) / "index"
        started = time.perf_counter()
        CodeIndex(repo, index_dir).update(embed=False)
        print(f"indexed {repo} (lexical) in {time.perf_counter() - started:.1f} s")
        paths = sorted(str(path.relative_to(repo)) for path in repo.rglob("*.py"))[:400]
        context = {"repo": str(repo), "index_dir": str(index_dir), "llm_enabled": False}
        rows = []
        for name, request in hostile_inputs(paths).items():
            timings, answer = [], ""
            for round_number in range(args.rounds + 1):
                started = time.perf_counter()
                try:
                    out = graph.invoke(dict(request), context=context)
                    answer = f"{len(out['results'])} results"
                except InvalidSearchInput as error:
                    answer = f"error: {str(error)[:60]}"
                if round_number:  # the first run warms the snapshot and the caches
                    timings.append(time.perf_counter() - started)
            rows.append({"input": name, "p50_ms": round(statistics.median(timings) * 1000, 1),
                         "max_ms": round(max(timings) * 1000, 1), "within_1s": max(timings) <= BUDGET_S,
                         "answer": answer})
    print_table(rows)


if __name__ == "__main__":
    main()
