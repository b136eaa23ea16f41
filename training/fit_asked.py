#!/usr/bin/env python3
"""Fit the models of what a query is (a report, a description) and write ``asked.json`` (two of the blend's columns).

The data: every query of the features tables (``features.py``: what the blend is fitted on). A report is a commit
message or a failing test's report; a description a docstring's first sentence; the rest (pasted lines and blocks,
error messages, tracebacks, names) is neither. A softmax regression of the three with an L2 penalty over
:func:`retrievers.query.asked.query_features`, the penalty chosen by cross-validation grouped by project on the
train split; the validation split is only reported.

    python training/fit_asked.py              # choose, fit on the train split, report, write
    python training/fit_asked.py --no-write   # report only
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

TRAINING = Path(__file__).resolve().parent
sys.path.insert(0, str(TRAINING.parent))
sys.path.insert(0, str(TRAINING))

from fit_blend import FEATURES, lbfgs, provenance, say, searched_texts  # noqa: E402
from fit_described_kind import PENALTIES, encode, project_folds, vocabulary_of  # noqa: E402
from grepgraph.retrievers.query.asked import KINDS, WEIGHTS_FILE, chances_of, query_features  # noqa: E402

QUERY_KINDS = {"report": frozenset({"commit_message", "failing_test"}),
               "description": frozenset({"docstring", "docstring_documented"})}
CLASSES = (*KINDS, "neither")


def examples(tables: Path, split: str) -> list[tuple[str, str, str, str]]:
    """(project, language, query, query kind) of every query in a split's tables, as the search reads the query."""
    found = []
    for path in sorted(tables.glob("*.npz")):
        data = np.load(path)
        if str(data["split"]) != split or "queries_json" not in data:
            continue
        project, language = str(data["project"]), str(data["language"])
        found += [(project, language, text, str(kind)) for text, kind in zip(searched_texts(data), data["kind"])]
    return found


def class_of(query_kind: str) -> int:
    """The index in :data:`CLASSES` of a mined query's kind."""
    return next((i for i, kind in enumerate(KINDS) if query_kind in QUERY_KINDS[kind]), len(KINDS))


def fit(texts: list[str], classes: np.ndarray, penalty: float) -> dict[str, tuple[float, dict[str, float]]]:
    """Per class, the bias and weights of the L2-penalised softmax regression (the biases are not penalised)."""
    features = [query_features(text) for text in texts]
    vocabulary = vocabulary_of(features)
    kept = list(vocabulary)
    rows, columns = encode(features, vocabulary)
    size, width, count = len(texts), len(kept) + 1, len(CLASSES)
    target = np.eye(count)[classes]

    def objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
        parameters = flat.reshape(count, width)
        logits = np.tile(parameters[:, 0], (size, 1))
        np.add.at(logits, rows, parameters[:, 1:][:, columns].T)
        logits -= logits.max(axis=1, keepdims=True)
        log_chances = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        residual = np.exp(log_chances) - target
        gradient = np.zeros_like(parameters)
        gradient[:, 0] = residual.sum(axis=0)
        for k in range(count):
            np.add.at(gradient[k, 1:], columns, residual[rows, k])
        gradient[:, 1:] += penalty * parameters[:, 1:]
        loss = -(target * log_chances).sum() + 0.5 * penalty * (parameters[:, 1:] ** 2).sum()
        return float(loss) / size, gradient.ravel() / size

    fitted = lbfgs(objective, np.zeros(count * width), iterations=1000).reshape(count, width)
    return {kind: (float(fitted[k, 0]), {name: float(w) for name, w in zip(kept, fitted[k, 1:]) if abs(w) >= 1e-3})
            for k, kind in enumerate(CLASSES)}


def chances(texts: list[str], model: dict[str, tuple[float, dict[str, float]]]) -> np.ndarray:
    """Each text's chance of each class, as the search computes it (rows: texts, columns: :data:`CLASSES`)."""
    return np.array([[found[kind] for kind in CLASSES] for found in
                     (chances_of(query_features(text), model) for text in texts)])


def log_loss(found: np.ndarray, classes: np.ndarray) -> float:
    """Mean negative log-likelihood of the true classes."""
    return float(-np.mean(np.log(np.clip(found[np.arange(len(classes)), classes], 1e-9, 1.0))))


def cross_validated_loss(data: list[tuple[str, str, str, str]], penalty: float) -> float:
    """Held-out log loss over project-grouped folds of the train split."""
    losses = []
    for train, held in project_folds(data):
        model = fit([row[2] for row in train], np.array([class_of(row[3]) for row in train]), penalty)
        losses.append(log_loss(chances([row[2] for row in held], model), np.array([class_of(row[3]) for row in held])))
    return float(np.mean(losses))


def report(data: list[tuple[str, str, str, str]], model: dict[str, tuple[float, dict[str, float]]]) -> None:
    """Validation: log loss against the prior, accuracy, and the mean chances each kind of query gets."""
    found = chances([row[2] for row in data], model)
    classes = np.array([class_of(row[3]) for row in data])
    prior = log_loss(np.tile(np.bincount(classes, minlength=len(CLASSES)) / len(classes), (len(classes), 1)), classes)
    say(f"validation: {len(data)} queries; log loss {log_loss(found, classes):.3f} (the prior alone {prior:.3f}); "
        f"accuracy {np.mean(found.argmax(axis=1) == classes):.1%}")
    kinds = np.array([row[3] for row in data])
    say(f"  {'':<22} {'queries':>7} " + " ".join(f"{'P(' + kind + ')':>14}" for kind in CLASSES))
    for name in sorted(set(kinds)):
        means = found[kinds == name].mean(axis=0)
        say(f"  {name:<22} {np.sum(kinds == name):>7} " + " ".join(f"{mean:>14.3f}" for mean in means))


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=Path, default=FEATURES, help="the features tables (default: %(default)s)")
    parser.add_argument("--no-write", action="store_true", help="report only")
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE,
                        help="where the model goes (default: the shipped file); a candidate goes elsewhere")
    args = parser.parse_args()
    train, validation = examples(args.tables, "train"), examples(args.tables, "validation")
    classes = np.array([class_of(row[3]) for row in train])
    say(f"train: {len(train)} queries of {len({row[0] for row in train})} projects; "
        + ", ".join(f"{kind} {np.mean(classes == k):.1%}" for k, kind in enumerate(CLASSES)))
    scored = {penalty: cross_validated_loss(train, penalty) for penalty in PENALTIES}
    say("held-out log loss by penalty: " + ", ".join(f"{p:g} {loss:.4f}" for p, loss in scored.items()))
    penalty = min(scored, key=scored.get)
    model = fit([row[2] for row in train], classes, penalty)
    report(validation, model)
    if args.no_write:
        return
    args.out.write_text(json.dumps({
        **provenance("fit_asked.py"),
        "training": {"queries": len(train), **{kind: int(np.sum(classes == k)) for k, kind in enumerate(CLASSES)},
                     "penalty": penalty, "cv_log_loss": round(scored[penalty], 4)},
        "models": {kind: {"bias": round(bias, 4), "weights": {name: round(w, 4) for name, w in sorted(weights.items())}}
                   for kind, (bias, weights) in model.items()},
    }, indent=0) + "\n")
    say(f"penalty {penalty:g}; {sum(len(weights) for _, weights in model.values())} weights; wrote {args.out}")


if __name__ == "__main__":
    main()
