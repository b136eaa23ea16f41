"""What each LLM stage buys on a real local model: quality with and without, latency, tokens, gate shares.

    python benchmarks/local_llm.py start --model 1.5b            # a real model on 127.0.0.1:8080
    python benchmarks/llm_stages.py docstring --bench BENCH --cache IDX --every 20
    python benchmarks/llm_stages.py issues --bench ISSUES --queries issues-dev/queries.jsonl --cache IDX --every 3
    python benchmarks/llm_stages.py compound --bench BENCH --cache IDX --every 9
    python benchmarks/llm_stages.py typos --bench BENCH --cache LEXICAL_IDX --every 4

**The rulers** (``docstring``, ``issues``). Every query goes through the whole graph without an LLM (an
unreachable URL: the gates still decide, nothing is called), which gives the baseline and the share of
queries each gate would send. A fixed subset (every ``--every``-th query, so it spreads over the packages)
then goes through the graph with the rewrite forced (rerank forbidden) and with the rerank forced (rewrite
forbidden), all rewrites first so the server's prompt cache keeps their shared instructions. A gated stage on
a query is its forced run when the gate sends the query and the baseline otherwise (temperature 0, the same
prompt), so the gated rows come from the same calls.

**Sets derived from the docstring ruler at run time** (nothing of the ruler is copied into the repository):

- ``compound``: two queries of one package joined into one request ("<first>, and also <second>"), scored on
  whether both golds are in the top 10 (``both@10``) and on the two queries' mean MRR@10; run whole (no
  decomposition), split by the rule-based ``decompose`` (the default) and split with the LLM rewrite forced.
- ``typos``: each query with every word of 4+ letters mistyped (two middle letters swapped), searched on a
  lexical-only index (``--cache`` is built with ``embed=False`` where missing: what a search sees before the
  vectors of ``index --vectors-later`` are in, or without an embedding model). The queries that find nothing
  there are the set: the zero-result fallback (one rewrite) must find the target; without an LLM they score 0.

Per configuration: the metrics on the subset, per-query wins/losses against the baseline with a sign test,
LLM call latency and end-to-end latency p50/p95, the latency the LLM added (p50 over queries of with minus
without), prompt / cached / output tokens.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.graphs.code_search import graph  # noqa: E402
from grepgraph.graphs.heuristics import decompose  # noqa: E402
from grepgraph.graphs.resources import forget_searchers  # noqa: E402
from grepgraph.retrievers.store.index import CodeIndex

from benchmarks.quality import DEFAULT_RULERS, UNREACHABLE_LLM, Ruler, mean_of, paired  # noqa: E402
from benchmarks.tables import print_table  # noqa: E402

STAGES = {"rewrite": {"rewrite": True, "rerank": False}, "rerank": {"rewrite": False, "rerank": True}}
COMPOUND_JOIN = ", and also "
COMPOUND_METRICS = ["both@10", "MRR@10"]
MISTYPED_WORD = re.compile(r"[A-Za-z]{4,}")

Scorer = Callable[[dict, list[dict]], dict[str, float]]


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1) if ordered else 0.0


# ------------------------------------------------------------------------------------------ derived sets
def compound_queries(queries: list[dict], ruler: Ruler) -> list[dict]:
    """Pairs of one package's queries joined into one request; the i-th query goes with the one half a list on."""
    by_corpus: dict[str, list[dict]] = {}
    for query in queries:
        by_corpus.setdefault(ruler.corpus(query), []).append(query)
    compounds = []
    for members in by_corpus.values():
        half = len(members) // 2
        for first, second in zip(members[:half], members[half : 2 * half]):
            text = second["query"].strip()
            # "Return the ..." reads as one request after "and also"; an acronym or a code name keeps its case.
            text = text[0].lower() + text[1:] if text[:2].istitle() else text
            compounds.append({**first, "id": f"{first['id']}+{second['id']}", "parts": [first, second],
                              "query": first["query"].strip().rstrip(".") + COMPOUND_JOIN + text})
    return compounds


def compound_scorer(ruler: Ruler) -> Scorer:
    """Both parts scored by the ruler: ``both@10`` (both golds in the top 10) and the parts' mean metrics."""
    def score(query: dict, results: list[dict]) -> dict[str, float]:
        parts = [ruler.score_query(part, results) for part in query["parts"]]
        return {"both@10": min(part["R@10"] for part in parts),
                **{name: statistics.fmean(part[name] for part in parts) for name in ("MRR@10", "R@5", "R@10")}}
    return score


