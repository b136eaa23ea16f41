#!/usr/bin/env python3
"""Fine-tune the document side of the shipped code model against its query tower's frozen query vectors.

The mirror of ``query_tower.py``. There the document vectors stayed fixed and the query side learned; here each
training query's vector is fixed (the shipped query tower's, as a search embeds it) and the document model learns
to put its gold's card or code view near it, against the batch's other texts and the query's hard negatives
(``pairs.py``; as ``train.py`` draws them). Only the top ``--trainable`` layers learn. The layers below keep the
shipped model's weights, so their output for every text is computed once (``cache``) and a step runs the top
layers alone: on two cores a few times cheaper than a whole-model step, so an epoch of the mined pairs fits in a
CPU session. What it answers: whether the document side gains more, with a longer schedule, than the whole-model
CPU runs found (training/README.md).

    .venv-train/bin/python training/embedding/document_tower.py queries   # the tower's vectors of the queries
    .venv-train/bin/python training/embedding/document_tower.py cache     # the lower layers' output of every text
    .venv-train/bin/python training/embedding/document_tower.py train     # data/embedding/doctower/best/
    .venv-train/bin/python training/embedding/document_tower.py train --resume
    .venv-train/bin/python training/embedding/export.py --best training/data/embedding/doctower/best \
        --out training/data/embedding/doctower/model.onnx \
        --quantized training/data/embedding/doctower/model-dynint8.onnx

The cache holds each text's hidden states after the frozen layers in float16 (a memory map, ~1.5 kB a word
piece); texts are cut as ``train.py`` cuts them. The training log holds the loss and, every ``--eval-every``
steps, vectors-only MRR@10 on the six validation packages ``train.py`` watches (at most
:data:`EVAL_MAX_CHUNKS` chunks each), the queries embedded by the shipped tower; the best is kept as ``best/``, a
whole model folder ``export.py`` reads.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from query_tower import (  # noqa: E402 - the same data, seed, temperature, views and validation cut
    DATA,
    EVAL_MAX_CHUNKS,
    SEED,
    TEMPERATURE,
    VIEWS,
    gathered_texts,
    read_pairs,
    say,
)
from ranking import package_scores, trimmed, view_texts  # noqa: E402

WORK = DATA / "doctower"
BATCH = 32
NEGATIVES = 3


def chosen_pairs(args: argparse.Namespace) -> tuple[list[int], list[dict]]:
    """The training lines, or a seeded sample of ``--max-queries`` of them, with their line numbers.

    The cache and training take the same lines; a line's number is its row in ``queries.npz``.
    """
    pairs = read_pairs(args.pairs)
    numbers = list(range(len(pairs)))
    if args.max_queries and args.max_queries < len(pairs):
        random.Random(SEED).shuffle(numbers)
        numbers = sorted(numbers[: args.max_queries])
    return numbers, [pairs[number] for number in numbers]


def watched_packages(folder: Path) -> dict[str, dict]:
    """The validation packages the training log watches (``train.EVAL_PACKAGES``), cut as the tables cut them."""
    from train import EVAL_PACKAGES

    return {name: trimmed(json.loads((folder / f"{name}.json").read_text()), EVAL_MAX_CHUNKS, SEED)
            for name in EVAL_PACKAGES if (folder / f"{name}.json").exists()}


def all_texts(pairs: list[dict], packages: dict[str, dict]) -> dict[str, list[str]]:
    """Per view, the training texts (in ``gathered_texts`` row order), then the watched packages' chunk texts."""
    rows = gathered_texts(pairs)
    out = {view: list(rows[view]) for view in VIEWS}
    for package in packages.values():
        for view, (_, texts) in view_texts(package).items():
            for text in texts:
                if text not in rows[view]:
                    rows[view][text] = len(rows[view])
                    out[view].append(text)
    return out


