"""Search quality on the two development rulers, every method side by side in one run.

    python benchmarks/quality.py docstring --bench BENCH [--methods grepgraph,bm25,vectors,rrf]
    python benchmarks/quality.py ml --bench BENCH_ML          # TypeScript, JavaScript, Go, Rust, Java
    python benchmarks/quality.py issues --bench ISSUES --queries issues-dev/queries.jsonl

Indexes each corpus once (kept under ``--cache``, re-used incrementally), runs every
method over every query, scores each query with the ruler's own scorer and prints the
overall table, the headline metric per package (or repository) and a paired comparison
of two methods (per-query wins/losses and a sign test).
The rulers live in ``../shared/bench`` (see its README); nothing here needs an LLM.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from benchmarks.tables import print_table  # noqa: E402

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
    "no-exact": {"exact": False},
}


GRAPH_METHOD = "graph (no LLM)"
# Nothing listens here: the graph finds Ollama unreachable once and remembers it, as on a laptop without it.
UNREACHABLE_LLM = "http://127.0.0.1:9"


def run_graph(corpus: Path, cache: Path, query: str, limit: int) -> tuple[list[dict], float, dict]:
    """Results through the whole graph with the LLM unreachable, and which LLM calls it would have made."""
    from grepgraph.graphs.code_search import graph

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
    return ([{"path": h.path, "start_line": h.start_line, "end_line": h.end_line, "symbol": h.symbol} for h in hits],
            elapsed)


def load_module(path: Path, name: str) -> types.ModuleType:
    """Import one of the rulers' scorer scripts as a module (they live outside this repository)."""
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Ruler:
    """How one ruler names its corpora, groups its queries and scores one query, via its own scorer."""

    def __init__(self, kind: str, rulers: Path) -> None:
        self.kind = kind
        if kind == "issues":
            self.files = load_module(rulers / "issues-dev" / "score_files.py", "score_files")
            self.functions = load_module(rulers / "issues-dev" / "score_functions.py", "score_functions")
            self.headline = ["file_Acc@5", "func_Acc@10"]
        else:
            self.docstrings = load_module(rulers / "score.py", "score")
            if kind == "ml":  # score_ml.py is score.py with a test-file rule that knows the other languages
                self.docstrings.is_test_path = load_module(rulers / "ml" / "make_bench_ml.py",
                                                           "make_bench_ml").is_test_path
            self.headline = ["MRR@10"]

    def corpus(self, query: dict) -> str:  # noqa: D102
        return query["corpus"] if self.kind == "issues" else f"{query['package']}-{query['version']}"

    def group(self, query: dict) -> str:  # noqa: D102
        return query["repo"] if self.kind == "issues" else query["package"]

    def score_query(self, query: dict, results: list[dict]) -> dict[str, float]:
        """The ruler's per-query metrics (file and function level for issues)."""
        if self.kind != "issues":
            metrics, _ = self.docstrings.per_query(query, results)
            return {"MRR@10": metrics["rr"], "R@1": metrics["r1"], "R@5": metrics["r5"], "R@10": metrics["r10"],
                    "test_share@5": metrics.get("test5", 0.0)}
        corpus = query["corpus"]
        files = self.files.score_one(self.files.file_ranking(results, corpus), query["gold_files"])
        scores = {f"file_{name}": value for name, value in files.items()}
        if query.get("gold_functions") and not query.get("gold_error"):
            functions = self.functions.score_one(self.functions.ranking(results, corpus), query["gold_functions"])
            scores.update({f"func_{name}": value for name, value in functions.items()})
        return scores


def mean_of(rows: list[dict[str, float]]) -> dict[str, float]:
    """Each metric averaged over the rows that have it."""
    names = dict.fromkeys(name for row in rows for name in row)
    return {name: round(statistics.fmean(row[name] for row in rows if name in row), 3) for name in names}


