"""What each LLM stage buys on a real local model: quality with and without, latency, tokens, gate shares.

    python benchmarks/local_llm.py start --model 1.5b            # a real model on 127.0.0.1:8080
    python benchmarks/llm_stages.py docstring --bench BENCH --cache IDX --every 8
    python benchmarks/llm_stages.py issues --bench ISSUES --queries issues-dev/queries.jsonl --cache IDX --every 3

Every query of the ruler goes through the whole graph without an LLM (an unreachable URL: the gates still
decide, nothing is called), which gives the baseline and the share of queries each gate would send. A fixed
subset (every ``--every``-th query, so it spreads over the packages) then goes through the graph with the
rewrite forced (rerank forbidden) and with the rerank forced (rewrite forbidden), all rewrites first so the
server's prompt cache keeps their shared instructions. A gated stage on a query is its forced run when the
gate sends the query and the baseline otherwise (temperature 0, the same prompt), so the gated rows come from
the same calls. Per stage: the ruler's metrics on the subset, per-query wins/losses with a sign test, LLM call
latency and end-to-end latency p50/p95, prompt and output tokens.
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
from grepgraph.graphs.resources import forget_searchers  # noqa: E402

from benchmarks.quality import DEFAULT_RULERS, UNREACHABLE_LLM, Ruler, mean_of, paired  # noqa: E402
from benchmarks.tables import print_table  # noqa: E402

STAGES = {"rewrite": {"rewrite": True, "rerank": False}, "rerank": {"rewrite": False, "rerank": True}}


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1) if ordered else 0.0


def run(query: dict, ruler: Ruler, corpora: Path, cache: Path, context: dict, flags: dict, limit: int) -> dict:
    """One query through the graph: its results' scores, the gates' decisions, the LLM entries, the time."""
    corpus = ruler.corpus(query)
    started = time.perf_counter()
    out = graph.invoke({"query": query["query"], "limit": limit, **flags},
                       context={"repo": str(corpora / corpus), "index_dir": str(cache / corpus), **context})
    seconds = time.perf_counter() - started
    results = [{"path": r["path"], "start_line": r["start_line"], "end_line": r["end_line"], "symbol": r["symbol"]}
               for r in out["results"]]
    trace = {entry["node"]: entry for entry in out["trace"]}
    return {"id": query["id"], "scores": ruler.score_query(query, results), "ms": round(seconds * 1000, 1),
            "gates": {name: trace.get(f"should_{name}", {}).get("decision") == name for name in STAGES},
            "decompose": trace.get("decompose", {}).get("decision", ""),
            "llm": {name: {k: trace[name].get(k) for k in ("decision", "llm", "llm_ms", "llm_tokens", "terms")}
                    for name in STAGES if name in trace}}


def stage_rows(stage: str, base: dict[str, dict], forced: dict[str, dict], metrics: list[str]) -> tuple[list, list]:
    """The forced and gated rows of one stage over the subset, and their paired comparisons with the baseline."""
    subset = list(forced)
    gated = {q: forced[q] if base[q]["gates"][stage] else base[q] for q in subset}
    per_query = {"no LLM": {q: base[q]["scores"] for q in subset}}
    rows = [{"stage": "no LLM", "n": len(subset), **mean_of([base[q]["scores"] for q in subset]),
             "e2e_p50_ms": percentile([base[q]["ms"] for q in subset], 0.5),
             "e2e_p95_ms": percentile([base[q]["ms"] for q in subset], 0.95)}]
    for label, runs in ((f"{stage} forced", forced), (f"{stage} gated", gated)):
        per_query[label] = {q: runs[q]["scores"] for q in subset}
        called = [runs[q]["llm"][stage] for q in subset if stage in runs[q]["llm"]]
        llm_ms = [entry["llm_ms"] for entry in called if entry.get("llm_ms")]
        tokens = [entry["llm_tokens"] for entry in called if entry.get("llm_tokens")]
        rows.append({"stage": label, "n": len(subset), **mean_of([runs[q]["scores"] for q in subset]),
                     "sent": f"{len(called)}/{len(subset)}",
                     "ok": sum(entry.get("llm") == "ok" for entry in called),
                     "llm_p50_ms": percentile(llm_ms, 0.5), "llm_p95_ms": percentile(llm_ms, 0.95),
                     "e2e_p50_ms": percentile([runs[q]["ms"] for q in subset], 0.5),
                     "e2e_p95_ms": percentile([runs[q]["ms"] for q in subset], 0.95),
                     "prompt_tok_p50": percentile([t["prompt"] for t in tokens], 0.5),
                     "output_tok_p50": percentile([t["output"] for t in tokens], 0.5)})
    comparisons = [paired(per_query, label, "no LLM", metric) for label in (f"{stage} forced", f"{stage} gated")
                   for metric in metrics]
    return rows, comparisons


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ruler", choices=["docstring", "issues"])
    parser.add_argument("--bench", required=True, type=Path)
    parser.add_argument("--queries", type=Path)
    parser.add_argument("--cache", required=True, type=Path, help="the indexes, one folder per corpus (not rebuilt)")
    parser.add_argument("--rulers", type=Path, default=DEFAULT_RULERS)
    parser.add_argument("--every", type=int, default=8, help="the LLM subset: every N-th query")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--provider", default="openai")
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder:1.5b")
    parser.add_argument("--timeout", type=float, default=90.0, help="llm_timeout_s (high: measure, don't cut)")
    parser.add_argument("--stages", default="rewrite,rerank")
    parser.add_argument("--out", type=Path, help="write every run as JSON here")
    args = parser.parse_args()
    ruler = Ruler(args.ruler, args.rulers)
    queries = [json.loads(line) for line in (args.queries or args.bench / "queries.jsonl").read_text().splitlines()
               if line.strip()]
    corpora = args.bench / "corpus"
    queries.sort(key=ruler.corpus)
    # The heuristics decide as if the gates were on (auto_*): the shares they would send are what is measured.
    offline = {"llm_base_url": UNREACHABLE_LLM, "auto_rewrite": True, "auto_rerank": True}
    base = {q["id"]: run(q, ruler, corpora, args.cache, offline, {}, args.limit) for q in queries}
    print(f"gate shares over all {len(queries)} queries: "
          + ", ".join(f"{name} {sum(b['gates'][name] for b in base.values()) / len(base):.0%}" for name in STAGES)
          + f"; decomposed {sum(b['decompose'] not in ('', 'single') for b in base.values())}", file=sys.stderr)
    subset = queries[:: args.every]
    live = {"llm_provider": args.provider, "llm_base_url": args.base_url, "llm_model": args.model,
            "llm_timeout_s": args.timeout, "llm_retry_after_s": 0.0}
    forced: dict[str, dict[str, dict]] = {}
    for stage in args.stages.split(","):
        forced[stage] = {}
        for number, query in enumerate(subset, start=1):
            forced[stage][query["id"]] = run(query, ruler, corpora, args.cache, live, STAGES[stage], args.limit)
            entry = forced[stage][query["id"]]["llm"].get(stage, {})
            print(f"  {stage} {number}/{len(subset)} {query['id']}: {entry.get('llm')} {entry.get('llm_ms')} ms "
                  f"{entry.get('llm_tokens')}", file=sys.stderr)
        forget_searchers()
    if args.out:
        args.out.write_text(json.dumps({"base": base, "forced": forced}, indent=1))
    for stage, runs in forced.items():
        rows, comparisons = stage_rows(stage, base, runs, ruler.headline)
        print(f"\n{args.ruler}: {stage} (subset of {len(runs)} queries, every {args.every}th)")
        print_table(rows)
        print_table(comparisons)
    overall = mean_of([b["scores"] for b in base.values()])
    print(f"\nno LLM over all {len(base)} queries: {overall}")
    for name in STAGES:
        print(f"  {name} gate sends {sum(b['gates'][name] for b in base.values())}/{len(base)}")
    print("  median e2e ms without LLM:", statistics.median(b["ms"] for b in base.values()))


if __name__ == "__main__":
    main()
