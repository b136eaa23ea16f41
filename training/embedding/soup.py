#!/usr/bin/env python3
r"""The weight average of fine-tuned models that share a base ("model soup"), as a Hugging Face folder.

Runs from the same base weights with different batches or negatives stay close enough that their average is a
model too, which can rank better than either at no cost at query time (same architecture, same speed); here the
shipped model and a second run averaged scored as the better of the two (training/README.md, 2026-11-29). Each
folder is a ``train.py`` ``best/`` or a ``from_onnx.py`` read-back of a shipped model; ``--weights`` sets each
one's share (equal by default).

    cd training && ../.venv-train/bin/python embedding/soup.py data/embedding/v1 data/embedding/run2/best \
        --out data/embedding/soup
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from train import say  # noqa: E402


def averaged(states: list[dict[str, torch.Tensor]], shares: list[float]) -> dict[str, torch.Tensor]:
    """Every floating-point weight as the shares' weighted mean; other tensors (position ids) from the first."""
    if any(set(state) != set(states[0]) for state in states):
        raise SystemExit("the models do not have the same weights")
    out = {}
    for name, first in states[0].items():
        if first.is_floating_point():
            out[name] = sum(share * state[name].float() for share, state in zip(shares, states, strict=True))
        else:
            out[name] = first
    return out


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument("--weights", help="comma-separated shares, one a model (normalised to sum to 1)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from transformers import AutoModel

    shares = [float(value) for value in args.weights.split(",")] if args.weights else [1.0] * len(args.models)
    if len(shares) != len(args.models):
        raise SystemExit("one share a model")
    shares = [share / sum(shares) for share in shares]
    models = [AutoModel.from_pretrained(str(folder)) for folder in args.models]
    soup = models[0]
    soup.load_state_dict(averaged([model.state_dict() for model in models], shares))
    soup.save_pretrained(str(args.out))
    (args.out / "soup.json").write_text(json.dumps({"models": [str(folder) for folder in args.models],
                                                    "shares": shares}))
    say(f"written {args.out}: " + ", ".join(f"{share:.2f} {folder}" for share, folder in zip(shares, args.models)))


if __name__ == "__main__":
    main()
