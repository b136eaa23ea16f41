"""Search quality on the two development rulers, every method side by side in one run.

    python benchmarks/quality.py docstring --bench BENCH [--methods grepgraph,bm25,vectors,rrf]
    python benchmarks/quality.py issues --bench ISSUES --queries issues-dev/queries.jsonl

Indexes each corpus once (kept under ``--cache``, re-used incrementally), runs every
method over every query, scores with the ruler's own scorer and prints one table.
The rulers live in ``../shared/bench`` (see its README); nothing here needs an LLM.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from retrievers.index import CodeIndex  # noqa: E402
from retrievers.search import Searcher  # noqa: E402

DEFAULT_RULERS = ROOT.parent / "shared" / "bench"

# name -> keyword arguments of Searcher.search (no LLM anywhere)
METHODS = {
    "grepgraph": {},
    "bm25": {"weights": {"bm25": 1.0}, "focus": "all", "kind_priors": False},
    "vectors": {"weights": {"card": 0.5, "code": 0.5}, "focus": "all", "kind_priors": False},
    "rrf": {"fusion": "rrf", "weights": {"card": 1.0, "code": 1.0, "bm25": 1.0, "symbol": 1.0, "mention": 1.0,
                                          "name": 1.0}},
    "no-focus": {"focus": "all"},
    "no-kind-priors": {"kind_priors": False},
}


GRAPH_METHOD = "graph (no LLM)"
# Nothing listens here: the graph finds Ollama unreachable once and remembers it, as on a laptop without it.
UNREACHABLE_LLM = "http://127.0.0.1:9"


def run_graph(corpus: Path, cache: Path, query: str, limit: int) -> tuple[list[dict], float, dict]:
    """Results through the whole graph with the LLM unreachable, and which LLM calls it would have made."""
    from graphs.code_search import graph

    context = {"repo": str(corpus), "index_dir": str(cache / corpus.name), "llm_base_url": UNREACHABLE_LLM}
    started = time.perf_counter()
    out = graph.invoke({"query": query, "limit": limit}, context=context)
    elapsed = (time.perf_counter() - started) * 1000
    decisions = {entry["node"]: entry.get("decision") for entry in out["trace"]}
    wanted = {"rewrite": decisions.get("should_rewrite") == "rewrite",
              "rerank": decisions.get("should_rerank") == "rerank"}
    return out["results"], elapsed, wanted


def open_index(corpus: Path, cache: Path, progress: bool, embed: bool = True) -> Searcher:
    """Index (or update) one corpus into the cache and open a searcher on it."""
    index = CodeIndex(corpus, cache / corpus.name)
    started = time.perf_counter()
    summary = index.update(embed=embed)
    if progress:
        print(f"  indexed {corpus.name}: {summary.chunks} chunks, {summary.vectors_embedded} embedded, "
              f"{time.perf_counter() - started:.1f}s", file=sys.stderr)
    return Searcher(index)


def run_method(searcher: Searcher, query: str, options: dict, limit: int) -> tuple[list[dict], float]:
    """Results for one query and the milliseconds it took."""
    started = time.perf_counter()
    hits, _ = searcher.search(query, limit, **options)
    elapsed = (time.perf_counter() - started) * 1000
    return [{"path": h.path, "start_line": h.start_line, "end_line": h.end_line, "symbol": h.symbol}
            for h in hits], elapsed


def score(scorer: Path, queries: Path, results: Path) -> dict:
    """Run a ruler's scorer and read its JSON table."""
    out = results.with_suffix(".score.json")
    subprocess.run([sys.executable, str(scorer), "--queries", str(queries), "--results", str(results),
                    "--json", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())


def evaluate(kind: str, queries_path: Path, corpora: Path, methods: list[str], cache: Path, out_dir: Path,
             limit: int, rulers: Path, embed: bool = True) -> list[dict]:
    """Run every method on every query of one ruler; one score row per method."""
    queries = [json.loads(line) for line in queries_path.read_text().splitlines() if line.strip()]
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict]] = {m: [] for m in methods}
    latencies: dict[str, list[float]] = {m: [] for m in methods}
    searchers: dict[str, Searcher] = {}
    llm_wanted = {"rewrite": 0, "rerank": 0, "either": 0}

    def corpus_of(query: dict) -> Path:
        return corpora / (f"{query['package']}-{query['version']}" if kind == "docstring" else query["corpus"])

    # One corpus at a time, its searcher closed before the next opens: 28 open indexes don't fit in memory.
    for query in sorted(queries, key=lambda q: corpus_of(q).name):
        corpus = corpus_of(query)
        if corpus.name not in searchers:
            for searcher in searchers.values():
                searcher.close()
            searchers = {corpus.name: open_index(corpus, cache, progress=True, embed=embed)}
            # Loading BM25 segments and the query encoder happens once per corpus: keep it out of the timings.
            searchers[corpus.name].search("warm up", 1)
            if GRAPH_METHOD in methods:
                run_graph(corpus, cache, "warm up", 1)
        for method in methods:
            if method == GRAPH_METHOD:
                found, elapsed, wanted = run_graph(corpus, cache, query["query"], limit)
                for name in ("rewrite", "rerank"):
                    llm_wanted[name] += wanted[name]
                llm_wanted["either"] += wanted["rewrite"] or wanted["rerank"]
            else:
                found, elapsed = run_method(searchers[corpus.name], query["query"], METHODS[method], limit)
            results[method].append({"id": query["id"], "results": found})
            latencies[method].append(elapsed)
    scorer = rulers / ("score.py" if kind == "docstring" else "issues-dev/score_files.py")
    rows = []
    for method in methods:
        path = out_dir / f"{kind}-{method}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in results[method]))
        table = score(scorer, queries_path, path)
        times = sorted(latencies[method])
        rows.append({"method": method, **flatten(table), "p50_ms": round(statistics.median(times), 1),
                     "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1)})
        if method == GRAPH_METHOD:
            rows[-1].update({f"llm_{name}_share": round(count / len(queries), 3) for name, count in llm_wanted.items()})
    return rows


def flatten(table: dict) -> dict:
    """Pick the overall metrics out of a scorer's JSON."""
    overall = table.get("overall", table.get("ALL", table))
    return {k: round(v, 3) for k, v in overall.items() if isinstance(v, (int, float))}


def run_baselines(python: str, bench: Path, queries: Path, out_dir: Path, rulers: Path) -> list[dict]:
    """The ruler's own baselines (``baselines.py``), run with an interpreter that has their dependencies."""
    rows = []
    for method in ("bm25", "langchain-hybrid"):
        out = out_dir / f"baseline-{method}.jsonl"
        done = subprocess.run([python, str(rulers / "baselines.py"), "--bench", str(bench), "--method", method,
                               "--out", str(out)], cwd=rulers, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"  baseline {method} failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        table = score(rulers / "score.py", queries, out)
        timing_path = Path(str(out) + ".timing.json")
        timing = json.loads(timing_path.read_text()) if timing_path.is_file() else {}
        rows.append({"method": f"baseline: {method}", **flatten(table),
                     "p50_ms": timing.get("query_p50_ms", ""), "p95_ms": timing.get("query_p95_ms", "")})
    return rows


def print_table(rows: list[dict]) -> None:
    """A Markdown table, one row per method."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row.get(c, "")) for c in columns) + " |")


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ruler", choices=["docstring", "issues"])
    parser.add_argument("--bench", required=True, type=Path, help="the folder make_bench.py / fetch_corpora.py wrote")
    parser.add_argument("--queries", type=Path, help="queries.jsonl (default: BENCH/queries.jsonl)")
    parser.add_argument("--methods", default=f"grepgraph,{GRAPH_METHOD},bm25,vectors,rrf",
                        help=f"comma-separated: {', '.join([*METHODS, GRAPH_METHOD])}")
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks" / "results" / "indexes")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--rulers", type=Path, default=DEFAULT_RULERS)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--no-embed", action="store_true", help="lexical index only (quick diagnostics)")
    parser.add_argument("--baselines-python", help="docstring ruler: also run baselines.py with this interpreter "
                        "(a venv with ../shared/bench/requirements-baselines.txt)")
    args = parser.parse_args()
    queries = args.queries or args.bench / "queries.jsonl"
    rows = evaluate(args.ruler, queries, args.bench / "corpus", args.methods.split(","), args.cache, args.out,
                    args.limit, args.rulers, embed=not args.no_embed)
    if args.baselines_python and args.ruler == "docstring":
        rows += run_baselines(args.baselines_python, args.bench, queries, args.out, args.rulers)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print_table(rows)


if __name__ == "__main__":
    main()