def embed_queries(args: argparse.Namespace) -> None:
    """The shipped query tower's vectors of every training query and every watched package's queries."""
    from evaluate_vectors import FileEmbedder
    from grepgraph.retrievers.dense.minilm import CODE_MINILM_QUERY_MODEL_ID
    from grepgraph.retrievers.dense.model_files import code_query_model_file

    tower = FileEmbedder(code_query_model_file(), CODE_MINILM_QUERY_MODEL_ID)
    started = time.perf_counter()
    out = {"train": tower.embed([pair["query"] for pair in read_pairs(args.pairs)])}
    for name, package in watched_packages(args.eval_dir).items():
        out[f"eval/{name}"] = tower.embed([query["query"] for query in package["queries"]])
    args.work.mkdir(parents=True, exist_ok=True)
    np.savez(args.work / "queries.npz", model=np.array(CODE_MINILM_QUERY_MODEL_ID), **out)
    say(f"{len(out['train'])} training queries embedded ({time.perf_counter() - started:.0f} s)")


class Layers:
    """The shipped model split at ``frozen`` layers: the lower part run once per text, the upper part trained."""

    def __init__(self, base: Path, trainable: int) -> None:  # noqa: D107
        import torch
        from train import bfloat16_pays
        from transformers import AutoModel

        self.bfloat16 = bfloat16_pays()
        self.model = AutoModel.from_pretrained(str(base), dtype=torch.float32, attn_implementation="eager")
        self.frozen = len(self.model.encoder.layer) - trainable
        self.width = self.model.config.hidden_size
        for parameter in self.model.parameters():
            parameter.requires_grad = False
        self.top = self.model.encoder.layer[self.frozen :]
        for parameter in self.top.parameters():
            parameter.requires_grad = True

    @staticmethod
    def additive_mask(lengths: list[int], width: int):  # noqa: ANN205 - torch types
        """The attention mask eager attention adds to its scores: 0 on word pieces, the float minimum on padding."""
        import torch

        keep = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]
        return torch.where(keep, 0.0, torch.finfo(torch.float32).min)[:, None, None, :]

    def run(self, layers, hidden, lengths: list[int]):  # noqa: ANN001, ANN201 - torch types
        """``hidden`` through ``layers`` (padded to the longest of ``lengths``)."""
        mask = self.additive_mask(lengths, hidden.shape[1])
        for layer in layers:
            output = layer(hidden, attention_mask=mask)
            hidden = output[0] if isinstance(output, tuple) else output
        return hidden

    def lower(self, ids: list[list[int]]):  # noqa: ANN201 - torch types
        """The frozen layers' output of a batch of word-piece ids (padded)."""
        import torch

        width = max(len(row) for row in ids)
        input_ids = torch.zeros((len(ids), width), dtype=torch.long)
        for row, values in enumerate(ids):
            input_ids[row, : len(values)] = torch.tensor(values)
        hidden = self.model.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids))
        return self.run(self.model.encoder.layer[: self.frozen], hidden, [len(row) for row in ids])

    def vectors(self, hidden, lengths: list[int]):  # noqa: ANN001, ANN201 - torch types
        """Unit vectors from cached lower-layer states: the top layers, mean pooling over the word pieces."""
        import torch
        from train import mean_pooled

        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bfloat16 and self.top.training):
            top = self.run(self.top, hidden, lengths).float()
        keep = (torch.arange(top.shape[1])[None, :] < torch.tensor(lengths)[:, None]).float()[..., None]
        return mean_pooled(top, keep)


class Cache:
    """Lower-layer states of every text of one view: a float16 memory map and each text's offset and length."""

    def __init__(self, folder: Path, view: str) -> None:  # noqa: D107
        self.offsets = np.load(folder / f"{view}-offsets.npy")
        self.width = json.loads((folder / "frozen.json").read_text())["width"]
        self.states = np.memmap(folder / f"{view}.f16", dtype=np.float16, mode="r",
                                shape=(int(self.offsets[-1]), self.width))

    def batch(self, rows: list[int]):  # noqa: ANN201 - torch types
        """The texts' states padded to the longest, as float32, and their lengths."""
        import torch

        lengths = [int(self.offsets[row + 1] - self.offsets[row]) for row in rows]
        out = torch.zeros((len(rows), max(lengths), self.width))
        for number, row in enumerate(rows):
            out[number, : lengths[number]] = torch.from_numpy(
                np.asarray(self.states[self.offsets[row] : self.offsets[row + 1]], dtype=np.float32))
        return out, lengths


