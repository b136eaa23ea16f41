#!/usr/bin/env python3
"""Fine-tune the query side of the shipped code model against its own, frozen, document vectors.

An index stores the card and code vectors of every chunk; a new document model means embedding every repository
again. A query tower changes only how a query is embedded: it starts from the shipped model and learns to put
each training query near the vectors the shipped model already gave its gold definition. Every index made with
the shipped model keeps its vectors, and the tower is trained on the CPU in minutes, since only short queries pass
through the network (the documents' vectors are computed once).

Each query is scored against every text ``pairs.py`` gathered from its package (the golds and hard negatives of
all its queries: hundreds to a few thousand a view), one softmax per view (card, code) on cosine /
:data:`TEMPERATURE`, the gold the target: the ranking a search does within one repository, not a batch's.

    .venv-train/bin/python training/embedding/query_tower.py documents   # the frozen vectors (~10 min, 2 cores)
    .venv-train/bin/python training/embedding/query_tower.py documents --reuse OLD/documents.npz OLD/pairs.jsonl
                                                                         # only the texts OLD lacks are embedded
    .venv-train/bin/python training/embedding/query_tower.py train       # data/embedding/tower/best/ (~28 min)
    .venv-train/bin/python training/embedding/query_tower.py train --resume
    .venv-train/bin/python training/embedding/export.py --best data/embedding/tower/best \
        --out data/embedding/query.onnx --quantized retrievers/dense/data/grepgraph-code-minilm-v1-query-dynint8.onnx

The defaults are the shipped tower's recipe (2 epochs of 64 queries a step, peak learning rate 4e-5: 920 steps);
``--base`` is the shipped model's weights as a folder, which ``from_onnx.py`` reads back from its file.

``documents`` embeds through the runtime's embedder and the shipped file (``retrievers/dense/data``), exactly as
an index embeds: cards at its 256 word pieces, code views at 128. The training log holds the loss and, every
``--eval-every`` steps, vectors-only MRR@10 on the 28 validation packages (at most :data:`EVAL_MAX_CHUNKS` chunks
each) with the shipped document vectors; the best by the six packages ``train.py`` watches is kept as ``best/``.
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

from ranking import package_scores, trimmed, view_texts  # noqa: E402

DATA = ROOT / "training" / "data" / "embedding"
WORK = DATA / "tower"
SEED = 0
BATCH = 64
TEMPERATURE = 0.05
# As evaluate_vectors.py's tables in training/README.md: the golds and a seeded sample of the rest.
EVAL_MAX_CHUNKS = 600
VIEWS = ("card", "code")


def say(line: str) -> None:
    """One line of progress, flushed (the run goes to a log in the background)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def read_pairs(path: Path) -> list[dict]:
    """The training lines ``pairs.py`` wrote."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def pair_texts(pair: dict, view: str) -> tuple[str, ...]:
    """A training line's texts of one view: its gold's, then its hard negatives'."""
    return (pair[view], *pair[f"negative_{view}s"])


def gathered_texts(pairs: list[dict]) -> dict[str, dict[str, int]]:
    """Per view, every text of the training lines (golds and negatives) with its row, in first-seen order."""
    rows: dict[str, dict[str, int]] = {view: {} for view in VIEWS}
    for pair in pairs:
        for view in VIEWS:
            for text in pair_texts(pair, view):
                rows[view].setdefault(text, len(rows[view]))
    return rows


def validation_packages(folder: Path) -> dict[str, dict]:
    """The validation packages' sets, each cut to :data:`EVAL_MAX_CHUNKS` as the tables cut them."""
    return {file.stem: trimmed(json.loads(file.read_text()), EVAL_MAX_CHUNKS, SEED)
            for file in sorted(folder.glob("*.json"))}


