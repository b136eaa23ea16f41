"""Concurrent searches while the index is rewritten: counts of searches, mismatches, errors and re-indexes.

    python benchmarks/concurrency.py                       # 8 threads, 120 s, a re-index every 3 s
    python benchmarks/concurrency.py --threads 8 --seconds 60 --reindex-every 2 --json

The long run of ``tests/reliability/test_concurrency.py`` (same harness, ``tests/concurrency.py``):
the fixture repository is copied and indexed with vectors, a loop switches a few of its files between
two versions and re-indexes them (lexically, so Chroma keeps the first index's vectors), copying each
committed generation aside; ``--threads`` threads run the query mix through the compiled graph (the
``+llm`` question against the Ollama-protocol test server). Afterwards every answer is compared with
the same query alone on the copy of the generation it saw. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
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
from grepgraph.retrievers.store.index import CodeIndex

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


def log(message: str) -> None:
    print(f"[concurrency] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--reindex-every", type=float, default=3.0, help="pause between re-indexes (s)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
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