def build_cache(args: argparse.Namespace) -> None:
    """Every text's frozen-layer states, in length-sorted batches (bfloat16 products, float16 storage)."""
    import torch
    from tokenizers import Tokenizer
    from train import MAX_TOKENS, TOKENIZER

    torch.set_num_threads(args.threads)
    layers = Layers(args.base, args.trainable)
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()
    texts = all_texts(chosen_pairs(args)[1], watched_packages(args.eval_dir))
    folder = args.work / "cache"
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for view in VIEWS:
        tokenizer.enable_truncation(max_length=MAX_TOKENS[view])
        ids = [encoding.ids for encoding in tokenizer.encode_batch(texts[view], add_special_tokens=True)]
        offsets = np.concatenate([[0], np.cumsum([len(row) for row in ids])]).astype(np.int64)
        states = np.memmap(folder / f"{view}.f16", dtype=np.float16, mode="w+",
                           shape=(int(offsets[-1]), layers.width))
        order = sorted(range(len(ids)), key=lambda row: len(ids[row]))
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=layers.bfloat16):
            for start in range(0, len(order), args.cache_batch):
                chosen = order[start : start + args.cache_batch]
                hidden = layers.lower([ids[row] for row in chosen]).float().numpy()
                for number, row in enumerate(chosen):
                    states[offsets[row] : offsets[row + 1]] = hidden[number, : len(ids[row])]
                if start // args.cache_batch % 200 == 0:
                    say(f"{view}: {start + len(chosen)}/{len(order)} texts ({time.perf_counter() - started:.0f} s)")
        states.flush()
        np.save(folder / f"{view}-offsets.npy", offsets)
        say(f"{view}: {len(ids)} texts, {int(offsets[-1])} word pieces ({time.perf_counter() - started:.0f} s)")
    (folder / "frozen.json").write_text(json.dumps({"base": str(args.base), "trainable": args.trainable,
                                                    "frozen_layers": layers.frozen, "width": layers.width}))


def epoch_batches(pairs: list[dict], rows: dict[str, dict[str, int]], epoch: int,
                  size: int, negatives: int) -> list[list[tuple[int, str, int, list[int]]]]:
    """The epoch's batches of ``(query number, view, gold row, hard negative rows)``, drawn by the seed."""
    rng = random.Random(f"{SEED}-{epoch}")
    order = [number for number, pair in enumerate(pairs) if pair["negative_cards"] and pair["negative_codes"]]
    rng.shuffle(order)
    out = []
    for number in order:
        pair = pairs[number]
        view = rng.choice(VIEWS)
        mined = pair[f"negative_{view}s"]
        chosen = rng.sample(mined, min(negatives, len(mined)))
        out.append((number, view, rows[view][pair[view]], [rows[view][text] for text in chosen]))
    return [out[start : start + size] for start in range(0, len(out) - size + 1, size)]


def batch_loss(layers: Layers, caches: dict[str, Cache], queries: np.ndarray, batch: list):  # noqa: ANN201
    """Cross-entropy of each frozen query vector over the batch's golds and hard negatives.

    A copy of a query's own gold elsewhere in the batch is not counted against it.
    """
    import torch

    keys = [(view, gold) for _, view, gold, _ in batch]
    keys += [(view, row) for _, view, _, negatives in batch for row in negatives]
    documents = torch.zeros((len(keys), layers.width))
    for view in VIEWS:
        places = [place for place, key in enumerate(keys) if key[0] == view]
        if places:
            hidden, lengths = caches[view].batch([keys[place][1] for place in places])
            documents[places] = layers.vectors(hidden, lengths)
    vectors = torch.from_numpy(queries[[number for number, _, _, _ in batch]].astype(np.float32))
    scores = vectors @ documents.T / TEMPERATURE
    own = torch.tensor([[key == keys[number] and column != number for column, key in enumerate(keys)]
                        for number in range(len(batch))])
    scores = scores.masked_fill(own, float("-inf"))
    return torch.nn.functional.cross_entropy(scores, torch.arange(len(batch)))


