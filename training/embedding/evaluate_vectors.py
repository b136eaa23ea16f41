#!/usr/bin/env python3
"""Vectors-only MRR@10 per language on the validation packages: the shipped MiniLM against the trained model.

Both models run through the runtime's own embedder (:class:`MiniLMEmbedder`: onnxruntime, the shipped tokenizer,
length-sorted batches, cards at its 256 word pieces and code views at the index's 128), on the same texts and the
same queries in one run: each validation package's chunks (``pairs.py``; the largest cut to ``--max-chunks``:
every gold chunk and a seeded sample of the rest) and its sampled docstring, code-line and error-message queries.
Each view is ranked by cosine and the two fused as the search fuses them (:mod:`ranking`). The table gives per
language the mean of its packages' MRR@10 (fused, card, code) for each model, the paired difference with a 95%
bootstrap interval (queries resampled within packages), then per query kind; and each model's texts per second
on a seeded sample of cards and code views (models alternating, best of two rounds).

    .venv/bin/python training/embedding/evaluate_vectors.py                      # data/embedding/model.onnx
    .venv/bin/python training/embedding/evaluate_vectors.py --model other.onnx --max-chunks 2000
    .venv/bin/python training/embedding/evaluate_vectors.py --model new.onnx --against shipped.onnx   # two trained
    .venv-train/bin/python training/embedding/evaluate_vectors.py --model FOLDER --against FOLDER  # torch, no export
    .venv/bin/python training/embedding/evaluate_vectors.py --model m.onnx --query-model tower.onnx --against m.onnx
    .venv/bin/python training/embedding/evaluate_vectors.py --model m.onnx --query-model new.onnx --against m.onnx \
        --against-query-model shipped.onnx                                              # two query towers
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.dense.minilm import DEFAULT_MAX_TOKENS, MINILM_MODEL_ID, MiniLMEmbedder  # noqa: E402
from grepgraph.retrievers.dense.sync import CODE_VIEW_MAX_TOKENS  # noqa: E402
from ranking import package_scores, trimmed, view_texts  # noqa: E402

DATA = ROOT / "training" / "data" / "embedding"
SEED = 0
RESAMPLES = 2000
SPEED_ROUNDS = 2
VIEWS = ("fused", "card", "code")
LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "java")


class FileEmbedder(MiniLMEmbedder):
    """The runtime embedder running another ONNX file with the same inputs and outputs.

    ``queries``: another file (a query tower, ``query_tower.py``) that embeds the queries.
    """

    def __init__(self, path: Path, model_id: str, queries: Path | None = None) -> None:
        super().__init__(threads=1)
        self._file = (path, model_id)
        self._queries = FileEmbedder(queries, f"queries:{queries.name}") if queries else None

    def _resolve_model_path(self) -> tuple[Path, str]:
        return self._file

    def embed_query(self, text: str) -> np.ndarray:
        """A query's vector, from the query file when there is one."""
        return self._queries.embed_query(text) if self._queries else super().embed_query(text)


class FolderEmbedder:
    """A Hugging Face folder (``train.py``'s ``best/``, a soup) run by torch, float32, with the runtime's cuts.

    Compares trained weights before any export; needs .venv-train. Vectors are ``train.Encoder``'s, which
    ``export.py`` checks against the exported file's (cosine > 0.999).
    """

    def __init__(self, folder: Path) -> None:
        import torch
        from train import Encoder
        from transformers import AutoModel

        torch.set_num_threads(1)
        self.encoder = Encoder(AutoModel.from_pretrained(str(folder)).float().eval())

    def embed(self, texts: list[str], max_tokens: int | None = None) -> np.ndarray:
        """Unit vectors, cut as the runtime cuts (its 256 word pieces unless ``max_tokens`` says less)."""
        return self.encoder.embed(list(texts), max_tokens or DEFAULT_MAX_TOKENS)

    def embed_query(self, text: str) -> np.ndarray:
        """A query's unit vector."""
        return self.embed([text])[0]


