#!/usr/bin/env python3
"""A smaller document model: some of the shipped code model's layers, distilled to put texts where it puts them.

Indexing time is the document model's (issue #24 asks for a first index of ~10k chunks within 120 s on 2 cores).
A student keeps every other layer of the shipped model (``--layers``) and learns to reproduce the shipped model's
vector of each training text (its card and its code view, as ``query_tower.py documents`` embedded them), the
loss being one minus their cosine. Its vectors stay in the shipped model's space, so the query tower and the
learned blend's weights keep their meaning; ``evaluate_vectors.py`` then ranks the validation packages with the
student's documents and the shipped tower's queries against the shipped model's documents.

    .venv-train/bin/python training/embedding/student.py --work training/data/embedding/student3   # ~25 min
    .venv-train/bin/python training/embedding/export.py --best training/data/embedding/student3/best \
        --out training/data/embedding/student3/model.onnx --quantized training/data/embedding/student3/dynint8.onnx

The log (``WORK/train_log.jsonl``) holds the loss and, every ``--eval-every`` steps, the mean cosine between the
student's and the shipped model's vectors of the validation chunks (never trained on), per view.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from query_tower import gathered_texts, read_pairs, validation_packages  # noqa: E402
from ranking import view_texts  # noqa: E402
from train import DATA, SEED, Encoder, Schedule, bfloat16_pays, run_schedule, say  # noqa: E402

# The runtime's cuts (dense/sync.py): a card at the embedder's 256 word pieces, a code view at 128.
MAX_TOKENS = {"card": 256, "code": 128}
VIEWS = tuple(MAX_TOKENS)


def student_of(base: Path, layers: list[int]) -> torch.nn.Module:
    """The base model with only ``layers`` of its transformer layers, in order."""
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(base), dtype=torch.float32)
    model.encoder.layer = torch.nn.ModuleList(model.encoder.layer[i] for i in layers)
    model.config.num_hidden_layers = len(layers)
    return model


def training_texts(pairs: Path, documents: np.lib.npyio.NpzFile, per_view: int) -> list[tuple[str, str, np.ndarray]]:
    """A seeded sample of ``per_view`` training texts of each view with the shipped model's vector of each."""
    texts = []
    for view, rows in gathered_texts(read_pairs(pairs)).items():
        teacher = documents[f"train/{view}"]
        chosen = list(rows.items())
        random.Random(f"{SEED}-{view}").shuffle(chosen)
        texts += [(view, text, teacher[row]) for text, row in chosen[:per_view]]
    return texts


def batches_of(texts: list[tuple[str, str, np.ndarray]], size: int, epoch: int) -> list[list]:
    """Batches of one view each (texts of one view are of like length), shuffled per epoch."""
    by_view: dict[str, list] = {view: [t for t in texts if t[0] == view] for view in VIEWS}
    batches = []
    for view, group in by_view.items():
        group = group[:]
        random.Random(f"{SEED}-{epoch}-{view}").shuffle(group)
        batches += [group[start : start + size] for start in range(0, len(group), size)]
    random.Random(f"{SEED}-{epoch}").shuffle(batches)
    return batches


def distillation_loss(encoder: Encoder, batch: list[tuple[str, str, np.ndarray]]) -> torch.Tensor:
    """One minus the cosine of the student's vector of each text to the shipped model's, over a batch of one view."""
    view = batch[0][0]
    student = encoder.vectors([text for _, text, _ in batch], MAX_TOKENS[view])
    teacher = torch.from_numpy(np.stack([vector for _, _, vector in batch])).float()
    return (1.0 - (student * teacher).sum(dim=1)).mean()


def agreement(encoder: Encoder, packages: dict[str, dict], documents: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Mean cosine of the student's and the shipped model's vectors of the validation chunks, per view."""
    encoder.model.eval()
    cosines: dict[str, list[float]] = {view: [] for view in VIEWS}
    for name, package in packages.items():
        for view, (_, texts) in view_texts(package).items():
            student = encoder.embed(texts, MAX_TOKENS[view])
            cosines[view] += list((student * documents[f"eval/{name}/{view}"]).sum(axis=1))
    encoder.model.train()
    return {view: float(np.mean(values)) for view, values in cosines.items()}


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True, help="best/, the log")
    parser.add_argument("--base", type=Path, default=DATA / "v1", help="the shipped model's weights as a folder")
    parser.add_argument("--documents", type=Path, default=DATA / "tower" / "documents.npz",
                        help="the shipped model's vectors of the training texts (query_tower.py documents)")
    parser.add_argument("--pairs", type=Path, default=DATA / "pairs_train.jsonl", help="the pairs they came from")
    parser.add_argument("--eval-dir", type=Path, default=DATA / "eval")
    parser.add_argument("--layers", default="1,3,5", help="the base's layers the student keeps (of 0-5)")
    parser.add_argument("--texts", type=int, default=12_000, help="training texts per view")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--eval-packages", type=int, default=6, help="validation packages the log measures")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    documents = np.load(args.documents)
    texts = training_texts(args.pairs, documents, args.texts)
    packages = dict(list(validation_packages(args.eval_dir).items())[: args.eval_packages])
    eval_vectors = {key: documents[key] for key in documents.files
                    if key.startswith("eval/") and key.split("/")[1] in packages}
    batches = [batch for epoch in range(args.epochs) for batch in batches_of(texts, args.batch, epoch)]
    model = student_of(args.base, [int(i) for i in args.layers.split(",")])
    encoder = Encoder(model, bfloat16=bfloat16_pays())
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.01)
    args.work.mkdir(parents=True, exist_ok=True)

    def evaluate(step: int) -> tuple[float, dict]:
        agreed = agreement(encoder, packages, eval_vectors)
        say(f"step {step} validation cosine to the shipped model: "
            + ", ".join(f"{view} {cosine:.4f}" for view, cosine in agreed.items()))
        return float(np.mean(list(agreed.values()))), {"step": step, "agreement": agreed}

    with open(args.work / "train_log.jsonl", "a", encoding="utf-8") as log:
        schedule = Schedule(model, model, optimiser, len(batches), args.learning_rate, args.work, log, args.eval_every)
        run_schedule(schedule, lambda at: distillation_loss(encoder, batches[at]), evaluate)


if __name__ == "__main__":
    main()