def validation_mrr(layers: Layers, caches: dict[str, Cache], packages: dict[str, dict],
                   rows: dict[str, dict[str, int]], queries: np.lib.npyio.NpzFile) -> dict[str, float]:
    """Vectors-only MRR@10 per watched package (fused views), documents through the current top layers."""
    import torch
    from train import EVAL_BATCH

    layers.top.eval()
    result = {}
    with torch.no_grad():
        for name, package in packages.items():
            views = {}
            for view, (_, texts) in view_texts(package).items():
                wanted = [rows[view][text] for text in texts]
                parts = []
                for start in range(0, len(wanted), EVAL_BATCH):
                    hidden, lengths = caches[view].batch(wanted[start : start + EVAL_BATCH])
                    parts.append(layers.vectors(hidden, lengths).numpy())
                views[view] = np.concatenate(parts)
            result[name] = float(np.mean(package_scores(package, queries[f"eval/{name}"], views)["fused"]))
    layers.top.train()
    return result


def train(args: argparse.Namespace) -> Layers:
    """The top layers trained on the cached states, with checkpoints, a log and the best kept; the model at the end."""
    import torch
    from train import Schedule, resumed, run_schedule

    torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    lines, pairs = chosen_pairs(args)
    packages = watched_packages(args.eval_dir)
    texts = all_texts(pairs, packages)
    rows = {view: {text: row for row, text in enumerate(texts[view])} for view in VIEWS}
    made = json.loads((args.work / "cache" / "frozen.json").read_text())
    layers = Layers(args.base, made["trainable"])
    caches = {view: Cache(args.work / "cache", view) for view in VIEWS}
    queries = np.load(args.work / "queries.npz")
    training_queries = queries["train"][lines]  # an npz member is read again on every access: once, here
    batches = [batch for epoch in range(args.epochs)
               for batch in epoch_batches(pairs, rows, epoch, args.batch, args.negatives)]
    total = len(batches)
    optimiser = torch.optim.AdamW(layers.top.parameters(), lr=args.learning_rate, weight_decay=0.01)
    step, best = resumed(args.work / "checkpoints", layers.top, optimiser) if args.resume else (0, -1.0)
    say(f"{len(pairs)} queries, {total} steps of {args.batch} (+{args.negatives} hard negatives each); "
        f"layers {layers.frozen}-{layers.frozen + made['trainable'] - 1} trained")

    def evaluate(at: int) -> tuple[float, dict]:
        scores = validation_mrr(layers, caches, packages, rows, queries)
        watched = float(np.mean(list(scores.values())))
        say(f"step {at} MRR@10 watched {watched:.4f} " + " ".join(f"{k} {v:.3f}" for k, v in scores.items()))
        return watched, {"step": at, "watched": watched, "packages": scores}

    with open(args.work / "train_log.jsonl", "a", encoding="utf-8") as log:
        schedule = Schedule(layers.top, layers.model, optimiser, total, args.learning_rate, args.work, log,
                            args.eval_every, args.checkpoint_every, args.max_steps)
        run_schedule(schedule, lambda at: batch_loss(layers, caches, training_queries, batches[at]), evaluate,
                     step, best)
    return layers


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=("queries", "cache", "train"))
    parser.add_argument("--pairs", type=Path, default=DATA / "pairs_train.jsonl")
    parser.add_argument("--eval-dir", type=Path, default=DATA / "eval")
    parser.add_argument("--work", type=Path, default=WORK, help="queries.npz, cache/, checkpoints/, best/, the log")
    parser.add_argument("--base", type=Path, default=DATA / "v1",
                        help="the shipped model's weights as a folder (from_onnx.py makes it from the file)")
    parser.add_argument("--trainable", type=int, default=2, help="cache: how many of the top layers will learn")
    parser.add_argument("--cache-batch", type=int, default=64)
    parser.add_argument("--max-queries", type=int, help="a seeded sample of the training lines (cache and train)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--negatives", type=int, default=NEGATIVES, help="hard negatives a query (of the 3 mined)")
    parser.add_argument("--learning-rate", type=float, default=4e-5)
    parser.add_argument("--eval-every", type=int, default=200)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    {"queries": embed_queries, "cache": build_cache, "train": train}[args.stage](args)  # type: ignore[operator]


if __name__ == "__main__":
    main()
