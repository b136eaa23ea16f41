#!/usr/bin/env python3
r"""A shipped model's weights back as a Hugging Face folder, read from its ONNX file (``export.py``'s graph).

The shipped file is the only copy of a past run's weights a new checkout has (checkpoints are never committed).
``export.py`` keeps named initialisers for embeddings, biases and layer norms, stores the big ones in float16
behind a Cast, and leaves each linear layer's weight as an unnamed MatMul input, transposed. Those come in the
graph's order, six a layer: query, key, value, attention output, intermediate, output. The folder is the base
model's with these weights in (each the float16 rounding the file holds); the check embeds validation texts with
it in torch and with the file in onnxruntime and requires every cosine above ``export.MIN_COSINE``.

    cd training && ../.venv-train/bin/python embedding/from_onnx.py \
        ../retrievers/dense/data/grepgraph-code-minilm-v1.onnx --out data/embedding/v1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from export import CHECK_TEXTS, MIN_COSINE, check_texts, onnx_vectors  # noqa: E402
from train import MAX_TOKENS, Encoder, base_model_dir, say  # noqa: E402

LINEAR_ORDER = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                "intermediate.dense", "output.dense")
FLOAT16_SUFFIX = "__float16"
PREFIX = "model."


def onnx_weights(path: Path) -> dict[str, np.ndarray]:
    """The file's weights under the model's state-dict names, float32."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    stored = {tensor.name: numpy_helper.to_array(tensor).astype(np.float32) for tensor in graph.initializer}
    cast_from = {node.output[0]: node.input[0] for node in graph.node
                 if node.op_type == "Cast" and node.input[0] in stored}
    weights = {}
    for name, array in stored.items():
        if not name.startswith("onnx::"):
            weights[name.removesuffix(FLOAT16_SUFFIX).removeprefix(PREFIX)] = array
    linear = [cast_from.get(name, name) for node in graph.node if node.op_type == "MatMul"
              for name in node.input if cast_from.get(name, name) in stored]
    if len(linear) % len(LINEAR_ORDER):
        raise SystemExit(f"{path}: {len(linear)} MatMul weights, not {len(LINEAR_ORDER)} a layer")
    for number, name in enumerate(linear):
        layer, part = divmod(number, len(LINEAR_ORDER))
        weights[f"encoder.layer.{layer}.{LINEAR_ORDER[part]}.weight"] = stored[name].T
    return weights


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("onnx", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from transformers import AutoModel

    torch.set_num_threads(1)
    model = AutoModel.from_pretrained(str(base_model_dir()), attn_implementation="eager")
    state = model.state_dict()
    weights = onnx_weights(args.onnx)
    unknown = sorted(set(weights) - set(state))
    missing = sorted(name for name in set(state) - set(weights) if not name.startswith("pooler."))
    if unknown or missing:
        raise SystemExit(f"{args.onnx}: names not in the model {unknown[:3]}, model weights not in the file "
                         f"{missing[:3]}")
    for name, array in weights.items():
        if tuple(state[name].shape) != array.shape:
            raise SystemExit(f"{name}: {array.shape} in the file, {tuple(state[name].shape)} in the model")
        state[name] = torch.from_numpy(array)
    model.load_state_dict(state)
    model.eval()
    encoder = Encoder(model)
    texts = check_texts(CHECK_TEXTS)
    mine = np.concatenate([encoder.embed([text], MAX_TOKENS[kind]) for kind, text in texts])
    cosines = (mine * onnx_vectors(args.onnx, encoder, texts)).sum(axis=1)
    say(f"torch from {args.onnx.name} vs the file on {len(texts)} texts: cosine min {cosines.min():.7f}")
    if cosines.min() <= MIN_COSINE:
        raise SystemExit(f"the weights read back do not give the file's vectors (min cosine {cosines.min():.6f})")
    model.save_pretrained(str(args.out))
    say(f"written {args.out}")


if __name__ == "__main__":
    main()
