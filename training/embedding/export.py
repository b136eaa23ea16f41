#!/usr/bin/env python3
"""Export the trained model (``data/embedding/best/``) to ONNX for the runtime the index uses, and check it.

The graph takes what the packaged MiniLM takes (``input_ids``, ``attention_mask``, ``token_type_ids``, int64,
``[batch, sequence]``) and returns ``last_hidden_state`` (``[batch, sequence, 384]``), so ``minilm.py``'s
session, pooling and tokenizer run it unchanged. Exported with the legacy TorchScript exporter (the dynamo one
needs onnxscript) and eager attention (plain MatMul/Softmax, which onnxruntime fuses). Weights are stored as
float16 with a Cast to float32 after each, as the packaged model stores int8 and casts: onnxruntime folds the
casts when it loads the graph, so every product still runs in float32 and the file is half the size.

The check embeds validation texts (queries, cards, code views) with torch (float32) and with the file through
onnxruntime (single core, the runtime's session options) and requires every cosine above :data:`MIN_COSINE`.

    .venv-train/bin/python training/embedding/export.py                       # best/ -> data/embedding/model.onnx
    .venv-train/bin/python training/embedding/export.py --out /tmp/m.onnx --checkpoint path/step_000300.pt
    .venv-train/bin/python training/embedding/export.py --best data/embedding/tower/best \
        --out data/embedding/query.onnx \
        --quantized retrievers/dense/data/grepgraph-code-minilm-v1-query-dynint8.onnx   # the query tower, shipped

``--quantized`` also writes the file's dynamically quantized copy by the runtime's own recipe
(``dense/derived_models.py``, as the shipped quantized model was made): the same file byte for byte on every run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from train import DATA, MAX_TOKENS, Encoder, base_model_dir, say  # noqa: E402

OPSET = 17
MIN_COSINE = 0.999
# Initialisers smaller than this stay float32 (biases, layer norms: a few kB in all, and their precision is cheap).
FLOAT16_MIN_ELEMENTS = 4096
CHECK_TEXTS = 300


class HiddenStates(torch.nn.Module):
    """The transformer with the packaged model's signature: ids, mask, token types -> last hidden state."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> torch.Tensor:
        """The last hidden state."""
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state


def load_model(checkpoint: Path | None, best: Path = DATA / "best") -> torch.nn.Module:
    """``best`` (or a training checkpoint's weights) in float32, eager attention, in eval mode."""
    from transformers import AutoModel

    if checkpoint is None:
        model = AutoModel.from_pretrained(str(best), attn_implementation="eager")
    else:
        model = AutoModel.from_pretrained(str(base_model_dir()), attn_implementation="eager")
        model.load_state_dict(torch.load(checkpoint, weights_only=False)["model"])
    return model.float().eval()


def export_graph(model: torch.nn.Module, path: Path) -> None:
    """The float32 graph, dynamic in batch and sequence."""
    sample = torch.ones((2, 8), dtype=torch.long)
    names = ("input_ids", "attention_mask", "token_type_ids", "last_hidden_state")
    dynamic = {name: {0: "batch", 1: "sequence"} for name in names}
    torch.onnx.export(HiddenStates(model), (sample, sample, torch.zeros_like(sample)), str(path),
                      input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["last_hidden_state"], dynamic_axes=dynamic, opset_version=OPSET, dynamo=False)


def float16_storage(path: Path) -> None:
    """Store the large float32 initialisers as float16, each followed by a Cast back to float32 (in place)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph_model = onnx.load(str(path))
    graph = graph_model.graph
    kept, casts = [], []
    for tensor in graph.initializer:
        values = numpy_helper.to_array(tensor)
        if tensor.data_type != TensorProto.FLOAT or values.size < FLOAT16_MIN_ELEMENTS:
            kept.append(tensor)
            continue
        kept.append(numpy_helper.from_array(values.astype(np.float16), f"{tensor.name}__float16"))
        casts.append(helper.make_node("Cast", [f"{tensor.name}__float16"], [tensor.name], to=TensorProto.FLOAT,
                                      name=f"{tensor.name}__to_float32"))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(casts + nodes)
    onnx.checker.check_model(graph_model)
    onnx.save(graph_model, str(path))


def check_texts(count: int) -> list[tuple[str, str]]:
    """``(kind, text)`` of validation queries, cards and code views (a package never trained on)."""
    texts: list[tuple[str, str]] = []
    for file in sorted((DATA / "eval").glob("*.json"))[:6]:
        package = json.loads(file.read_text())
        texts += [("query", query["query"]) for query in package["queries"][:20]]
        texts += [(view, chunk[view]) for chunk in package["chunks"][:15] for view in ("card", "code")]
    return texts[:count]


def onnx_vectors(path: Path, encoder: Encoder, texts: list[tuple[str, str]]) -> np.ndarray:
    """Vectors of the texts through onnxruntime, pooled and normalised as ``minilm.py`` does."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    out = []
    for kind, text in texts:
        feeds = {name: tensor.numpy() for name, tensor in encoder.batch([text], MAX_TOKENS[kind]).items()}
        feeds["token_type_ids"] = np.zeros_like(feeds["input_ids"])
        hidden = session.run(None, feeds)[0]
        weights = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        out.append(pooled[0] / np.linalg.norm(pooled[0]))
    return np.stack(out)


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, help="a training checkpoint instead of best/")
    parser.add_argument("--best", type=Path, default=DATA / "best", help="the kept model's folder (train.py --work)")
    parser.add_argument("--out", type=Path, default=DATA / "model.onnx")
    parser.add_argument("--quantized", type=Path, help="also write the exported file's quantized copy here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = load_model(args.checkpoint, args.best)
    encoder = Encoder(model)
    texts = check_texts(CHECK_TEXTS)
    # Before the export: the model's vectors after tracing it were off (cosine ~0.9 to its own file's).
    reference = np.concatenate([encoder.embed([text], MAX_TOKENS[kind]) for kind, text in texts])
    export_graph(model, args.out)
    float16_storage(args.out)
    exported = onnx_vectors(args.out, encoder, texts)
    cosines = (reference * exported).sum(axis=1)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    say(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB, sha256 {digest}")
    say(f"torch vs onnx on {len(texts)} texts: cosine min {cosines.min():.7f} mean {cosines.mean():.7f}")
    if cosines.min() <= MIN_COSINE:
        raise SystemExit(f"the exported vectors differ from torch's (min cosine {cosines.min():.6f})")
    if args.quantized:
        from grepgraph.retrievers.dense.derived_models import quantized_model

        made = quantized_model(args.out, args.quantized.parent / ".quantizing")
        made.replace(args.quantized)
        made.parent.rmdir()
        digest = hashlib.sha256(args.quantized.read_bytes()).hexdigest()
        say(f"{args.quantized}: {args.quantized.stat().st_size / 1e6:.1f} MB, sha256 {digest}")


if __name__ == "__main__":
    main()
