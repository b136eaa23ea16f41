"""The logistic fit of what a description asks for: it learns openings, and unseen projects are held out."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fit_described_kind import cross_validated_loss, fit, log_loss, probabilities  # noqa: E402

NOUNS = ["widget", "buffer", "parser", "record", "socket", "reader", "store", "queue"]
VERBS = ["return", "build", "parse", "write", "close", "check", "load", "find"]


def descriptions(project: str, salt: int) -> list[tuple[str, str, str, bool]]:
    """A project's made-up docstrings: a type's opens "A <noun> that", a function's "<Verb> the <noun>"."""
    rows = []
    for i, (noun, verb) in enumerate(zip(NOUNS, VERBS)):
        other = NOUNS[(i + salt) % len(NOUNS)]
        rows.append((project, "python", f"A {noun} that keeps the {other} open.", True))
        rows.append((project, "python", f"{verb.title()} the {other} of a {noun}.", False))
    return rows


def test_the_fit_learns_the_openings_and_tells_new_ones_apart():
    """Openings seen in training carry the weight, so a new noun or verb behind them is placed right."""
    data = [row for salt, project in enumerate("abcdef") for row in descriptions(project, salt)]
    bias, weights = fit([r[2] for r in data], np.array([r[3] for r in data]), penalty=1.0)
    assert weights["at0:a"] > 0 > weights["pair:return the"]
    unseen = probabilities(["A gadget that holds a lock.", "Return the gadget of a lock."], bias, weights)
    assert unseen[0] > 0.5 > unseen[1]


def test_features_seen_too_rarely_get_no_weight():
    """A word of one docstring is no evidence."""
    data = [row for salt, project in enumerate("abc") for row in descriptions(project, salt)]
    data.append(("c", "python", "Zygote of a quux.", True))
    _, weights = fit([r[2] for r in data], np.array([r[3] for r in data]), penalty=1.0)
    assert not any("zygote" in name or "quux" in name for name in weights)


def test_held_out_projects_score_better_than_the_prior():
    """Cross-validation holds whole projects out and still beats a coin."""
    data = [row for salt, project in enumerate("abcdefghij") for row in descriptions(project, salt)]
    prior = log_loss(np.full(len(data), 0.5), np.array([r[3] for r in data]))
    assert cross_validated_loss(data, penalty=1.0) < prior