def embed_documents(args: argparse.Namespace) -> None:
    """The shipped model's vectors of every training text and every validation chunk, in one ``.npz``."""
    from grepgraph.retrievers.dense.minilm import MiniLMEmbedder
    from grepgraph.retrievers.dense.sync import CODE_VIEW_MAX_TOKENS

    embedder = MiniLMEmbedder(threads=args.threads, code=True)
    cut = {"card": None, "code": CODE_VIEW_MAX_TOKENS}
    out: dict[str, np.ndarray] = {}
    started = time.perf_counter()
    for name, package in validation_packages(args.eval_dir).items():
        for view, (_, texts) in view_texts(package).items():
            out[f"eval/{name}/{view}"] = embedder.embed(texts, max_tokens=cut[view])
    say(f"validation chunks embedded ({time.perf_counter() - started:.0f} s)")
    known = reusable_vectors(args.reuse, embedder.model_id) if args.reuse else {view: {} for view in VIEWS}
    for view, rows in gathered_texts(read_pairs(args.pairs)).items():
        texts = list(rows)
        new = [text for text in texts if text not in known[view]]
        fresh = dict(zip(new, embedder.embed(new, max_tokens=cut[view]))) if new else {}
        out[f"train/{view}"] = np.stack([fresh[text] if text in fresh else known[view][text] for text in texts])
        say(f"{len(texts)} training {view}s, {len(new)} embedded ({time.perf_counter() - started:.0f} s)")
    args.work.mkdir(parents=True, exist_ok=True)
    np.savez(args.work / "documents.npz", model=np.array(embedder.model_id), **out)


def reusable_vectors(reuse: list[Path], model_id: str) -> dict[str, dict[str, np.ndarray]]:
    """Per view, each training text an earlier ``documents.npz`` holds, mapped to its vector.

    ``reuse``: that file, then the pairs it was made from. A text's vector depends on the text and the model only,
    so only the texts it lacks need embedding.
    """
    documents, pairs = reuse
    earlier = np.load(documents)
    if str(earlier["model"]) != model_id:
        raise SystemExit(f"{documents} holds vectors of {earlier['model']}, not of {model_id}")
    rows = gathered_texts(read_pairs(pairs))
    out = {}
    for view in VIEWS:
        vectors = earlier[f"train/{view}"]  # an npz member is read again on every access: once, here
        out[view] = {text: vectors[row] for text, row in rows[view].items()}
    return out


class Tower:
    """The training queries, their packages' frozen document vectors, and the loss of a batch."""

    def __init__(self, pairs: list[dict], documents: np.lib.npyio.NpzFile) -> None:  # noqa: D107
        import torch

        rows = gathered_texts(pairs)
        self.vectors = {view: torch.from_numpy(documents[f"train/{view}"]) for view in VIEWS}
        members: dict[str, dict[str, set[int]]] = defaultdict(lambda: {view: set() for view in VIEWS})
        self.queries: list[tuple[str, str, dict[str, int]]] = []
        for pair in pairs:
            for view in VIEWS:
                members[pair["package"]][view].update(rows[view][text] for text in pair_texts(pair, view))
            self.queries.append((pair["query"], pair["package"], {view: rows[view][pair[view]] for view in VIEWS}))
        self.members = {package: {view: torch.tensor(sorted(found[view])) for view in VIEWS}
                        for package, found in members.items()}

    def batches(self, epochs: int, size: int) -> list[list[int]]:
        """Query numbers a step, each epoch in its own seeded order."""
        out = []
        for epoch in range(epochs):
            order = list(range(len(self.queries)))
            random.Random(f"{SEED}-{epoch}").shuffle(order)
            out += [order[start : start + size] for start in range(0, len(order) - size + 1, size)]
        return out

    def loss(self, encoder, batch: list[int], max_tokens: int):  # noqa: ANN001, ANN201 - torch types
        """Mean over the batch and both views of the cross-entropy of the gold among its package's texts."""
        import torch

        queries = encoder.vectors([self.queries[number][0] for number in batch], max_tokens)
        total = queries.new_zeros(())
        for row, number in enumerate(batch):
            _, package, gold = self.queries[number]
            for view in VIEWS:
                members = self.members[package][view]
                scores = self.vectors[view][members] @ queries[row] / TEMPERATURE
                target = torch.nonzero(members == gold[view])[0]
                total = total + torch.nn.functional.cross_entropy(scores[None], target)
        return total / (len(batch) * len(VIEWS))


