"""Concurrent searches while the index is rewritten: counts of searches, mismatches, errors and re-indexes.

    python benchmarks/concurrency.py                       # 8 threads, 120 s, a re-index every 3 s
    python benchmarks/concurrency.py --threads 8 --seconds 60 --reindex-every 2 --json
    python benchmarks/concurrency.py --throughput          # 1 client vs 4 on this repository, in-process
    python benchmarks/concurrency.py --throughput --index-dir /tmp/gg-index --clients 4 --rounds 3

The long run of ``tests/reliability/test_concurrency.py`` (same harness, ``tests/concurrency.py``):
the fixture repository is copied and indexed with vectors, a loop switches a few of its files between
two versions and re-indexes them (lexically, so Chroma keeps the first index's vectors), copying each
committed generation aside; ``--threads`` threads run the query mix through the compiled graph (the
``+llm`` question against the Ollama-protocol test server). Afterwards every answer is compared with
the same query alone on the copy of the generation it saw. Progress goes to stderr.

``--throughput`` measures searches side by side instead: this repository (or ``--repo``) is indexed
with vectors into a temporary folder (or read from ``--index-dir``, indexed there if it has no index
yet), one ``Searcher`` answers ``--searches`` searches of distinct queries drawn from the index
(documented definitions' first docstring lines and other definitions' names), first from one
thread, then from ``--clients`` threads, in ``--rounds`` alternating rounds. The table gives each
side's median searches per second, their ratio, how many cores the process kept busy (other
processes on the machine leave fewer), and whether every answer equals the one-thread answer.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GREPGRAPH_EMBEDDING_CACHE", "off")

from grepgraph.graphs.code_search import graph  # noqa: E402
from grepgraph.graphs.resources import forget_searchers  # noqa: E402
from grepgraph.retrievers.rank.search import Searcher  # noqa: E402
from grepgraph.retrievers.store.index import CodeIndex  # noqa: E402

from tests.concurrency import (  # noqa: E402
    LLM_REPLY,
    QUERIES,
    Answer,
    GenerationCopies,
    Tally,
    answer_of,
    compare_with_references,
    copy_sample_repo,
    reindex_loop,
    run_concurrently,
)
from tests.ollama_server import OllamaTestServer  # noqa: E402

LLM_TIMEOUT_S = 30.0
# Throughput mode: distinct queries (more than a snapshot's BM25 cache keeps, so every search scores BM25),
# the searches of one measurement, and how many hits each asks for.
THROUGHPUT_QUERIES = 64
THROUGHPUT_SEARCHES = 128
THROUGHPUT_LIMIT = 10


def log(message: str) -> None:
    print(f"[concurrency] {message}", file=sys.stderr, flush=True)


def throughput_queries(searcher: Searcher, count: int) -> list[str]:
    """``count`` distinct queries spread over the index: a docstring's first line, or a definition's name."""
    with searcher.reading() as snapshot:
        rows = snapshot.connection.execute(
            "SELECT symbol, docstring FROM chunks WHERE kind IN ('function', 'method', 'class') ORDER BY id").fetchall()
    queries: dict[str, None] = {}
    step = max(1, len(rows) // (count * 2))
    for number, (symbol, docstring) in enumerate(rows[::step]):
        sentence = docstring.strip().split("\n")[0].rstrip(".")
        queries.setdefault(sentence if number % 2 == 0 and len(sentence.split()) >= 4 else symbol)
    return list(queries)[:count]


def cpu_seconds() -> float:
    """CPU seconds this process has used (every thread, user and system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed_searches(searcher: Searcher, queries: list[str], clients: int,
                   searches: int) -> tuple[float, float, dict[str, list[tuple[str, str]]]]:
    """Searches per second of ``clients`` threads sharing ``searches`` searches, the cores they kept busy
    (CPU seconds per second: below the machine's cores when other processes use them), and each query's answer.
    """
    turns = itertools.count()
    answers: dict[str, list[tuple[str, str]]] = {}
    failures: list[BaseException] = []

    def client() -> None:
        try:
            while (turn := next(turns)) < searches:
                query = queries[turn % len(queries)]
                hits, _ = searcher.search(query, THROUGHPUT_LIMIT)
                answers[query] = [(hit.path, hit.symbol) for hit in hits]
        except BaseException as error:  # noqa: BLE001 - reported by the caller
            failures.append(error)

    threads = [threading.Thread(target=client, name=f"client-{number}") for number in range(clients)]
    started, cpu_before = time.perf_counter(), cpu_seconds()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise failures[0]
    return searches / elapsed, (cpu_seconds() - cpu_before) / elapsed, answers


def measure_throughput(args: argparse.Namespace) -> dict:
    """1 client against ``args.clients`` on one searcher: searches per second per round, medians and ratio."""
    with tempfile.TemporaryDirectory(prefix="grepgraph-throughput-") as scratch:
        repo = Path(args.repo).resolve() if args.repo else ROOT
        index = CodeIndex(repo, args.index_dir or Path(scratch) / "index")
        if not index.exists():
            log(f"indexing {repo} with vectors into {index.index_dir}")
            index.update()
        searcher = Searcher(index)
        try:
            chunks = searcher.chunk_count
            queries = throughput_queries(searcher, THROUGHPUT_QUERIES)
            log(f"{len(queries)} queries; warming up (every query once)")
            *_, alone = timed_searches(searcher, queries, 1, len(queries))
            rates: dict[int, list[float]] = {1: [], args.clients: []}
            busy: dict[int, list[float]] = {1: [], args.clients: []}
            differ: set[str] = set()
            for number in range(args.rounds):
                for clients in rates:
                    rate, cores, answers = timed_searches(searcher, queries, clients, args.searches)
                    rates[clients].append(rate)
                    busy[clients].append(cores)
                    differ |= {query for query, answer in answers.items() if answer != alone[query]}
                    log(f"round {number + 1}: {clients} client(s) {rate:.1f} searches/s, {cores:.2f} cores busy")
        finally:
            searcher.close()
    medians = {clients: statistics.median(values) for clients, values in rates.items()}
    return {"repo": str(repo), "chunks": chunks, "cores": os.cpu_count(),
            "queries": len(queries), "searches": args.searches, "rounds": args.rounds,
            "searches_per_s": {str(clients): [round(rate, 1) for rate in values] for clients, values in rates.items()},
            "median_searches_per_s": {str(clients): round(rate, 1) for clients, rate in medians.items()},
            "median_cores_busy": {str(clients): round(statistics.median(cores), 2) for clients, cores in busy.items()},
            "ratio": round(medians[args.clients] / medians[1], 2), "answers_differ": sorted(differ)}


def throughput_table(report: dict) -> str:
    """The throughput report as a Markdown table."""
    lines = [f"{report['queries']} distinct queries, {report['searches']} searches per measurement, "
             f"{report['rounds']} rounds, {report['cores']} cores ({report['repo']}, {report['chunks']} chunks)", "",
             "| clients | searches/s (median) | rounds | vs 1 client | cores busy (median) | searches per CPU-s |",
             "|---|---|---|---|---|---|"]
    one = report["median_searches_per_s"]["1"]
    for clients, median in report["median_searches_per_s"].items():
        rounds = ", ".join(f"{rate:g}" for rate in report["searches_per_s"][clients])
        cores = report["median_cores_busy"][clients]
        lines.append(f"| {clients} | {median:g} | {rounds} | {median / one:.2f}x | {cores:g} | {median / cores:.1f} |")
    differ = report["answers_differ"]
    lines += ["", f"answers equal to one client's: {'yes' if not differ else f'no, for {differ}'}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--reindex-every", type=float, default=3.0, help="pause between re-indexes (s)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--throughput", action="store_true", help="1 client vs --clients on one searcher")
    parser.add_argument("--clients", type=int, default=4, help="throughput: the concurrent side")
    parser.add_argument("--rounds", type=int, default=3, help="throughput: rounds of both sides")
    parser.add_argument("--searches", type=int, default=THROUGHPUT_SEARCHES, help="throughput: per measurement")
    parser.add_argument("--repo", help="throughput: the repository (default: this one)")
    parser.add_argument("--index-dir", help="throughput: its index (kept; built there if missing)")
    args = parser.parse_args()
    if args.throughput:
        report = measure_throughput(args)
        print(json.dumps(report, indent=2) if args.json else throughput_table(report))
        sys.exit(1 if report["answers_differ"] else 0)
    with tempfile.TemporaryDirectory(prefix="grepgraph-concurrency-") as scratch, \
            OllamaTestServer(responder=lambda request: LLM_REPLY) as llm:
        root = Path(scratch)
        repo = copy_sample_repo(root / "repo")
        index_dir = root / "index"
        log("indexing the fixture with vectors")
        CodeIndex(repo, index_dir).update()
        copies = GenerationCopies(root / "generations", index_dir)
        copies.copy_committed()

        def search(name: str, where: Path) -> Answer:
            context = {"repo": str(repo), "index_dir": str(where), "llm_enabled": name.endswith("+llm"),
                       "llm_base_url": llm.base_url, "llm_timeout_s": LLM_TIMEOUT_S}
            return answer_of(name, graph.invoke(dict(QUERIES[name]), context=context))

        tally = Tally()
        stop = threading.Event()
        loop = threading.Thread(target=reindex_loop, args=(repo, index_dir, copies, tally, stop, args.reindex_every))
        log(f"{args.threads} threads for {args.seconds:g} s, a re-index every {args.reindex_every:g} s")
        started = time.monotonic()
        loop.start()
        try:
            run_concurrently(args.threads, args.seconds, lambda name: search(name, index_dir), tally, list(QUERIES))
        finally:
            stop.set()
            loop.join()
        elapsed = time.monotonic() - started
        log("comparing every answer with its query alone on its generation")
        compare_with_references(tally, lambda name, generation: search(name, copies.path(generation)))
        forget_searchers()
    summary = {**tally.summary(), "threads": args.threads, "seconds": round(elapsed, 1),
               "searches_per_s": round(tally.searches / elapsed, 1)}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for key, value in summary.items():
            print(f"{key}: {value}")
    for problem in (tally.errors + tally.mismatches)[:5]:
        log(problem)
    sys.exit(1 if tally.errors or tally.mismatches else 0)


if __name__ == "__main__":
    main()
