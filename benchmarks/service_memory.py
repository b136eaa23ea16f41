"""Memory of the resident search service over many searches and re-indexes.

    python benchmarks/service_memory.py                               # 10,000 searches, 500 re-indexes
    python benchmarks/service_memory.py --searches 2000 --reindexes 100 --every 20
    python benchmarks/service_memory.py --json > memory.json

Steps:

1. ``tests/fixtures/sample_repo`` is copied into a temporary directory and indexed by ``grepgraph
   index`` (MiniLM vectors, embedded Chroma; a private embedding cache, so a text embedded once is
   not embedded again, as with the default machine-wide cache);
2. the repository's service starts as ``grepgraph search`` starts it (``service_client.ensure_service``),
   watching the repository; warm-up: every query once and ``--warm-up`` re-indexes;
3. one thread searches through the service's socket as the CLI does (a fixed mix of questions, names,
   graph questions, filters, literal and regex queries; no LLM) until ``--searches`` are done, while
   the main thread switches a few files between two versions (``tests/concurrency.write_variant``:
   definitions added and removed, a file deleted and restored) and waits until the service's
   watcher has re-indexed them, lexical index and vectors, ``--reindexes`` times;
4. the service's RSS (``VmRSS``) is read after the warm-up and every ``--every`` re-indexes.

Output: a Markdown table of RSS by re-indexes and searches done, the counts and errors (or ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.core.service_settings import resolve_service_settings

from benchmarks.load import rss_mb  # noqa: E402
from grepgraph import service_client  # noqa: E402
from tests.concurrency import QUERIES, copy_sample_repo, write_variant  # noqa: E402

DEFAULT_SEARCHES = 10_000
DEFAULT_REINDEXES = 500
DEFAULT_EVERY = 50
DEFAULT_WARM_UP = 10
REINDEX_TIMEOUT_S = 120.0
POLL_S = 0.05
# The fixed mix without the query that needs an LLM server.
SEARCHES = [query for name, query in QUERIES.items() if not name.endswith("+llm")]


def log(message: str) -> None:
    print(f"[service_memory] {message}", file=sys.stderr, flush=True)


def prepare(workdir: Path) -> tuple[Path, Path]:
    """The fixture copied and indexed; its repository and index directory."""
    repo = copy_sample_repo(workdir / "repo")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grepgraph.cli", "index", str(repo), "--quiet"], check=True, cwd=workdir,
                   stdout=subprocess.DEVNULL)
    log(f"indexed {repo} in {time.perf_counter() - started:.1f} s")
    return repo, repo / ".grepgraph"


def search_once(repo: Path, index_dir: Path, graph_input: dict) -> bool:
    """One search through the service's socket, as the CLI sends it; whether it answered with results."""
    context = {"repo": str(repo), "index_dir": str(index_dir), "llm_enabled": False}
    reply = service_client.request(index_dir, "search", timeout=60, input=graph_input, context=context,
                                   env=service_client.client_environment())
    return bool(reply.get("ok")) and bool(reply["out"].get("results"))


class Searching:
    """A thread searching through the service until ``total`` searches are done."""

    def __init__(self, repo: Path, index_dir: Path, total: int) -> None:
        self.repo, self.index_dir, self.total = repo, index_dir, total
        self.done = 0
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while self.done < self.total:
            graph_input = SEARCHES[self.done % len(SEARCHES)]
            try:
                if not search_once(self.repo, self.index_dir, graph_input):
                    self.errors.append(f"no results for {graph_input['query']!r}")
            except Exception as error:  # counted and reported: the benchmark measures failures too
                self.errors.append(f"{error.__class__.__name__}: {error}")
            self.done += 1


def watcher_state(index_dir: Path) -> dict:
    return service_client.service_state(index_dir)