def validation_mrr(encoder, packages: dict[str, dict], documents: np.lib.npyio.NpzFile,  # noqa: ANN001
                   max_tokens: int) -> dict[str, float]:
    """Vectors-only MRR@10 per package (fused views) with the frozen document vectors."""
    encoder.model.eval()
    result = {}
    for name, package in packages.items():
        queries = encoder.embed([query["query"] for query in package["queries"]], max_tokens)
        views = {view: documents[f"eval/{name}/{view}"] for view in VIEWS}
        result[name] = float(np.mean(package_scores(package, queries, views)["fused"]))
    encoder.model.train()
    return result


def train(args: argparse.Namespace) -> None:
    """The tower from the shipped model's weights, with checkpoints, a log and the best kept."""
    import torch
    from train import (
        EVAL_PACKAGES,
        MAX_TOKENS,
        Encoder,
        Schedule,
        bfloat16_pays,
        resumed,
        run_schedule,
    )
    from transformers import AutoModel

    torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    documents = np.load(args.work / "documents.npz")
    tower = Tower(read_pairs(args.pairs), documents)
    packages = validation_packages(args.eval_dir)
    batches = tower.batches(args.epochs, args.batch)
    total = len(batches)
    model = AutoModel.from_pretrained(str(args.base), dtype=torch.float32)
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.01)
    step, best = resumed(args.work / "checkpoints", model, optimiser) if args.resume else (0, -1.0)
    encoder = Encoder(model, bfloat16=bfloat16_pays())
    languages = {name: package["language"] for name, package in packages.items()}
    say(f"{len(tower.queries)} queries of {len(tower.members)} packages, {total} steps of {args.batch}; "
        f"document vectors of {documents['model']}")

    def evaluate(at: int) -> tuple[float, dict]:
        scores = validation_mrr(encoder, packages, documents, MAX_TOKENS["query"])
        watched = float(np.mean([scores[name] for name in EVAL_PACKAGES if name in scores] or list(scores.values())))
        by_language = defaultdict(list)
        for name, value in scores.items():
            by_language[languages[name]].append(value)
        means = {language: round(float(np.mean(values)), 4) for language, values in by_language.items()}
        say(f"step {at} MRR@10 watched {watched:.4f} all {np.mean(list(scores.values())):.4f} {means}")
        return watched, {"step": at, "watched": watched, "all": float(np.mean(list(scores.values()))),
                         "languages": means, "packages": scores}

    with open(args.work / "train_log.jsonl", "a", encoding="utf-8") as log:
        schedule = Schedule(model, model, optimiser, total, args.learning_rate, args.work, log, args.eval_every,
                            args.checkpoint_every, args.max_steps)
        run_schedule(schedule, lambda at: tower.loss(encoder, batches[at], MAX_TOKENS["query"]), evaluate, step, best)


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=("documents", "train"))
    parser.add_argument("--pairs", type=Path, default=DATA / "pairs_train.jsonl")
    parser.add_argument("--eval-dir", type=Path, default=DATA / "eval")
    parser.add_argument("--work", type=Path, default=WORK, help="documents.npz, checkpoints/, best/, the log")
    parser.add_argument("--base", type=Path, default=DATA / "v1",
                        help="the shipped model's weights as a folder (from_onnx.py makes it from the file)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--learning-rate", type=float, default=4e-5)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reuse", nargs=2, type=Path, metavar=("DOCUMENTS_NPZ", "ITS_PAIRS"),
                        help="documents: take the vectors of texts an earlier documents.npz (made from ITS_PAIRS) has")
    args = parser.parse_args()
    if args.stage == "documents":
        embed_documents(args)
    else:
        train(args)


if __name__ == "__main__":
    main()
