#!/usr/bin/env python3
"""Fit the model of what a description asks for (a type or a function) and write ``described_kind.json``.

The data: every mined docstring query (``data/queries/``) whose gold is a type (class, struct, interface, enum,
trait, type alias) or a callable (function, method). Logistic regression with an L2 penalty over
:func:`retrievers.query.described.description_features`; the penalty is chosen by cross-validation grouped by
project on the train split, and the validation split is only reported (the hand-written opening rules it was
measured against until 2026-11-29 are gone: training/README.md has that table).

    python training/fit_described_kind.py              # choose, fit on the train split, report, write
    python training/fit_described_kind.py --no-write   # report only
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np

TRAINING = Path(__file__).resolve().parent
sys.path.insert(0, str(TRAINING.parent))
sys.path.insert(0, str(TRAINING))

from fit_blend import MANIFEST, lbfgs, provenance, say  # noqa: E402
from grepgraph.retrievers.query.described import WEIGHTS_FILE, description_features, probability  # noqa: E402

QUERIES = TRAINING / "data" / "queries"
TYPE_KINDS = frozenset({"class", "struct", "interface", "enum", "trait", "type"})
CALLABLE_KINDS = frozenset({"function", "method"})
PENALTIES = (0.3, 1.0, 3.0, 10.0)
MIN_FEATURE_COUNT = 3  # a feature seen in fewer training queries gets no weight worth keeping
FOLDS = 5


def examples(split: str) -> list[tuple[str, str, str, bool]]:
    """(project, language, query, is_type) of every docstring query of a split whose gold is one kind."""
    projects = {record["name"]: record.get("project", record["name"])
                for record in json.loads(MANIFEST.read_text())["packages"]}
    found = []
    for line in (QUERIES / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
        query = json.loads(line)
        kinds = {gold["kind"] for gold in query["gold"]}
        if query["kind"] != "docstring" or len(kinds) != 1 or not kinds <= TYPE_KINDS | CALLABLE_KINDS:
            continue
        found.append((projects.get(query["package"], query["package"]), query["language"], query["query"],
                      kinds <= TYPE_KINDS))
    return found


def encode(features: list[list[str]], vocabulary: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """The vocabulary indices of each text's features, flattened, with the text each index belongs to."""
    rows, columns = [], []
    for row, found in enumerate(features):
        for feature in found:
            if feature in vocabulary:
                rows.append(row)
                columns.append(vocabulary[feature])
    return np.array(rows, dtype=np.int64), np.array(columns, dtype=np.int64)


def vocabulary_of(features: list[list[str]]) -> dict[str, int]:
    """Each feature set in at least :data:`MIN_FEATURE_COUNT` texts, with its index (in sorted order)."""
    counts = Counter(feature for found in features for feature in set(found))
    return {feature: i for i, feature in
            enumerate(sorted(feature for feature, count in counts.items() if count >= MIN_FEATURE_COUNT))}


def project_folds(data: list[tuple]) -> Iterator[tuple[list[tuple], list[tuple]]]:
    """The (training, held-out) rows of each fold, grouped by project (``row[0]``; dealt round-robin, seeded)."""
    projects = sorted({row[0] for row in data})
    fold_of = {project: i % FOLDS for i, project in enumerate(np.random.default_rng(0).permutation(projects))}
    for fold in range(FOLDS):
        yield [row for row in data if fold_of[row[0]] != fold], [row for row in data if fold_of[row[0]] == fold]


