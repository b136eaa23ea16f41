"""Exact-line recall: a line pasted from the code must bring back the definition that contains it, first.

    python benchmarks/exact_line.py CORPUS_DIR [CORPUS_DIR ...] --index-root /tmp/gg-exact
    python benchmarks/exact_line.py CORPUS --index-root /tmp/gg-exact-vec --embed     # with vectors in the blend

For each corpus (indexed lexical-only unless ``--embed``), ``--samples`` lines are drawn with a
fixed seed from its code files: at least 30 characters once stripped, occurring exactly once in
the repository's indexed texts. Each stripped line is the query. The expected answer is the
innermost definition containing the line (the smallest non-module chunk whose lines contain
it, as the index defines definitions); for a module-level line, any result in the right file.
Recall@1 is reported per language, through ``Searcher.search`` and through the compiled graph
with the LLM unreachable (as on a laptop without Ollama).

A miss is labelled ``coverage`` when the line lies in the text of no chunk of its file (the
chunker dropped it), else ``ranking``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.grep.spans import chunk_spans
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex
from grepgraph.retrievers.store.textstore import TextStore

from benchmarks.tables import print_table  # noqa: E402

MIN_LINE_CHARS = 30
UNREACHABLE_LLM = "http://127.0.0.1:9"
CONTAINER_KINDS = ("module", "text")


def sample_lines(searcher: Searcher, count: int, seed: int) -> list[dict]:
    """``count`` unique, non-trivial lines of the corpus's code files with their expected answers."""
    connection = searcher.connection
    with searcher.connection_lock():
        languages = dict(connection.execute("SELECT path, language FROM files"))
        texts = {path: data for path, data in TextStore(connection).iter_texts()}
    code_paths = sorted(path for path in texts if languages.get(path, "text") != "text")
    rng = random.Random(seed)
    candidates: list[tuple[str, int, str]] = []
    for path in code_paths:
        for number, line in enumerate(texts[path].decode("utf-8", "replace").split("\n"), start=1):
            stripped = line.strip()
            if len(stripped) >= MIN_LINE_CHARS:
                candidates.append((path, number, stripped))
    rng.shuffle(candidates)
    chosen: list[dict] = []
    blob = b"\n\x00\n".join(texts.values())
    for path, number, stripped in candidates:
        if len(chosen) >= count:
            break
        if blob.count(stripped.encode("utf-8")) != 1:
            continue
        chosen.append({"path": path, "line": number, "query": stripped, "language": languages[path]})
    with searcher.connection_lock():
        spans = chunk_spans(connection, sorted({item["path"] for item in chosen}))
        for item in chosen:
            item.update(expected(spans[item["path"]], item["line"]))
            item["covered"] = line_in_chunk_text(connection, item["path"], item["query"])
    return chosen


def expected(spans: list, line: int) -> dict:
    """The innermost definition containing ``line`` (``symbol`` empty: a module-level line)."""
    containing = [s for s in spans if s.start_line <= line <= s.end_line and s.kind not in CONTAINER_KINDS]
    best = min(containing, key=lambda s: s.end_line - s.start_line, default=None)
    return {"symbol": best.symbol if best else "", "kind": best.kind if best else "module"}


def line_in_chunk_text(connection, path: str, stripped: str) -> bool:
    """Whether some chunk of ``path`` holds the line in its text (coverage)."""
    return any(stripped in text for (text,) in connection.execute("SELECT text FROM chunks WHERE path = ?", (path,)))


def is_hit(result: dict | None, item: dict) -> bool:
    """Top-1 is the expected definition, or any result in the right file for a module-level line."""
    if result is None or result["path"] != item["path"]:
        return False
    return not item["symbol"] or result["symbol"] == item["symbol"]


def evaluate(corpus: Path, index_root: Path, samples: int, seed: int, embed: bool, use_graph: bool) -> list[dict]:
    """One record per sampled line: the query, the expected answer, and both top-1 results."""
    index = CodeIndex(corpus, index_root / corpus.name)
    summary = index.update(embed=embed)
    print(f"  {corpus.name}: {summary.files} files, {summary.chunks} chunks, {summary.seconds:.1f}s",
          file=sys.stderr)
    searcher = Searcher(index)
    items = sample_lines(searcher, samples, seed)
    context = {"repo": str(index.repo), "index_dir": str(index.index_dir), "llm_base_url": UNREACHABLE_LLM}
    if use_graph:
        from grepgraph.graphs.code_search import graph
    for item in items:
        started = time.perf_counter()
        hits, _ = searcher.search(item["query"], 5)
        item["ms"] = (time.perf_counter() - started) * 1000
        top = hits[0].to_result() if hits else None
        item["searcher_hit"] = is_hit(top, item)
        item["searcher_top"] = f"{top['path']}:{top['symbol']}" if top else ""
        if use_graph:
            out = graph.invoke({"query": item["query"], "limit": 5}, context=context)
            first = out["results"][0] if out["results"] else None
            item["graph_hit"] = is_hit(first, item)
            item["graph_top"] = f"{first['path']}:{first['symbol']}" if first else ""
        item["corpus"] = corpus.name
    searcher.close()
    return items


def report(items: list[dict], use_graph: bool) -> list[dict]:
    """Recall@1 per language (and overall), with the misses split into coverage and ranking."""
    by_language: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        by_language[item["language"]].append(item)
    rows = []
    for language, group in sorted(by_language.items()) + [("all", items)]:
        misses = [item for item in group if not item["searcher_hit"]]
        row = {"language": language, "lines": len(group),
               "recall@1 searcher": round(sum(i["searcher_hit"] for i in group) / len(group), 3),
               "misses: coverage": sum(not i["covered"] for i in misses),
               "misses: ranking": sum(i["covered"] for i in misses),
               "p50 ms": round(statistics.median(i["ms"] for i in group), 1)}
        if use_graph:
            row["recall@1 graph"] = round(sum(i["graph_hit"] for i in group) / len(group), 3)
        rows.append(row)
    return rows


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--index-root", type=Path, required=True)
    parser.add_argument("--samples", type=int, default=100, help="lines per corpus")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--embed", action="store_true", help="index with vectors (default: lexical only)")
    parser.add_argument("--no-graph", action="store_true", help="Searcher.search only")
    parser.add_argument("--misses", type=Path, help="write every miss as JSON lines here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    items: list[dict] = []
    for corpus in args.corpora:
        items += evaluate(corpus.resolve(), args.index_root, args.samples, args.seed, args.embed, not args.no_graph)
    rows = report(items, not args.no_graph)
    if args.misses:
        with args.misses.open("w") as handle:
            for item in items:
                if not item["searcher_hit"] or not item.get("graph_hit", True):
                    handle.write(json.dumps(item) + "\n")
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print_table(rows)


if __name__ == "__main__":
    main()
