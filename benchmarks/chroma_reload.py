"""Loading vectors while another process writes them: crashes and answers, with and without the lock.

    python benchmarks/chroma_reload.py [--seconds 30] [--rounds 3] [--without-lock]

Each round starts two processes on a fresh embedded database: a writer storing random vectors 256 at a time
(as the indexer stores a batch of embedded chunks) and a reader that opens the collection as a search service
does after each re-index, loads it and asks 20 queries, again and again. A round's reader either lives to the
end or dies (a signal: Chroma crashed loading a graph another process was saving). ``--without-lock`` replaces
``ChromaClient.exclusive`` by a no-op in both processes: the behaviour before the lock.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.dense import vectors as chroma  # noqa: E402
from grepgraph.retrievers.dense.minilm import MINILM_MODEL_ID  # noqa: E402

from benchmarks.tables import print_table  # noqa: E402

NAMESPACE = "gg-reload"
BATCH = 256
QUERIES_PER_LOAD = 20


def open_store(chroma_dir: Path) -> chroma.VectorStore:
    return chroma.VectorStore(chroma.open_chroma_client(chroma_dir), SimpleNamespace(model_id=MINILM_MODEL_ID),
                              NAMESPACE, ("card",))


def write(chroma_dir: Path, seconds: float) -> dict:
    """Store batches of random vectors until the time is up."""
    rng = np.random.default_rng(0)
    store = open_store(chroma_dir)
    written, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        store.add("card", [f"key-{written + i}" for i in range(BATCH)],
                  rng.normal(size=(BATCH, 384)).astype(np.float32))
        written += BATCH
    store.client.close()
    return {"written": written}


def read(chroma_dir: Path, seconds: float) -> dict:
    """Open, load and query the collection again and again until the time is up."""
    rng = np.random.default_rng(1)
    loads, errors, end = 0, 0, time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            store = open_store(chroma_dir)
            for _ in range(QUERIES_PER_LOAD):
                store.cached_count("card")
                store._counts.clear()  # the writer's batches change the size; ask each time
                store.query("card", rng.normal(size=384).astype(np.float32), 100)
            store.client.close()
            loads += 1
        except Exception:  # noqa: BLE001 - counted: a Chroma error is an answer lost, not a crash
            errors += 1
    return {"loads": loads, "errors": errors}


def run_round(seconds: float, without_lock: bool) -> dict:
    """One writer and one reader on a fresh database; the reader's fate."""
    with tempfile.TemporaryDirectory() as scratch:
        chroma_dir = Path(scratch) / "chroma"
        write(chroma_dir, 0)  # the collection exists before either starts
        flags = ["--without-lock"] if without_lock else []
        command = [sys.executable, __file__, "--seconds", str(seconds), *flags, "--role"]
        writer = subprocess.Popen([*command, "write", str(chroma_dir)], stdout=subprocess.PIPE, text=True)
        reader = subprocess.run([*command, "read", str(chroma_dir)], capture_output=True, text=True)
        written = json.loads(writer.communicate()[0] or "{}").get("written", "")
        if reader.returncode == 0:
            answer = json.loads(reader.stdout)
            return {"reader": "lived", "loads": answer["loads"], "errors": answer["errors"], "written": written}
        return {"reader": f"died ({reader.returncode})", "loads": "", "errors": "", "written": written}


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--without-lock", action="store_true")
    parser.add_argument("--role", nargs=2, metavar=("ROLE", "CHROMA_DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.without_lock:
        chroma.ChromaClient.exclusive = lambda self: contextlib.nullcontext()  # type: ignore[method-assign]
    if args.role:
        role, chroma_dir = args.role
        print(json.dumps((write if role == "write" else read)(Path(chroma_dir), args.seconds)))
        return
    rows = [{"round": i + 1, "lock": "no" if args.without_lock else "yes", **run_round(args.seconds, args.without_lock)}
            for i in range(args.rounds)]
    print_table(rows)


if __name__ == "__main__":
    main()
