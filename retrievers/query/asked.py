"""What a query is, learned: a report of a problem, a description of a definition, or neither (code, a message, a name).

The three ask for different evidence: a docstring's sentence is matched by the cosines of one definition, a report
of a fix by the names it spells out and the file around them, a pasted line or message by its exact words. One
linear blend fitted on all of them traded one for another; crossed with these chances it learns a weight set for
each (training/README.md, 2026-11-30). ``training/fit_asked.py`` fits a softmax model of the three over the words
of the mined queries of the training packages, whose kinds are known (a commit message or a failing test's report
is a report, a docstring's first sentence a description), and writes ``asked.json`` beside this module.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

from .shape import WORD

WEIGHTS_FILE = Path(__file__).with_name("asked.json")
KINDS = ("report", "description")  # the columns; the third kind, neither, is what the chances leave
OPENING_WORDS = 3
READ_WORDS = 60  # a report's gist is in its first lines; the rest is code and traceback
SIZES = ((1, "1"), (3, "2-3"), (10, "4-10"), (40, "11-40"))


def query_features(query: str) -> list[str]:
    """The named features of a query: its opening words, the words it reads first, its size in words and lines."""
    words = [word.lower() for word in WORD.findall(query[:2000])]
    found = [f"at{position}:{word}" for position, word in enumerate(words[:OPENING_WORDS])]
    found += [f"word:{word}" for word in dict.fromkeys(words[:READ_WORDS])]
    count = len(query.split())
    found.append("size:" + next((name for limit, name in SIZES if count <= limit), "41+"))
    lines = query.strip().count("\n") + 1
    found.append("lines:" + ("1" if lines == 1 else "2-5" if lines <= 5 else "6+"))
    return found


@lru_cache(maxsize=2)
def _model(weights: Path) -> dict[str, tuple[float, dict[str, float]]]:
    if not weights.exists():
        return {}
    data = json.loads(weights.read_text(encoding="utf-8"))
    return {kind: (float(model["bias"]), {name: float(weight) for name, weight in model["weights"].items()})
            for kind, model in data["models"].items()}


def chances_of(features: list[str], model: dict[str, tuple[float, dict[str, float]]]) -> dict[str, float]:
    """The softmax over the kinds' logits (``bias + the weights of the features present``)."""
    logits = {kind: bias + sum(weights.get(feature, 0.0) for feature in features)
              for kind, (bias, weights) in model.items()}
    top = max(logits.values())
    exponentials = {kind: math.exp(logit - top) for kind, logit in logits.items()}
    total = sum(exponentials.values())
    return {kind: value / total for kind, value in exponentials.items()}


def kind_chances(query: str, weights: Path = WEIGHTS_FILE) -> dict[str, float]:
    """P(the query is a report), P(it is a description); 0 for an empty query or when no fitted model ships.

    ``weights``: another fit's file, for the training scripts that compare two.
    """
    model = _model(weights)
    if not model or not query.strip():
        return dict.fromkeys(KINDS, 0.0)
    chances = chances_of(query_features(query), model)
    return {kind: chances[kind] for kind in KINDS}
