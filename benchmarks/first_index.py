"""Where a first index's time goes, with an empty embedding cache: seconds and items/s per stage.

    python benchmarks/first_index.py REPO                 # indexes a copy of REPO in a temporary directory
    python benchmarks/first_index.py REPO --keep /tmp/x   # ... kept there

The copy is indexed from scratch in this process with the embedding cache pointed at a new, empty
file (so every vector is computed, as on a new machine), timing each stage from the progress
callbacks: scan, parse, store+bm25 (the lexical index: searches answer from here on), then each
embedded view. Run it once: it embeds every chunk.
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


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--keep", type=Path, help="index in this directory and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="gg-first-index-"))
    copy = work / "repo"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(args.repo, copy, ignore=shutil.ignore_patterns(".grepgraph", ".git"))
    os.environ["GREPGRAPH_EMBEDDING_CACHE"] = str(work / f"empty-cache-{time.time_ns()}.sqlite")
    from grepgraph.retrievers.index import CodeIndex

    spans: dict[str, list[float]] = {}
    totals: dict[str, int] = {}

    def progress(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        spans.setdefault(phase, [now, now])[1] = now
        totals[phase] = total

    started = time.perf_counter()
    summary = CodeIndex(copy).update(progress=progress)
    wall = time.perf_counter() - started
    lexical_ready = started + sum(summary.phases.get(name, 0.0) for name in ("scan", "parse", "store+bm25"))
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
    print(f"## first index of {args.repo.name} ({summary.files} files, {summary.chunks} chunks, empty embedding cache,"
          f" {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})\n")
    print_table(rows)
    print(f"\nlexical search usable after {lexical_ready - started:.1f} s; all {summary.vectors_embedded} vectors after"
          f" {wall:.1f} s ({summary.vectors_embedded / (summary.phases.get('embed') or 1):.1f} vectors/s)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
