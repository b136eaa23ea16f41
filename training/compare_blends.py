#!/usr/bin/env python3
"""Two weights files on the validation packages' features, offline and paired: which ranks the answer higher.

Each side is a weights file and the features folder it ranks (features made again with a new column are a new
folder; keep a copy of the old one). Both are scored as the Searcher ranks (``fit_blend.reciprocal_ranks``),
by the definition itself (``label``) and by the rulers' rule (``ruler_label``): MRR@10 as the mean of package
means, the difference with a 95% bootstrap interval over packages, per query kind and per language.

    python training/compare_blends.py OLD.json OLD_FEATURES/ NEW.json NEW_FEATURES/
    python training/compare_blends.py OLD.json F/ NEW.json F/ --old-kinds OLD_ASKED.json   # asked.json refitted too

Set ``GREPGRAPH_EMBEDDING_MODEL`` as for ``fit_blend.py``; the features folders must hold the same queries.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

TRAINING = Path(__file__).resolve().parent
sys.path.insert(0, str(TRAINING.parent))
sys.path.insert(0, str(TRAINING))

from fit_blend import KIND_WEIGHTS, load_packages, reciprocal_ranks, say  # noqa: E402
from grepgraph.retrievers.rank.learned import read_blend  # noqa: E402

RULES = {"label": "the definition itself", "ruler_label": "the rulers' rule"}
RESAMPLES = 2000


def validation_ranks(weights: Path, features: Path, labels: str,
                     kinds: Path = KIND_WEIGHTS) -> dict[str, tuple[str, np.ndarray, np.ndarray]]:
    """Per validation package: its language, each query's kind and reciprocal rank under ``weights``.

    ``kinds``: the query-kind model the blend was fitted with (it fills the blend's ``is_report`` columns).
    """
    model = read_blend(weights).full
    return {package.name: (package.language, package.kinds.astype(str),
                           reciprocal_ranks(package, model.features, model.weights))
            for package in load_packages(features, labels=labels, documented=True, kinds=kinds)
            if package.split == "validation"}


def interval(differences: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """95% bootstrap interval of the mean."""
    rng = np.random.default_rng(seed)
    means = [rng.choice(differences, len(differences)).mean() for _ in range(RESAMPLES)]
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def compare(old: dict, new: dict, rule: str) -> None:
    """Print the overall, per-kind and per-language lines of one hit rule."""
    names = sorted(old)
    if set(new) != set(names) or any(len(old[n][1]) != len(new[n][1]) for n in names):
        raise SystemExit("the two features folders hold different validation queries: compare like with like")
    differences = np.array([new[n][2].mean() - old[n][2].mean() for n in names])
    low, high = interval(differences)
    say(f"{RULES[rule]}: old {np.mean([old[n][2].mean() for n in names]):.4f}  "
        f"new {np.mean([new[n][2].mean() for n in names]):.4f}  "
        f"difference {differences.mean():+.4f} [{low:+.4f}, {high:+.4f}] (mean of {len(names)} packages)")
    kinds = sorted({kind for n in names for kind in old[n][1]})
    for kind in kinds:
        before = np.concatenate([old[n][2][old[n][1] == kind] for n in names])
        after = np.concatenate([new[n][2][new[n][1] == kind] for n in names])
        say(f"  kind {kind:<16} {len(before):>5} queries  {before.mean():.3f} -> {after.mean():.3f}")
    for language in sorted({old[n][0] for n in names}):
        shift = [new[n][2].mean() - old[n][2].mean() for n in names if old[n][0] == language]
        say(f"  language {language:<12} {len(shift):>2} packages  {np.mean(shift):+.3f}")


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old_weights", type=Path)
    parser.add_argument("old_features", type=Path)
    parser.add_argument("new_weights", type=Path)
    parser.add_argument("new_features", type=Path)
    parser.add_argument("--old-kinds", type=Path, default=KIND_WEIGHTS,
                        help="the query-kind model (asked.json) the old weights were fitted with; default the shipped")
    parser.add_argument("--new-kinds", type=Path, default=KIND_WEIGHTS,
                        help="the query-kind model the new weights were fitted with; default the shipped")
    args = parser.parse_args()
    for rule in RULES:
        compare(validation_ranks(args.old_weights, args.old_features, rule, args.old_kinds),
                validation_ranks(args.new_weights, args.new_features, rule, args.new_kinds), rule)


if __name__ == "__main__":
    main()
