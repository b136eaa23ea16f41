#!/usr/bin/env python3
r"""Export a trained reranker (``train_reranker.py``'s ``best.pt``) to ONNX, and check it.

The file runs through ``reranker_input.CrossEncoder``. The graph takes the pair's ``input_ids``,
``attention_mask``, ``token_type_ids`` (int64, ``[batch, sequence]``) and
the ranking's ``ranking_scores`` (float32, ``[batch]``) and returns each pair's score: the head's logit plus the
learned weight times the log-score, so the runtime holds no number of its own. Weights are stored as float16
(``embedding/export.py``'s storage); ``--quantized`` also writes the dynamically quantized copy by the runtime's
recipe. The check scores validation pools with torch and with each file and prints the largest difference and
how often the first place changes.

    .venv-train/bin/python training/rerank/export_reranker.py --best training/data/rerank/run1/best.pt \\
        --out training/data/rerank/run1/reranker.onnx --quantized training/data/rerank/run1/reranker-dynint8.onnx
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "embedding"))

from export import OPSET, float16_storage  # noqa: E402
from reranker_input import RERANKED, CrossEncoder  # noqa: E402
from train_reranker import POOLS, SEED, Pairs, Reranker, read_pools, say  # noqa: E402

CHECK_POOLS = 60


class Scored(torch.nn.Module):
    """The reranker with the ranking's score as an input: the runtime's whole computation."""

    def __init__(self, model: Reranker) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor,
                ranking_scores: torch.Tensor) -> torch.Tensor:
        """Each pair's score."""
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
        return self.model.scores(feeds, ranking_scores)


def load(best: Path, base: Path) -> Reranker:
    """The kept reranker in float32, eval mode."""
    state = torch.load(best, weights_only=False, map_location="cpu")
    model = Reranker(base, state.get("layers"))
    model.load_state_dict(state["model"])
    return model.float().eval()


def export_graph(model: Reranker, path: Path) -> None:
    """The float32 graph, dynamic in batch and sequence."""
    sample = torch.ones((2, 8), dtype=torch.long)
    inputs = ("input_ids", "attention_mask", "token_type_ids", "ranking_scores")
    dynamic = {name: {0: "batch", 1: "sequence"} for name in inputs[:3]}
    dynamic.update({"ranking_scores": {0: "batch"}, "scores": {0: "batch"}})
    torch.onnx.export(Scored(model), (sample, sample, torch.zeros_like(sample), torch.ones(2)), str(path),
                      input_names=list(inputs), output_names=["scores"], dynamic_axes=dynamic,
                      opset_version=OPSET, dynamo=False)


def check_pools() -> list[dict]:
    """A seeded sample of validation pools with something to reorder."""
    pools = read_pools(POOLS / "pools-validation.jsonl")
    random.Random(SEED).shuffle(pools)
    return [pool for pool in pools if len(pool["candidates"]) >= 2][:CHECK_POOLS]


@torch.no_grad()
def torch_scores(model: Reranker, pools: list[dict]) -> list[np.ndarray]:
    """Torch's scores of each pool's first results (taken before the export: tracing leaves the model off)."""
    pairs = Pairs()
    return [model.scores(pairs.feeds(pool["query"], pool["candidates"][:RERANKED]),
                         pairs.tensor([c["score"] for c in pool["candidates"][:RERANKED]])).numpy()
            for pool in pools]


def check(pools: list[dict], references: list[np.ndarray], files: list[Path]) -> None:
    """Each file's scores against torch's: the largest difference, and how often the first place changes."""
    for path in files:
        encoder = CrossEncoder(path, threads=1)
        largest, moved = 0.0, 0
        for pool, reference in zip(pools, references):
            found = encoder.scores(pool["query"], pool["candidates"][:RERANKED])
            largest = max(largest, float(np.abs(found - reference).max()))
            moved += int(np.argmax(found) != np.argmax(reference))
        say(f"{path.name}: largest score difference {largest:.4f}, first place changed in {moved} of {len(pools)}")


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--best", type=Path, required=True)
    parser.add_argument("--base", type=Path, default=HERE.parent / "data" / "embedding" / "v1")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quantized", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = load(args.best, args.base)
    pools = check_pools()
    references = torch_scores(model, pools)
    export_graph(model, args.out)
    float16_storage(args.out)
    files = [args.out]
    if args.quantized:
        from grepgraph.retrievers.dense.derived_models import quantized_model

        made = quantized_model(args.out, args.quantized.parent / ".quantizing")
        made.replace(args.quantized)
        made.parent.rmdir()
        files.append(args.quantized)
    for path in files:
        say(f"{path}: {path.stat().st_size / 1e6:.1f} MB, sha256 {hashlib.sha256(path.read_bytes()).hexdigest()}")
    check(pools, references, files)


if __name__ == "__main__":
    main()