def mistyped(text: str) -> str:
    """Every word of 4+ letters with two middle letters swapped (``search`` -> ``seacrh``), a typing slip."""
    def slip(match: re.Match) -> str:
        word = match.group()
        at = len(word) // 2 - 1
        while at > 0 and word[at] == word[at + 1]:
            at -= 1
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    return MISTYPED_WORD.sub(slip, text)


def lexical_indexes(queries: list[dict], ruler: Ruler, corpora: Path, cache: Path) -> None:
    """Build a lexical-only index (no vectors) of each corpus under ``cache`` where there is none yet."""
    for corpus in sorted({ruler.corpus(query) for query in queries}):
        if not (cache / corpus).is_dir():
            started = time.perf_counter()
            summary = CodeIndex(corpora / corpus, cache / corpus).update(embed=False)
            print(f"  lexical index of {corpus}: {summary.chunks} chunks, {time.perf_counter() - started:.1f}s",
                  file=sys.stderr)


# ------------------------------------------------------------------------------------------ running
@dataclass
class Config:
    """One way of running a set: offline or against the live model, with input flags and run settings."""

    label: str
    live: bool
    flags: dict = field(default_factory=dict)
    context: dict = field(default_factory=dict)


def run(query: dict, ruler: Ruler, score: Scorer, corpora: Path, cache: Path, context: dict, flags: dict,
        limit: int) -> dict:
    """One query through the graph: its results' scores, the gates' decisions, the LLM entries, the time."""
    corpus = ruler.corpus(query)
    started = time.perf_counter()
    out = graph.invoke({"query": query["query"], "limit": limit, **flags},
                       context={"repo": str(corpora / corpus), "index_dir": str(cache / corpus), **context})
    seconds = time.perf_counter() - started
    results = [{"path": r["path"], "start_line": r["start_line"], "end_line": r["end_line"], "symbol": r["symbol"]}
               for r in out["results"]]
    trace = {entry["node"]: entry for entry in out["trace"]}
    return {"id": query["id"], "scores": score(query, results), "ms": round(seconds * 1000, 1),
            "found": len(results),
            "gates": {name: trace.get(f"should_{name}", {}).get("decision") == name for name in STAGES},
            "decompose": trace.get("decompose", {}).get("decision", ""),
            "llm": {name: {k: trace[name].get(k) for k in ("decision", "llm", "llm_ms", "llm_tokens", "terms")}
                    for name in STAGES if name in trace}}


def llm_stats(runs: list[dict], stage: str) -> dict:
    """How often the stage called the model, with what outcome, how long the calls took and their tokens."""
    called = [r["llm"][stage] for r in runs if stage in r["llm"] and r["llm"][stage].get("llm_ms")]
    tokens = [entry["llm_tokens"] for entry in called if entry.get("llm_tokens")]
    llm_ms = [entry["llm_ms"] for entry in called]
    return {"sent": f"{len(called)}/{len(runs)}", "ok": sum(entry.get("llm") == "ok" for entry in called),
            "llm_p50_ms": percentile(llm_ms, 0.5), "llm_p95_ms": percentile(llm_ms, 0.95),
            "prompt_tok_p50": percentile([t["prompt"] for t in tokens], 0.5),
            "cached_tok_p50": percentile([t.get("cached", 0) for t in tokens], 0.5),
            "output_tok_p50": percentile([t["output"] for t in tokens], 0.5)}


def timing(runs: list[dict], base: list[dict]) -> dict:
    """End-to-end p50/p95 and the latency added over the baseline's runs of the same queries (p50)."""
    return {"e2e_p50_ms": percentile([r["ms"] for r in runs], 0.5),
            "e2e_p95_ms": percentile([r["ms"] for r in runs], 0.95),
            "added_p50_ms": percentile([r["ms"] - b["ms"] for r, b in zip(runs, base)], 0.5)}


def stage_rows(stage: str, base: dict[str, dict], forced: dict[str, dict], metrics: list[str]) -> tuple[list, list]:
    """The forced and gated rows of one stage over the subset, and their paired comparisons with the baseline."""
    subset = list(forced)
    gated = {q: forced[q] if base[q]["gates"][stage] else base[q] for q in subset}
    per_query = {"no LLM": {q: base[q]["scores"] for q in subset}}
    baseline = [base[q] for q in subset]
    rows = [{"stage": "no LLM", "n": len(subset), **mean_of([r["scores"] for r in baseline]),
             **timing(baseline, baseline)}]
    for label, runs in ((f"{stage} forced", forced), (f"{stage} gated", gated)):
        per_query[label] = {q: runs[q]["scores"] for q in subset}
        ordered = [runs[q] for q in subset]
        rows.append({"stage": label, "n": len(subset), **mean_of([r["scores"] for r in ordered]),
                     **llm_stats(ordered, stage), **timing(ordered, baseline)})
    comparisons = [paired(per_query, label, "no LLM", metric) for label in (f"{stage} forced", f"{stage} gated")
                   for metric in metrics]
    return rows, comparisons


