"""How likely a one-sentence description asks for a type rather than a function, learned from docstrings.

A docstring's opening words say what it documents: "A field that ...", "Raised when ...", "Validator which ..."
open a type's; "Return the ...", "Parses ..." a function's or a method's. ``training/fit_described_kind.py`` fits a
logistic model over those words on the mined docstrings of the training packages (each gold's kind is known) and
writes ``described_kind.json`` beside this module: a bias and one weight per word feature.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

from .shape import WORD

WEIGHTS_FILE = Path(__file__).with_name("described_kind.json")
# The opening words carry the kind ("A ... that", "Return ..."); the rest of the sentence adds its nouns.
OPENING_WORDS = 3
SENTENCE_WORDS = 12


def description_features(query: str) -> list[str]:
    """The named features of a description, lowercased (typed queries rarely capitalise).

    Its opening words by position, their pair, the first word's ending, and the words of its first clause.
    """
    words = [word.lower() for word in WORD.findall(query[:300])]
    if not words:
        return []
    found = [f"at{position}:{word}" for position, word in enumerate(words[:OPENING_WORDS])]
    if len(words) > 1:
        found.append(f"pair:{words[0]} {words[1]}")
    found += [f"ends:{words[0][-1:]}", f"ends:{words[0][-2:]}", f"ends:{words[0][-3:]}"]
    found += [f"word:{word}" for word in dict.fromkeys(words[:SENTENCE_WORDS])]
    return found


@lru_cache(maxsize=1)
def _model() -> tuple[float, dict[str, float]] | None:
    if not WEIGHTS_FILE.exists():
        return None
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    return float(data["bias"]), {name: float(weight) for name, weight in data["weights"].items()}


def type_probability(query: str) -> float | None:
    """P(the described definition is a type).

    ``None`` for a text without words, or when no fitted model ships. A long text (an issue report) is read by its
    opening too: the learned blend, crossed with the query-kind model's chances, weighs what that is worth.
    """
    model = _model()
    if model is None:
        return None
    features = description_features(query)
    return probability(features, *model) if features else None


def described_kind(query: str) -> str | None:
    """``"type"`` or ``"callable"``, whichever the model finds the likelier; ``None`` where it has no say."""
    return kind_of(type_probability(query))


def kind_of(type_chance: float | None) -> str | None:
    """The likelier kind for a P(type) (``None`` stays ``None``)."""
    if type_chance is None:
        return None
    return "type" if type_chance > 0.5 else "callable"


def probability(features: list[str], bias: float, weights: dict[str, float]) -> float:
    """The logistic model's P(type) of a description's features (the fit scores its held-out queries with it)."""
    logit = bias + sum(weights.get(feature, 0.0) for feature in features)
    if logit >= 0:  # the logistic function, written so that neither side can overflow
        return 1.0 / (1.0 + math.exp(-logit))
    return math.exp(logit) / (1.0 + math.exp(logit))