def evaluate(ruler: Ruler, queries: list[dict], corpora: Path, methods: list[str], cache: Path, out_dir: Path,
             limit: int, embed: bool = True) -> tuple[list[dict], dict[str, dict[str, dict]]]:
    """Run every method on every query; per method the overall row and each query's metrics."""
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict]] = {m: [] for m in methods}
    per_query: dict[str, dict[str, dict]] = {m: {} for m in methods}
    latencies: dict[str, list[float]] = {m: [] for m in methods}
    searchers: dict[str, Searcher] = {}
    llm_wanted = {"rewrite": 0, "rerank": 0, "either": 0}
    # One corpus at a time, its searcher closed before the next opens: 28 open indexes don't fit in memory.
    for query in sorted(queries, key=ruler.corpus):
        corpus = corpora / ruler.corpus(query)
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
            per_query[method][query["id"]] = {"group": ruler.group(query), **ruler.score_query(query, found)}
            latencies[method].append(elapsed)
    rows = []
    for method in methods:
        (out_dir / f"{ruler.kind}-{method}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results[method]))
        metrics = [{k: v for k, v in m.items() if k != "group"} for m in per_query[method].values()]
        times = sorted(latencies[method])
        rows.append({"method": method, "n": len(metrics), **mean_of(metrics),
                     "p50_ms": round(statistics.median(times), 1),
                     "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1)})
        if method == GRAPH_METHOD:
            rows[-1].update({f"llm_{name}_share": round(count / len(queries), 3) for name, count in llm_wanted.items()})
    return rows, per_query


def group_rows(per_query: dict[str, dict[str, dict]], metric: str) -> list[dict]:
    """One row per method: the metric per package (or repository) and overall."""
    rows = []
    for method, scores in per_query.items():
        groups: dict[str, list[float]] = {}
        for entry in scores.values():
            if metric in entry:
                groups.setdefault(entry["group"], []).append(entry[metric])
        row = {"method": method, **{g: round(statistics.fmean(v), 3) for g, v in sorted(groups.items())}}
        row["all"] = round(statistics.fmean(v for vs in groups.values() for v in vs), 3) if groups else ""
        rows.append(row)
    return rows


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test p-value (ties dropped)."""
    trials = wins + losses
    if not trials:
        return 1.0
    tail = sum(math.comb(trials, k) for k in range(0, min(wins, losses) + 1)) / 2**trials
    return min(1.0, 2 * tail)


def paired(per_query: dict[str, dict[str, dict]], first: str, second: str, metric: str) -> dict:
    """Per-query wins and losses of ``first`` over ``second`` on one metric, and the sign test."""
    a, b = per_query[first], per_query[second]
    diffs = [a[q][metric] - b[q][metric] for q in a if q in b and metric in a[q] and metric in b[q]]
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    return {"compare": f"{first} vs {second}", "metric": metric, "wins": wins, "losses": losses,
            "ties": len(diffs) - wins - losses, "mean_delta": round(statistics.fmean(diffs), 4) if diffs else 0.0,
            "sign_test_p": round(sign_test(wins, losses), 4)}


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
        scores = out.with_suffix(".score.json")
        subprocess.run([sys.executable, str(rulers / "score.py"), "--queries", str(queries), "--results", str(out),
                        "--json", str(scores)], check=True, capture_output=True)
        overall = json.loads(scores.read_text())["overall"]
        timing_path = Path(str(out) + ".timing.json")
        timing = json.loads(timing_path.read_text()) if timing_path.is_file() else {}
        rows.append({"method": f"baseline: {method}", **{k: round(v, 3) for k, v in overall.items()},
                     "p50_ms": timing.get("query_p50_ms", ""), "p95_ms": timing.get("query_p95_ms", "")})
    return rows


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ruler", choices=["docstring", "ml", "issues"])
    parser.add_argument("--bench", required=True, type=Path,
                        help="the folder make_bench.py / make_bench_ml.py / fetch_corpora.py wrote")
    parser.add_argument("--queries", type=Path, help="queries.jsonl (default: BENCH/queries.jsonl)")
    parser.add_argument("--methods", default=f"grepgraph,{GRAPH_METHOD},bm25,vectors,rrf",
                        help=f"comma-separated: {', '.join([*METHODS, GRAPH_METHOD])}")
    parser.add_argument("--compare", help="two methods, 'a,b': per-query wins/losses of a over b and a sign test "
                        "(default: the first two methods)")
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks" / "results" / "indexes")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--rulers", type=Path, default=DEFAULT_RULERS)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--no-embed", action="store_true", help="lexical index only (quick diagnostics)")
    parser.add_argument("--baselines-python", help="docstring ruler: also run baselines.py with this interpreter "
                        "(a venv with ../shared/bench/requirements-baselines.txt)")
    args = parser.parse_args()
    queries_path = args.queries or args.bench / "queries.jsonl"
    queries = [json.loads(line) for line in queries_path.read_text().splitlines() if line.strip()]
    ruler = Ruler(args.ruler, args.rulers)
    methods = args.methods.split(",")
    rows, per_query = evaluate(ruler, queries, args.bench / "corpus", methods, args.cache, args.out, args.limit,
                               embed=not args.no_embed)
    if args.baselines_python and args.ruler == "docstring":
        rows += run_baselines(args.baselines_python, args.bench, queries_path, args.out, args.rulers)
    by_group = {metric: group_rows(per_query, metric) for metric in ruler.headline}
    compare = (args.compare or ",".join(methods[:2])).split(",")
    comparisons = [paired(per_query, compare[0], compare[1], metric) for metric in ruler.headline
                   if len(compare) == 2 and all(m in per_query for m in compare)]
    if args.json:
        print(json.dumps({"rows": rows, "per_package": by_group, "paired": comparisons}, indent=2))
        return
    print_table(rows)
    for metric, table in by_group.items():
        print(f"\n{metric} per {'repository' if args.ruler == 'issues' else 'package'}:")
        print_table(table)
    if comparisons:
        print()
        print_table(comparisons)


if __name__ == "__main__":
    main()
