"""Where a first index's time goes, with an empty embedding cache: seconds and items/s per stage.

    python benchmarks/first_index.py REPO                              # the default model
    python benchmarks/first_index.py REPO --embedding minilm,code-minilm-quantized   # two models, one run
    python benchmarks/first_index.py REPO --keep /tmp/x                # ... kept there
    python benchmarks/first_index.py REPO --no-embed                   # the lexical stages only

For each model, a copy of REPO is indexed from scratch in this process with the embedding cache
pointed at a new, empty file and the user cache (where the quantized model is made once per
machine) at a new, empty directory, so every vector and the model file are computed as on a new
machine. Each stage is timed from the progress callbacks: scan, parse, store+bm25 (the lexical
index: searches answer from here on), then each embedded view; then a second update with nothing
changed (in this process: a command adds its start-up). Run it once: it embeds every chunk.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tables import print_table  # noqa: E402


def first_index(repo: Path, work: Path, embedding: str, embed: bool = True) -> dict:
    """Index a fresh copy of ``repo`` with ``embedding`` on empty caches; the per-stage rows and totals."""
    copy = work / f"repo-{embedding.replace(':', '-')}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".grepgraph", ".git"))
    os.environ["GREPGRAPH_EMBEDDING_CACHE"] = str(work / f"empty-cache-{time.time_ns()}.sqlite")
    os.environ["XDG_CACHE_HOME"] = str(work / f"empty-user-cache-{time.time_ns()}")
    from grepgraph.retrievers.core.index_settings import IndexSettings
    from grepgraph.retrievers.dense.minilm import shared_embedder
    from grepgraph.retrievers.store.index import CodeIndex

    for quantized in (True, False):  # a model file resolved by an earlier run is not reused
        shared_embedder(quantized)._model_path = None
    spans: dict[str, list[float]] = {}
    totals: dict[str, int] = {}

    def progress(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        spans.setdefault(phase, [now, now])[1] = now
        totals[phase] = total

    load = os.getloadavg()[0]
    started = time.perf_counter()
    summary = CodeIndex(copy, settings=IndexSettings(embedding_model=embedding)).update(progress=progress, embed=embed)
    wall = time.perf_counter() - started
    lexical = sum(summary.phases.get(name, 0.0) for name in ("scan", "parse", "store+bm25"))
    again = time.perf_counter()
    unchanged = CodeIndex(copy).update(embed=embed)
    no_change = time.perf_counter() - again
    rows = [{"stage": "scan", "s": summary.phases.get("scan", 0.0), "items": summary.files, "unit": "files"},
            {"stage": "parse", "s": summary.phases.get("parse", 0.0), "items": summary.chunks_added,
             "unit": "chunks"},
            {"stage": "store+bm25", "s": summary.phases.get("store+bm25", 0.0), "items": summary.chunks_added,
             "unit": "chunks"}]
    for phase, (first, last) in spans.items():
        if phase.startswith("embed"):
            rows.append({"stage": phase, "s": round(last - first, 2), "items": totals[phase], "unit": "vectors"})
    for row in rows:
        row["per s"] = round(row["items"] / row["s"]) if row["s"] else ""
    return {"embedding": embedding, "rows": rows, "summary": summary, "lexical": lexical, "wall": wall,
            "no_change": no_change, "no_change_embedded": unchanged.vectors_embedded,
            "load": f"{load:.1f}-{os.getloadavg()[0]:.1f}"}


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    from grepgraph.retrievers.core.index_settings import DEFAULT_EMBEDDING_MODEL

    parser.add_argument("--embedding", default=DEFAULT_EMBEDDING_MODEL,
                        help="comma-separated embedding_model settings, run in turn (default: the default model)")
    parser.add_argument("--no-embed", action="store_true", help="the lexical stages only (as index --vectors-later)")
    parser.add_argument("--keep", type=Path, help="index in this directory and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="gg-first-index-"))
    work.mkdir(parents=True, exist_ok=True)
    runs = [first_index(args.repo, work, name.strip(), not args.no_embed) for name in args.embedding.split(",")]
    for run in runs:
        summary = run["summary"]
        print(f"## first index of {args.repo.name} with {run['embedding']} ({summary.files} files, {summary.chunks}"
              f" chunks, empty embedding and model caches, {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()}"
              f" cores, load {run['load']})\n")
        print_table(run["rows"])
        embed_s = summary.phases.get("embed") or 1
        print(f"\nlexical search usable after {run['lexical']:.1f} s; all {summary.vectors_embedded} vectors after"
              f" {run['wall']:.1f} s ({summary.vectors_embedded / embed_s:.1f} vectors/s); a re-index with nothing"
              f" changed {run['no_change']:.2f} s ({run['no_change_embedded']} embedded)\n")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
