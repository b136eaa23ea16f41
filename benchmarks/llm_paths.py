"""The graph's latency when the LLM is absent, refusing connections, hanging or too slow, side by side.

    python benchmarks/llm_paths.py --bench BENCH --package NAME [--timeout 1.0]

Runs the docstring ruler's queries of one package through the whole graph in one run: LLM disabled,
endpoint refusing connections, endpoint hanging (an Ollama-protocol test server that never answers),
endpoint streaming so slowly that every line arrives in time but the reply never does in time (only
the wall-clock bound stops it), the same slow endpoint with a long LLM timeout in a run whose own
deadline (``run_timeout_s``) is ``--timeout`` (the run stops, its LLM call cancelled), and the bare
searcher for reference. Targets: refusing adds <= 50 ms to p95 after the first query; hanging and
streaming slowly keep every query within the LLM timeout + 100 ms; a run past its deadline stops
within its deadline + 100 ms. (The tests check what each path answers, never how long it takes.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.graphs.code_search import graph  # noqa: E402
from grepgraph.graphs.deadline import SearchDeadlineExceeded  # noqa: E402
from grepgraph.graphs.llm import reset_llm_state  # noqa: E402
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from benchmarks.tables import print_table  # noqa: E402
from tests.ollama_server import OllamaTestServer, closed_port  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def timed_graph(query: str, context: dict) -> tuple[float, bool]:
    """Milliseconds for one query through the graph, and whether an LLM node ran."""
    started = time.perf_counter()
    try:
        out = graph.invoke({"query": query}, context=context)
    except SearchDeadlineExceeded:  # the run's deadline came during an LLM call: what that row measures
        return (time.perf_counter() - started) * 1000, True
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed, any(entry["node"] in ("rewrite", "rerank") for entry in out["trace"])


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, required=True)
    parser.add_argument("--package", required=True, help="one package of the ruler (its queries, its corpus)")
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks" / "results" / "indexes")
    parser.add_argument("--timeout", type=float, default=1.0, help="llm_timeout_s for the hanging endpoint")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (args.bench / "queries.jsonl").read_text().splitlines() if line.strip()]
    rows = [row for row in rows if row["package"] == args.package]
    corpus = args.bench / "corpus" / f"{args.package}-{rows[0]['version']}"
    index = CodeIndex(corpus, args.cache / corpus.name)
    index.update()
    queries = [row["query"] for row in rows]
    base = {"repo": str(corpus), "index_dir": str(index.index_dir), "llm_timeout_s": args.timeout,
            "llm_retry_after_s": 30.0}

    searcher = Searcher(index)
    searcher.search(queries[0], 10)
    graph.invoke({"query": queries[0]}, context={**base, "llm_enabled": False})  # open the index once
    reset_llm_state()
    past_deadline = f"graph, LLM slow, run_timeout_s = {args.timeout:g}"
    names = ["bare searcher", "graph, LLM disabled", "graph, LLM refusing", "graph, LLM hanging",
             "graph, LLM streaming slowly", past_deadline]
    results: dict[str, tuple[list[float], int]] = {name: ([], 0) for name in names}
    # Ten lines, each 0.6 x the timeout after the last: each arrives in time, the whole reply six timeouts late.
    slow = {"mode": "slow", "delay_s": 0.6 * args.timeout, "pieces": 10}
    with (OllamaTestServer(mode="hang", hang_s=60) as server, OllamaTestServer(**slow) as slow_server,
          OllamaTestServer(**slow) as deadline_server):
        contexts = {
            "graph, LLM disabled": {**base, "llm_enabled": False},
            "graph, LLM refusing": {**base, "llm_base_url": f"http://127.0.0.1:{closed_port()}"},
            "graph, LLM hanging": {**base, "llm_base_url": server.base_url},
            "graph, LLM streaming slowly": {**base, "llm_base_url": slow_server.base_url},
            past_deadline: {**base, "llm_base_url": deadline_server.base_url, "llm_timeout_s": 60.0,
                            "run_timeout_s": args.timeout},
        }
        # Round-robin over the paths, query by query, so the machine's noise falls on all of them alike.
        for query in queries:
            started = time.perf_counter()
            searcher.search(query, 10)
            results["bare searcher"][0].append((time.perf_counter() - started) * 1000)
            for name, context in contexts.items():
                elapsed, used = timed_graph(query, context)
                times, attempts = results[name]
                times.append(elapsed)
                results[name] = (times, attempts + used)

    table = []
    for name, (times, attempts) in results.items():
        rest = times[1:]
        table.append({"path": name, "queries": len(times), "LLM nodes run": attempts,
                      "first ms": round(times[0], 1), "p50 ms": round(statistics.median(rest), 1),
                      "p95 ms": round(percentile(rest, 0.95), 1), "max ms": round(max(times), 1)})
    if args.json:
        print(json.dumps(table, indent=2))
        return
    print_table(table)
    print(f"\nhanging and slow endpoints: llm_timeout_s = {args.timeout}; budget per query = timeout + 100 ms")
    print(f"{past_deadline}: llm_timeout_s = 60; budget per query = run_timeout_s + 100 ms")


if __name__ == "__main__":
    main()
