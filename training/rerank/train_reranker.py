#!/usr/bin/env python3
"""A cross-encoder that reorders the shipped ranking's first results, trained on the mined queries' pools.

Each step takes :data:`BATCH` training queries (``pools.py``'s ``pools-train.jsonl``) whose pool holds the
definition asked for; each query's group is that definition and up to ``--negatives`` of the ranking's own
highest-placed wrong answers. The model reads each (query, candidate) pair (``reranker_input.py``)
and scores it with a linear head on its mean-pooled last layer plus a learned multiple of the ranking's log-score,
so it learns what to change in the ranking, not the ranking again. The loss is the cross-entropy of the definition
within its group; with ``--other-queries N``, also that of the definition's own query among N of the batch's other
queries, each read with the definition, which a prior over candidates cannot lower. It starts from the shipped
code model (``--base``), optionally with some of its layers only.

Every ``--eval-every`` steps the log (``WORK/train_log.jsonl``) has MRR@10 (the definition itself) on a seeded
sample of validation queries, their first :data:`RERANKED` results reordered, beside the ranking's own and beside
the same reordering read with another query's text (a reranker that gains there too has learned something other
than the query: training/README.md, "A cross-encoder reranker"); the best is kept as ``WORK/best.pt``.
Checkpoints every ``--checkpoint-every`` steps; ``--resume`` goes on from the latest.

    .venv-train/bin/python training/rerank/train_reranker.py --work training/data/rerank/run2 --bfloat16
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "training" / "embedding"))

from reranker_input import (  # noqa: E402
    RERANKED,
    padded,
    pair_ids,
    pool_text,
    reciprocal_rank,
    reordered,
    runtime_tokenizer,
)
from train import DATA as EMBEDDING_DATA  # noqa: E402
from train import SEED, learning_rate, say, take_step  # noqa: E402

POOLS = ROOT / "training" / "data" / "rerank"
BATCH = 8
LEARNING_RATE = 3e-5
# The head and the ranking's weight start from nothing (zero, one): they learn faster than the encoder.
HEAD_LEARNING_RATE = 1e-3
FLOOR = 1e-6  # the ranking's scores are positive; a log needs a floor


class Reranker(torch.nn.Module):
    """The encoder, a linear head on its mean-pooled output, and the weight of the ranking's log-score."""

    def __init__(self, base: Path, layers: list[int] | None = None) -> None:
        from transformers import AutoModel

        super().__init__()
        self.encoder = AutoModel.from_pretrained(str(base), dtype=torch.float32, attn_implementation="eager")
        if layers:
            self.encoder.encoder.layer = torch.nn.ModuleList(self.encoder.encoder.layer[i] for i in layers)
            self.encoder.config.num_hidden_layers = len(layers)
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
        torch.nn.init.zeros_(self.head.weight)
        torch.nn.init.zeros_(self.head.bias)
        self.prior = torch.nn.Parameter(torch.tensor(1.0))
        self.bfloat16 = False

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> torch.Tensor:
        """The pair's relevance logit, before the ranking's score is added (what the exported graph returns)."""
        # bfloat16 products where the CPU has them (~0.6x the time a step in the embedding runs); a no-op in eval.
        with torch.autocast(input_ids.device.type, dtype=torch.bfloat16, enabled=self.bfloat16 and self.training):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state.float()
        weights = attention_mask.unsqueeze(-1).float()
        pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
        return self.head(pooled).squeeze(-1)

    def scores(self, feeds: dict[str, torch.Tensor], ranking_scores: torch.Tensor) -> torch.Tensor:
        """Logit plus the learned multiple of the ranking's log-score."""
        return self(**feeds) + self.prior * torch.log(ranking_scores.clamp(min=FLOOR))


def read_pools(path: Path) -> list[dict]:
    """Every pool of a split."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def training_groups(pools: list[dict], negatives: int) -> list[dict]:
    """Queries whose pool holds the definition, each with it first and its highest-placed wrong answers."""
    groups = []
    for pool in pools:
        candidates = pool["candidates"]
        positives = [c for c in candidates if c["label"]]
        wrong = [c for c in candidates if not c["label"]]
        if positives and wrong:
            groups.append({"query": pool["query"], "kind": pool["kind"],
                           "candidates": [positives[0], *wrong[:negatives]]})
    random.Random(SEED).shuffle(groups)
    return groups


class Pairs:
    """The runtime's tokenizer, building the model's inputs as the runtime does, on the model's device."""

    def __init__(self, device: str = "cpu") -> None:
        self.tokenizer = runtime_tokenizer()
        self.device = device

    def tensor(self, values: list[float]) -> torch.Tensor:
        """Ranking scores as a tensor on the device."""
        return torch.tensor(values, dtype=torch.float32, device=self.device)

    def feeds(self, query: str, candidates: list[dict]) -> dict[str, torch.Tensor]:
        """The inputs of (query, candidate) for each candidate."""
        return self.pair_feeds([(query, candidate) for candidate in candidates])

    def pair_feeds(self, rows: list[tuple[str, dict]]) -> dict[str, torch.Tensor]:
        """The inputs of each (query, candidate)."""
        pairs = [pair_ids(self.tokenizer, query, pool_text(candidate)) for query, candidate in rows]
        return {name: torch.from_numpy(values).to(self.device) for name, values in padded(pairs).items()}


