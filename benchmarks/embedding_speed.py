"""MiniLM's speed on a repository's own texts: the default graph against the packaged one, where the time goes.

    python benchmarks/embedding_speed.py REPO                  # REPO indexed (grepgraph index REPO)
    python benchmarks/embedding_speed.py REPO --texts 2048 --rounds 3 --profile
    python benchmarks/embedding_speed.py REPO --models minilm,code-minilm,code-minilm-quantized  # settings

Samples ``--texts`` implementation cards and code views from REPO's index and embeds them, as a first index
does (calls of 256 texts, one session per core), with two set-ups in alternating rounds:

- ``packaged``: the packaged model file with every onnxruntime graph fusion (the default before 2026-11-25);
- ``default``: what ``minilm`` runs now (the graph without its softmax NaN guards, two slower fusions left out).

Prints texts/s per set-up and round, the median ratio, and the largest difference between their vectors.
With ``--models``, the set-ups are those ``embedding_model`` settings as an index runs them, each against the
first (other models make other vectors: no difference is printed).
With ``--profile``, one session of each embeds 256 cards under onnxruntime's profiler: time per operator type.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tables import print_table  # noqa: E402

CALL = 256  # texts per embed call, as vector_sync.EMBED_BATCH


def sample_texts(index_file: Path, count: int, seed: int = 3) -> dict[str, list[str]]:
    """``count`` random implementation cards and code views (as embedded) of an index."""
    from grepgraph.retrievers.core.model import Chunk
    from grepgraph.retrievers.parse.cards import code_text

    connection = sqlite3.connect(index_file)
    rows = connection.execute(
        "SELECT path, language, kind, symbol, start_line, end_line, text, signature, docstring, parent, is_test, card"
        " FROM chunks WHERE is_test = 0").fetchall()
    connection.close()
    random.Random(seed).shuffle(rows)
    rows = rows[:count]
    return {"card": [row[11] for row in rows], "code": [code_text(Chunk(*row[:11])) for row in rows]}


def embedder_class(packaged_file: bool, fusions_left_out: list[str], profile_prefix: str = "") -> type:
    """A MiniLM embedder running the packaged file or the default's, with these fusions left out, maybe profiled."""
    from grepgraph.retrievers.dense.minilm import MiniLMEmbedder, minilm_files, single_core_options

    class SetUp(MiniLMEmbedder):
        def _resolve_model_path(self) -> tuple[Path, str]:
            path, model_id = super()._resolve_model_path()
            return (minilm_files()[0] if packaged_file else path), model_id

        @staticmethod
        def _new_session(model_path: Path) -> Any:
            import onnxruntime

            options = single_core_options()
            options.enable_profiling = bool(profile_prefix)
            options.profile_file_prefix = profile_prefix or "onnxruntime_profile_"
            return onnxruntime.InferenceSession(str(model_path), sess_options=options,
                                                providers=["CPUExecutionProvider"],
                                                disabled_optimizers=fusions_left_out)

    return SetUp


def set_ups() -> dict[str, tuple[bool, list[str]]]:
    """Each set-up's (runs the packaged file, fusions left out)."""
    from grepgraph.retrievers.dense.minilm import SLOWER_FUSIONS

    return {"packaged": (True, []), "default": (False, SLOWER_FUSIONS)}


def embed_all(embedder: Any, texts: dict[str, list[str]]) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Texts/s and vectors per view, in calls of :data:`CALL` texts."""
    from grepgraph.retrievers.dense.sync import view_token_limit

    rates, vectors = {}, {}
    for view, items in texts.items():
        started = time.perf_counter()
        vectors[view] = np.concatenate([embedder.embed(items[start : start + CALL], view_token_limit(view, embedder))
                                        for start in range(0, len(items), CALL)])
        rates[view] = len(items) / (time.perf_counter() - started)
    return rates, vectors


def profile(packaged_file: bool, fusions_left_out: list[str], texts: list[str]) -> dict[str, float]:
    """Milliseconds per operator type while one profiled session embeds ``texts``."""
    prefix = str(Path(tempfile.mkdtemp(prefix="gg-ort-profile-")) / "ort")
    embedder = embedder_class(packaged_file, fusions_left_out, prefix)(threads=1)
    embedder.embed(texts)
    events = json.loads(Path(embedder._session.end_profiling()).read_text())
    spent: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            spent[event["args"]["op_name"]] += event["dur"] / 1000
    return dict(spent)


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--index-dir", type=Path, help="the index (default REPO/.grepgraph)")
    parser.add_argument("--texts", type=int, default=1024, help="cards and as many code views")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--profile", action="store_true", help="also: time per operator type (256 cards)")
    parser.add_argument("--models", help="comma-separated embedding_model settings to time instead")
    args = parser.parse_args()
    texts = sample_texts((args.index_dir or args.repo / ".grepgraph") / "index.sqlite", args.texts)
    from grepgraph.retrievers.dense.embeddings import embedder_for
    from grepgraph.retrievers.dense.minilm import MiniLMEmbedder

    if args.models:
        names = args.models.split(",")
        setups = {name: embedder_for(name) for name in names}
    else:  # the default is timed as it runs (the class itself); the packaged graph through a set-up class
        setups = {"packaged": embedder_class(*set_ups()["packaged"])(), "default": MiniLMEmbedder()}
    base = next(iter(setups))
    for embedder in setups.values():
        embedder.embed(["warm up"])
    rows, rates, vectors = [], collections.defaultdict(list), {}
    for number in range(args.rounds):
        for name, embedder in setups.items():
            rate, vectors[name] = embed_all(embedder, texts)
            for view, value in rate.items():
                rates[(name, view)].append(value)
            rows.append({"round": number + 1, "set-up": name, **{f"{view} texts/s": round(value) for view, value
                                                                    in rate.items()}})
    print(f"## MiniLM on {len(texts['card'])} cards and code views of {args.repo.name}\n")
    print_table(rows)
    for view in texts:
        for name in list(setups)[1:]:
            ratio = statistics.median(rates[(name, view)]) / statistics.median(rates[(base, view)])
            line = f"\n{view}: {name} / {base} {ratio:.2f}x (medians)"
            if not args.models:
                difference = float(np.abs(vectors[name][view] - vectors[base][view]).max())
                line += f"; largest vector difference {difference:.1e}"
            print(line)
    if args.profile:
        spent = {name: profile(*set_up, texts["card"][:CALL]) for name, set_up in set_ups().items()}
        kinds = sorted(set().union(*spent.values()), key=lambda kind: -spent["packaged"].get(kind, 0.0))
        totals = {name: sum(values.values()) for name, values in spent.items()}
        print(f"\n## time per operator type, one session, {CALL} cards\n")
        print_table([{"operator": kind, **{f"{name} ms (share)": f"{spent[name].get(kind, 0.0):.0f} "
                                           f"({spent[name].get(kind, 0.0) / totals[name]:.1%})" for name in spent}}
                     for kind in kinds if max(spent[name].get(kind, 0.0) for name in spent) >= 1.0]
                    + [{"operator": "all", **{f"{name} ms (share)": f"{totals[name]:.0f}" for name in spent}}])


if __name__ == "__main__":
    main()