def reindex(repo: Path, index_dir: Path, variant: int) -> None:
    """Switch the files to ``variant`` and wait until the service has re-indexed them, vectors included."""
    before = watcher_state(index_dir)["updates"]
    write_variant(repo, variant)
    deadline = time.monotonic() + REINDEX_TIMEOUT_S
    while time.monotonic() < deadline:
        state = watcher_state(index_dir)
        if state.get("last_error"):
            raise RuntimeError(f"the watcher failed: {state['last_error']}")
        if state["updates"] > before and not state["embedding"] and state["vectors_pending"] == 0:
            return
        time.sleep(POLL_S)
    raise TimeoutError(f"the service did not re-index within {REINDEX_TIMEOUT_S:g} s")


def run(args: argparse.Namespace) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="grepgraph-service-memory-"))
    os.environ["GREPGRAPH_EMBEDDING_CACHE"] = str(workdir / "embeddings.sqlite")
    for name in ("GREPGRAPH_DAEMON", "GREPGRAPH_WATCH"):
        os.environ.pop(name, None)
    repo, index_dir = prepare(workdir)
    service_client.ensure_service(repo, index_dir, resolve_service_settings(repo))
    pid = watcher_state(index_dir)["pid"]
    rows: list[dict] = []
    try:
        rows.append({"phase": "started", "reindexes": 0, "searches": 0, "rss_mb": rss_mb(pid)})
        for graph_input in SEARCHES:
            search_once(repo, index_dir, graph_input)
        for number in range(args.warm_up):
            reindex(repo, index_dir, (number + 1) % 2)
        rows.append({"phase": "warmed up", "reindexes": 0, "searches": 0, "rss_mb": rss_mb(pid)})
        log(f"service pid {pid} warmed up: {rows[-1]['rss_mb']:.1f} MB; {args.searches} searches and "
            f"{args.reindexes} re-indexes")
        searching = Searching(repo, index_dir, args.searches)
        searching.thread.start()
        started = time.perf_counter()
        for number in range(1, args.reindexes + 1):
            reindex(repo, index_dir, (args.warm_up + number) % 2)
            if number % args.every == 0 or number == args.reindexes:
                rows.append({"phase": "load", "reindexes": number, "searches": searching.done,
                             "rss_mb": rss_mb(pid)})
                log(f"{number} re-indexes, {searching.done} searches: {rows[-1]['rss_mb']:.1f} MB")
        searching.thread.join()
        rows.append({"phase": "done", "reindexes": args.reindexes, "searches": searching.done,
                     "rss_mb": rss_mb(pid)})
        wall_s = time.perf_counter() - started
        state = watcher_state(index_dir)
    finally:
        service_client.stop_service(index_dir)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return {"rows": rows, "searches": searching.done, "search_errors": len(searching.errors),
            "first_errors": searching.errors[:5], "reindexes": args.reindexes, "watcher_updates": state["updates"],
            "wall_s": round(wall_s, 1), "load_average": os.getloadavg()}


def markdown(report: dict) -> str:
    lines = ["| phase | re-indexes | searches | service RSS (MB) |", "|---|---|---|---|"]
    lines += [f"| {row['phase']} | {row['reindexes']:,} | {row['searches']:,} | {row['rss_mb']:.1f} |"
              for row in report["rows"]]
    warmed = next(row["rss_mb"] for row in report["rows"] if row["phase"] == "warmed up")
    last = report["rows"][-1]["rss_mb"]
    lines += ["", f"RSS after warm-up {warmed:.1f} MB -> {last:.1f} MB at the end ({last - warmed:+.1f} MB); "
              f"{report['searches']:,} searches ({report['search_errors']} errors), {report['reindexes']} re-indexes "
              f"({report['watcher_updates']} watcher updates) in {report['wall_s']:.0f} s; load average "
              + " ".join(f"{value:.1f}" for value in report["load_average"])]
    return "\n".join(lines)


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--searches", type=int, default=DEFAULT_SEARCHES)
    parser.add_argument("--reindexes", type=int, default=DEFAULT_REINDEXES)
    parser.add_argument("--every", type=int, default=DEFAULT_EVERY, help="read RSS every N re-indexes")
    parser.add_argument("--warm-up", type=int, default=DEFAULT_WARM_UP, help="re-indexes before the first reading")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (index, service log)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    args = parser.parse_args()
    report = run(args)
    print(json.dumps(report, indent=2) if args.json else markdown(report))


if __name__ == "__main__":
    main()