def group_loss(model: Reranker, pairs: Pairs, batch: list[dict], other_queries: int = 0) -> torch.Tensor:
    """Mean cross-entropy of each group's definition (its first candidate) within the group.

    ``other_queries``: also the cross-entropy of the group's own query among that many of the batch's other queries,
    each read with the definition (and its ranking score): a candidate's prior is the same in every such pair, so
    only reading the query lowers it.
    """
    losses = []
    for number, group in enumerate(batch):
        feeds = pairs.feeds(group["query"], group["candidates"])
        ranking = pairs.tensor([c["score"] for c in group["candidates"]])
        scores = model.scores(feeds, ranking)
        first = torch.zeros(1, dtype=torch.long, device=scores.device)
        losses.append(torch.nn.functional.cross_entropy(scores.unsqueeze(0), first))
        others = [batch[(number + step) % len(batch)]["query"]
                  for step in range(1, min(other_queries, len(batch) - 1) + 1)]
        if others:
            gold = group["candidates"][0]
            rows = [(query, gold) for query in [group["query"], *others]]
            by_query = model.scores(pairs.pair_feeds(rows), pairs.tensor([gold["score"]] * len(rows)))
            losses.append(torch.nn.functional.cross_entropy(by_query.unsqueeze(0), first))
    return torch.stack(losses).mean()


@torch.no_grad()
def reranked(model: Reranker, pairs: Pairs, pool: dict, query: str | None = None,
             depth: int = RERANKED) -> list[dict]:
    """The pool with its first ``depth`` candidates reordered by the model (read with ``query``, else the pool's)."""
    return reordered(pool["candidates"], lambda head: model.scores(
        pairs.feeds(query or pool["query"], head), pairs.tensor([c["score"] for c in head])).tolist(), depth)


def validation(model: Reranker, pairs: Pairs, pools: list[dict]) -> dict[str, float]:
    """MRR@10 of the ranking and of the reranked pools, overall and per query kind.

    ``other_query``: the pools reranked with the next pool's query instead of their own. A reranker that reads the
    query loses there; one that learned which candidates tend to be right whatever was asked does not.
    """
    model.eval()
    columns: dict[str, dict[str, list[float]]] = {"ranking": {}, "reranked": {}, "other_query": {}}
    for number, pool in enumerate(pools):
        other = pools[(number + 1) % len(pools)]["query"]
        for column, candidates in (("ranking", pool["candidates"]), ("reranked", reranked(model, pairs, pool)),
                                   ("other_query", reranked(model, pairs, pool, other))):
            columns[column].setdefault(pool["kind"], []).append(reciprocal_rank(candidates))
    model.train()
    out = {}
    for column, by_kind in columns.items():
        out[column] = float(np.mean([value for values in by_kind.values() for value in values]))
        out.update({f"{kind}:{column}": float(np.mean(values)) for kind, values in by_kind.items()})
    return out


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--base", type=Path, default=EMBEDDING_DATA / "v1")
    parser.add_argument("--layers", help="comma-separated layers of the base to keep (all by default)")
    parser.add_argument("--negatives", type=int, default=5)
    parser.add_argument("--other-queries", type=int, default=0,
                        help="also pick each definition's own query out of this many of the batch's other queries")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--eval-every", type=int, default=250)
    parser.add_argument("--eval-queries", type=int, default=500)
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--bfloat16", action="store_true", help="train in bfloat16 autocast")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (a lent GPU)")
    args = parser.parse_args()
    torch.manual_seed(SEED)
    torch.set_num_threads(args.threads)
    args.work.mkdir(parents=True, exist_ok=True)
    layers = [int(value) for value in args.layers.split(",")] if args.layers else None
    model = Reranker(args.base, layers).to(args.device)
    model.bfloat16 = args.bfloat16
    head = [model.head.weight, model.head.bias, model.prior]
    optimiser = torch.optim.AdamW([{"params": model.encoder.parameters(), "peak": LEARNING_RATE},
                                   {"params": head, "peak": HEAD_LEARNING_RATE}], weight_decay=0.01)
    groups = training_groups(read_pools(POOLS / "pools-train.jsonl"), args.negatives)
    checking = read_pools(POOLS / "pools-validation.jsonl")
    random.Random(SEED).shuffle(checking)
    checking = checking[: args.eval_queries]
    pairs = Pairs(args.device)
    step, best = 0, -1.0
    latest = args.work / "latest.pt"
    if args.resume and latest.exists():
        state = torch.load(latest, weights_only=False, map_location=args.device)
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        step, best = state["step"], state["best"]
    say(f"{len(groups)} training groups, {len(checking)} validation queries, from step {step}")
    log = (args.work / "train_log.jsonl").open("a")
    model.train()
    started, losses = time.perf_counter(), []
    while step < args.steps:
        batch = [groups[(step * BATCH + i) % len(groups)] for i in range(BATCH)]
        for group in optimiser.param_groups:
            group["lr"] = learning_rate(step, args.steps, group["peak"])
        losses.append(take_step(model, optimiser, group_loss(model, pairs, batch, args.other_queries)))
        step += 1
        if step % 25 == 0:
            say(f"step {step} loss {np.mean(losses[-25:]):.4f} prior {model.prior.item():.3f} "
                f"{(time.perf_counter() - started) / len(losses):.2f}s/step")
        if step % args.eval_every == 0 or step == args.steps:
            measured = validation(model, pairs, checking)
            row = {"step": step, "loss": float(np.mean(losses[-args.eval_every:])), "prior": model.prior.item(),
                   **measured}
            log.write(json.dumps(row) + "\n")
            log.flush()
            say(f"step {step} validation ranking {measured['ranking']:.4f} reranked {measured['reranked']:.4f} "
                f"with another query {measured['other_query']:.4f}")
            if measured["reranked"] > best:
                best = measured["reranked"]
                torch.save({"model": model.state_dict(), "layers": layers, "step": step}, args.work / "best.pt")
        if step % args.checkpoint_every == 0:
            torch.save({"model": model.state_dict(), "optimiser": optimiser.state_dict(), "step": step,
                        "best": best}, latest)


if __name__ == "__main__":
    main()