def fit(texts: list[str], is_type: np.ndarray, penalty: float) -> tuple[float, dict[str, float]]:
    """Bias and weights of the L2-penalised logistic regression (the bias is not penalised)."""
    features = [description_features(text) for text in texts]
    vocabulary = vocabulary_of(features)
    kept = list(vocabulary)
    rows, columns = encode(features, vocabulary)
    target = is_type.astype(np.float64)
    size = len(texts)

    def objective(parameters: np.ndarray) -> tuple[float, np.ndarray]:
        bias, weights = parameters[0], parameters[1:]
        logits = np.full(size, bias)
        np.add.at(logits, rows, weights[columns])
        probability = 1.0 / (1.0 + np.exp(-logits))
        loss = np.logaddexp(0.0, logits) - target * logits
        residual = probability - target
        gradient = np.zeros_like(parameters)
        gradient[0] = residual.sum()
        np.add.at(gradient[1:], columns, residual[rows])
        gradient[1:] += penalty * weights
        return float(loss.sum() + 0.5 * penalty * weights @ weights) / size, gradient / size

    parameters = lbfgs(objective, np.zeros(len(vocabulary) + 1), iterations=1000)
    return float(parameters[0]), {name: float(w) for name, w in zip(kept, parameters[1:]) if abs(w) >= 1e-3}


def probabilities(texts: list[str], bias: float, weights: dict[str, float]) -> np.ndarray:
    """P(type) of each text under the fitted model, as the search computes it."""
    return np.array([probability(description_features(text), bias, weights) for text in texts])


def log_loss(probability: np.ndarray, is_type: np.ndarray) -> float:
    """Mean negative log-likelihood."""
    clipped = np.clip(probability, 1e-9, 1 - 1e-9)
    return float(-np.mean(np.where(is_type, np.log(clipped), np.log(1 - clipped))))


def cross_validated_loss(data: list[tuple[str, str, str, bool]], penalty: float) -> float:
    """Held-out log loss over project-grouped folds of the train split."""
    losses = []
    for train, held in project_folds(data):
        bias, weights = fit([r[2] for r in train], np.array([r[3] for r in train]), penalty)
        losses.append(log_loss(probabilities([r[2] for r in held], bias, weights), np.array([r[3] for r in held])))
    return float(np.mean(losses))


def report(data: list[tuple[str, str, str, bool]], bias: float, weights: dict[str, float]) -> None:
    """Validation: the model's accuracy and log loss, per language, and the share of types it finds."""
    texts = [row[2] for row in data]
    is_type = np.array([row[3] for row in data])
    probability = probabilities(texts, bias, weights)
    prior = log_loss(np.full(len(data), is_type.mean()), is_type)
    say(f"validation: {len(data)} docstrings, {is_type.mean():.1%} of types; "
        f"log loss {log_loss(probability, is_type):.3f} (the prior alone {prior:.3f})")
    say(f"  {'':<12} {'n':>5} {'types':>6} {'model acc':>9}")
    model_right = (probability > 0.5) == is_type
    for language in ["all", *sorted({row[1] for row in data})]:
        keep = np.array([language in ("all", row[1]) for row in data])
        say(f"  {language:<12} {keep.sum():>5} {is_type[keep].mean():>6.1%} {model_right[keep].mean():>9.1%}")
    types = is_type & (probability > 0.5)
    say(f"  types found: {types.sum() / is_type.sum():.1%}")


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-write", action="store_true", help="report only")
    args = parser.parse_args()
    train, validation = examples("train"), examples("validation")
    say(f"train: {len(train)} docstrings of {len({r[0] for r in train})} projects, "
        f"{np.mean([r[3] for r in train]):.1%} types")
    scored = {penalty: cross_validated_loss(train, penalty) for penalty in PENALTIES}
    for penalty, loss in scored.items():
        say(f"  penalty {penalty:<5g} held-out log loss {loss:.4f}")
    penalty = min(scored, key=scored.get)
    bias, weights = fit([r[2] for r in train], np.array([r[3] for r in train]), penalty)
    report(validation, bias, weights)
    if args.no_write:
        return
    WEIGHTS_FILE.write_text(json.dumps({
        **provenance("fit_described_kind.py"),
        "training": {"docstrings": len(train), "types": int(sum(r[3] for r in train)), "penalty": penalty,
                     "cv_log_loss": round(scored[penalty], 4)},
        "bias": round(bias, 4),
        "weights": {name: round(weight, 4) for name, weight in sorted(weights.items())},
    }, indent=0) + "\n")
    say(f"penalty {penalty:g}; {len(weights)} weights; wrote {WEIGHTS_FILE}")


if __name__ == "__main__":
    main()