def embedder_of(path: Path, role: str, queries: Path | None = None) -> MiniLMEmbedder | FolderEmbedder:
    """An ONNX file through the runtime's embedder (``queries``: another file for the queries), or a folder."""
    return FolderEmbedder(path) if path.is_dir() else FileEmbedder(path, f"{role}:{path.name}", queries)


def say(line: str) -> None:
    """One line, flushed."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def other_query_positions(queries: list[dict]) -> list[int]:
    """For each query, the position of the next query of its kind (cyclically): whose text it is read with."""
    by_kind: dict[str, list[int]] = defaultdict(list)
    for position, query in enumerate(queries):
        by_kind[query["kind"]].append(position)
    other = list(range(len(queries)))
    for positions in by_kind.values():
        for number, position in enumerate(positions):
            other[position] = positions[(number + 1) % len(positions)]
    return other


def scores_of(embedder: MiniLMEmbedder, packages: list[dict], other_query: bool = False) -> dict[str, dict]:
    """Per package its reciprocal ranks (:func:`package_scores`).

    ``other_query``: each gold sought with another query's text of its kind, which only a ranking that favours some
    chunks whatever is asked still finds.
    """
    out = {}
    for package in packages:
        views = view_texts(package)
        vectors = {"card": embedder.embed(views["card"][1]),
                   "code": embedder.embed(views["code"][1], max_tokens=CODE_VIEW_MAX_TOKENS)}
        queries = np.stack([embedder.embed_query(query["query"]) for query in package["queries"]])
        if other_query:
            queries = queries[other_query_positions(package["queries"])]
        out[package["package"]] = package_scores(package, queries, vectors)
    return out


def speed_sample(packages: list[dict], count: int) -> dict[str, list[str]]:
    """``count`` cards and ``count`` code views drawn with the seed from all packages."""
    rng = random.Random(SEED)
    return {view: rng.sample([text for package in packages for text in view_texts(package)[view][1]], count)
            for view in ("card", "code")}


def texts_per_second(embedders: dict[str, MiniLMEmbedder | FolderEmbedder],
                     sample: dict[str, list[str]]) -> dict[str, dict]:
    """Per model and view, the best of :data:`SPEED_ROUNDS` rounds (models alternating) in texts per second."""
    best: dict[str, dict[str, float]] = defaultdict(dict)
    for _ in range(SPEED_ROUNDS):
        for name, embedder in embedders.items():
            for view, texts in sample.items():
                started = time.perf_counter()
                embedder.embed(texts, max_tokens=CODE_VIEW_MAX_TOKENS if view == "code" else None)
                speed = len(texts) / (time.perf_counter() - started)
                best[name][view] = max(best[name].get(view, 0.0), speed)
    return best


def interval(groups: list[np.ndarray], rng: np.random.Generator) -> tuple[float, float, float]:
    """The mean of the package means and its 95% bootstrap interval (queries resampled within packages)."""
    estimate = float(np.mean([group.mean() for group in groups]))
    draws = np.zeros(RESAMPLES)
    for group in groups:
        draws += group[rng.integers(0, len(group), size=(RESAMPLES, len(group)))].mean(axis=1)
    low, high = np.percentile(draws / len(groups), [2.5, 97.5])
    return estimate, float(low), float(high)


def table(rows: dict[str, list[tuple[dict, dict]]], rng: np.random.Generator) -> list[str]:
    """One line per row label: queries, packages, each model's MRR@10 per view, new - base (fused) with interval.

    ``rows[label]`` holds, per package, the (base, new) reciprocal ranks of the row's queries.
    """
    head = "  ".join(f"{model} {view:<5}" for model in ("base", "new") for view in VIEWS)
    lines = [f"{'':<22} {'n':>5} {'pk':>3}  {head}  new - base (fused) [95%]"]
    for label, groups in rows.items():
        groups = [(base, new) for base, new in groups if len(base["fused"])]
        if not groups:
            continue
        cells = [f"{np.mean([np.mean(pair[m][view]) for pair in groups]):>10.3f}" for m in (0, 1) for view in VIEWS]
        difference = interval([np.array(new["fused"]) - np.array(base["fused"]) for base, new in groups], rng)
        count = sum(len(base["fused"]) for base, _ in groups)
        lines.append(f"{label:<22} {count:>5} {len(groups):>3}  " + "  ".join(cells)
                     + f"  {difference[0]:+.3f} [{difference[1]:+.3f}, {difference[2]:+.3f}]")
    return lines


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=DATA / "model.onnx")
    parser.add_argument("--against", type=Path, help="another ONNX file in the base's place (default: the "
                        "packaged all-MiniLM-L6-v2), e.g. the shipped code model against a new one")
    parser.add_argument("--query-model", type=Path, help="an ONNX file that embeds --model's queries (a query "
                        "tower), its documents staying --model's")
    parser.add_argument("--against-query-model", type=Path, help="the same for --against: two query towers of one "
                        "document model compared")
    parser.add_argument("--max-chunks", type=int, default=1000)
    parser.add_argument("--only", help="comma-separated package names")
    parser.add_argument("--speed-texts", type=int, default=512, help="cards and code views timed per model")
    parser.add_argument("--other-query", action="store_true",
                        help="seek each gold with another query's text of its kind (a prior, not a match, still finds)")
    parser.add_argument("--json", type=Path, help="also write every query's reciprocal ranks here")
    args = parser.parse_args()
    files = sorted((DATA / "eval").glob("*.json"))
    if args.only:
        files = [file for file in files if file.stem in set(args.only.split(","))]
    packages = [trimmed(json.loads(file.read_text()), args.max_chunks, SEED) for file in files]
    say(f"{len(packages)} validation packages, {sum(len(p['chunks']) for p in packages)} chunks, "
        f"{sum(len(p['queries']) for p in packages)} queries")
    embedders = {"base": embedder_of(args.against, "against", args.against_query_model) if args.against else
                 MiniLMEmbedder(threads=1),
                 "new": embedder_of(args.model, "trained", args.query_model)}
    base = scores_of(embedders["base"], packages, args.other_query)
    say(f"base {args.against.name if args.against else MINILM_MODEL_ID} scored")
    new = scores_of(embedders["new"], packages, args.other_query)
    say(f"new {args.model.name} scored")
    # Speed is the runtime's: only ONNX files are timed (torch's float32 eager run says nothing about it).
    onnx = all(isinstance(embedder, MiniLMEmbedder) for embedder in embedders.values())
    speed = texts_per_second(embedders, speed_sample(packages, args.speed_texts)) if onnx else {}
    rng = np.random.default_rng(SEED)
    rows: dict[str, list[tuple[dict, dict]]] = defaultdict(list)
    by_kind: dict[str, list[tuple[dict, dict]]] = defaultdict(list)
    for package in packages:
        name, language = package["package"], package["language"]
        pair = (base[name], new[name])
        rows[f"{language}/{name}"].append(pair)
        rows[f"language {language}"].append(pair)
        rows["all (mean of packages)"].append(pair)
        kinds = np.array(base[name]["kind"])
        for kind in sorted(set(kinds)):
            chosen = np.flatnonzero(kinds == kind)
            by_kind[f"kind {kind}"].append(tuple({view: [scores[view][i] for i in chosen] for view in VIEWS}
                                                 for scores in pair))  # type: ignore[arg-type]
    ordered = {label: rows[label] for label in sorted(rows, key=lambda label: (label.startswith("all"),
                                                                               not label.startswith("language"),
                                                                               label))}
    for line in table(ordered, rng) + table(dict(by_kind), rng):
        say(line)
    for name, views in speed.items():
        say(f"texts/s {name:<4} (1 session, 1 core, {args.speed_texts} texts, best of {SPEED_ROUNDS}): "
            + "  ".join(f"{view} {value:.1f}" for view, value in views.items()))
    if args.json:
        args.json.write_text(json.dumps({"base": base, "new": new, "speed": speed}))


if __name__ == "__main__":
    main()