def config_rows(configs: list[Config], runs: dict[str, dict[str, dict]], metrics: list[str]) -> tuple[list, list]:
    """One row per configuration over the same queries, each compared with the first (the baseline)."""
    baseline = configs[0].label
    ids = list(runs[baseline])
    per_query = {c.label: {q: runs[c.label][q]["scores"] for q in ids} for c in configs}
    base = [runs[baseline][q] for q in ids]
    rows = []
    for config in configs:
        ordered = [runs[config.label][q] for q in ids]
        row = {"config": config.label, "n": len(ids), **mean_of([r["scores"] for r in ordered]),
               "found_nothing": sum(r["found"] == 0 for r in ordered)}
        row.update(llm_stats(ordered, "rewrite") if config.live else {})
        rows.append({**row, **timing(ordered, base)})
    comparisons = [paired(per_query, c.label, baseline, metric) for c in configs[1:] for metric in metrics]
    return rows, comparisons


def run_configs(configs: list[Config], subset: list[dict], ruler: Ruler, score: Scorer, corpora: Path, cache: Path,
                live: dict, offline: dict, limit: int) -> dict[str, dict[str, dict]]:
    """Every configuration over the subset (offline ones first), printing each LLM call as it ends."""
    runs: dict[str, dict[str, dict]] = {}
    for config in configs:
        context = {**(live if config.live else offline), **config.context}
        runs[config.label] = {}
        for number, query in enumerate(subset, start=1):
            result = run(query, ruler, score, corpora, cache, context, config.flags, limit)
            runs[config.label][query["id"]] = result
            if config.live:
                entry = result["llm"].get("rewrite", {})
                print(f"  {config.label} {number}/{len(subset)} {query['id']}: {entry.get('llm')} "
                      f"{entry.get('llm_ms')} ms {entry.get('llm_tokens')} {entry.get('terms')}", file=sys.stderr)
        forget_searchers()
    return runs


# ------------------------------------------------------------------------------------------ the sets
def ruler_stages(args: argparse.Namespace, ruler: Ruler, queries: list[dict], live: dict, offline: dict) -> dict:
    """The rulers as they are: rewrite and rerank, forced and gated, on every ``--every``-th query."""
    score = ruler.score_query
    corpora = args.bench / "corpus"
    base = {q["id"]: run(q, ruler, score, corpora, args.cache, offline, {}, args.limit) for q in queries}
    print(f"gate shares over all {len(queries)} queries: "
          + ", ".join(f"{name} {sum(b['gates'][name] for b in base.values()) / len(base):.0%}" for name in STAGES)
          + f"; decomposed {sum(b['decompose'] not in ('', 'single') for b in base.values())}", file=sys.stderr)
    subset = queries[:: args.every]
    forced: dict[str, dict[str, dict]] = {}
    for stage in args.stages.split(","):
        forced[stage] = {}
        for number, query in enumerate(subset, start=1):
            forced[stage][query["id"]] = run(query, ruler, score, corpora, args.cache, live, STAGES[stage], args.limit)
            entry = forced[stage][query["id"]]["llm"].get(stage, {})
            print(f"  {stage} {number}/{len(subset)} {query['id']}: {entry.get('llm')} {entry.get('llm_ms')} ms "
                  f"{entry.get('llm_tokens')}", file=sys.stderr)
        forget_searchers()
    for stage, stage_runs in forced.items():
        rows, comparisons = stage_rows(stage, base, stage_runs, ruler.headline)
        print(f"\n{args.set}: {stage} (subset of {len(stage_runs)} queries, every {args.every}th)")
        print_table(rows)
        print_table(comparisons)
    print(f"\nno LLM over all {len(base)} queries: {mean_of([b['scores'] for b in base.values()])}")
    for name in STAGES:
        print(f"  {name} gate sends {sum(b['gates'][name] for b in base.values())}/{len(base)}")
    print("  median e2e ms without LLM:", statistics.median(b["ms"] for b in base.values()))
    return {"base": base, "forced": forced}


def compound_set(args: argparse.Namespace, ruler: Ruler, queries: list[dict], live: dict, offline: dict) -> dict:
    """Joined requests: whole vs split (no LLM) over all of them; split + rewrite on every ``--every``-th."""
    compounds = compound_queries(queries, ruler)
    split = [c for c in compounds if decompose(c["query"], 4)[1] != "single"]
    print(f"compound requests: {len(compounds)}, split by decompose: {len(split)} "
          f"({len(split) / max(1, len(compounds)):.0%})", file=sys.stderr)
    score, corpora = compound_scorer(ruler), args.bench / "corpus"
    offline_configs = [Config("split (default), no LLM", False),
                       Config("whole (no decomposition), no LLM", False, context={"max_sub_queries": 1})]
    every = run_configs(offline_configs, compounds, ruler, score, corpora, args.cache, live, offline, args.limit)
    rows, comparisons = config_rows(offline_configs, every, COMPOUND_METRICS)
    print(f"\ncompound: decomposition without an LLM (all {len(compounds)} requests)")
    print_table(rows)
    print_table(comparisons)
    subset = compounds[:: args.every]
    configs = [offline_configs[0], Config("split + rewrite (forced)", True, flags=STAGES["rewrite"])]
    runs = {offline_configs[0].label: {c["id"]: every[offline_configs[0].label][c["id"]] for c in subset}}
    runs.update(run_configs(configs[1:], subset, ruler, score, corpora, args.cache, live, offline, args.limit))
    rows, comparisons = config_rows(configs, runs, COMPOUND_METRICS)
    print(f"\ncompound: decomposition + rewrite (every {args.every}th request: {len(subset)}, "
          f"{sum(c in split for c in subset)} of them split)")
    print_table(rows)
    print_table(comparisons)
    return {"all": every, "subset": runs}


def typos_set(args: argparse.Namespace, ruler: Ruler, queries: list[dict], live: dict, offline: dict) -> dict:
    """Mistyped queries on a lexical-only index: those that find nothing, without and with the fallback."""
    corpora = args.bench / "corpus"
    lexical_indexes(queries, ruler, corpora, args.cache)
    typed = [{**q, "query": mistyped(q["query"])} for q in queries]
    baseline = Config("no LLM (nothing found)", False)
    probe = run_configs([baseline], typed, ruler, ruler.score_query, corpora, args.cache, live, offline, args.limit)
    zero = [q for q in typed if probe[baseline.label][q["id"]]["found"] == 0]
    print(f"mistyped queries: {len(typed)}, finding nothing on the lexical index: {len(zero)}", file=sys.stderr)
    subset = zero[:: args.every]
    # Nothing forced: zero results route to one rewrite by themselves (auto_rewrite stays off).
    fallback = Config("zero-result fallback (one rewrite)", True)
    runs = {baseline.label: {q["id"]: probe[baseline.label][q["id"]] for q in subset}}
    runs.update(run_configs([fallback], subset, ruler, ruler.score_query, corpora, args.cache, live, offline,
                            args.limit))
    rows, comparisons = config_rows([baseline, fallback], runs, ruler.headline + ["R@10"])
    print(f"\ntypos: the zero-result fallback (every {args.every}th of {len(zero)} zero-result queries: "
          f"{len(subset)}; {len(typed) - len(zero)} of {len(typed)} mistyped queries still found something)")
    print_table(rows)
    print_table(comparisons)
    return {"all": probe, "subset": runs}


SETS = {"docstring": ruler_stages, "issues": ruler_stages, "compound": compound_set, "typos": typos_set}


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", choices=sorted(SETS))
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
    parser.add_argument("--stages", default="rewrite,rerank", help="the rulers' stages to force")
    parser.add_argument("--out", type=Path, help="write every run as JSON here")
    args = parser.parse_args()
    ruler = Ruler("issues" if args.set == "issues" else "docstring", args.rulers)
    queries = [json.loads(line) for line in (args.queries or args.bench / "queries.jsonl").read_text().splitlines()
               if line.strip()]
    queries.sort(key=ruler.corpus)
    # The heuristics decide as if the gates were on (auto_*): the shares they would send are what is measured.
    offline = {"llm_base_url": UNREACHABLE_LLM, "auto_rewrite": True, "auto_rerank": True}
    if args.set in ("compound", "typos"):
        offline = {"llm_base_url": UNREACHABLE_LLM}  # the defaults: the stages run only when asked or on zero
    live = {"llm_provider": args.provider, "llm_base_url": args.base_url, "llm_model": args.model,
            "llm_timeout_s": args.timeout, "llm_retry_after_s": 0.0}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with open("/proc/loadavg") as handle:
        load_before = handle.read().split()[:3]
    runs = SETS[args.set](args, ruler, queries, live, offline)
    with open("/proc/loadavg") as handle:
        load_after = handle.read().split()[:3]
    print(f"\nstarted {started}; load average (1, 5, 15 min) before {load_before}, after {load_after}")
    if args.out:
        args.out.write_text(json.dumps({"load": [load_before, load_after], **runs}, indent=1))


if __name__ == "__main__":
    main()
