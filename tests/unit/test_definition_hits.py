"""Re-scoring a ruler's results by the definition itself: a container around the gold is no hit."""

import json

from benchmarks.definition_hits import is_hit, scores

GOLD = {"path": "pkg/fields.py", "symbol": "Raw", "kind": "class", "start_line": 40, "end_line": 41,
        "node_end_line": 44}
METHOD_GOLD = {"path": "pkg/fields.py", "symbol": "Raw.load", "kind": "method", "start_line": 42, "end_line": 44}
MODULE = {"path": "pkg/fields.py", "symbol": "fields", "start_line": 1, "end_line": 90}
CLASS = {"path": "pkg/fields.py", "symbol": "Raw", "start_line": 40, "end_line": 44}


def test_the_module_around_a_class_counts_for_the_rulers_only():
    assert is_hit(MODULE, GOLD, definition_only=False)
    assert not is_hit(MODULE, GOLD, definition_only=True)
    assert is_hit(CLASS, GOLD, definition_only=True)  # named as the gold


def test_the_class_around_a_method_counts_for_the_rulers_only():
    gold = {**METHOD_GOLD, "node_end_line": 44}
    assert is_hit(CLASS, gold, definition_only=False)
    assert not is_hit(CLASS, gold, definition_only=True)


def test_scores_group_by_package_or_by_the_golds_kind(tmp_path):
    golds = {"q1": {"package": "a", "gold": GOLD}, "q2": {"package": "a", "gold": {**METHOD_GOLD, "node_end_line": 44}}}
    results = tmp_path / "docstring-x.jsonl"
    results.write_text("\n".join(json.dumps(line) for line in [
        {"id": "q1", "results": [MODULE, CLASS]},  # the class second: 1/2 by the definition, 1 by the rulers
        {"id": "q2", "results": [{**METHOD_GOLD, "symbol": "Raw.load"}]},
    ]) + "\n")
    assert scores(results, golds, definition_only=False) == {"a": 1.0, "all": 1.0}
    assert scores(results, golds, definition_only=True) == {"a": 0.75, "all": 0.75}
    assert scores(results, golds, definition_only=True, by_kind=True) == {"class": 0.5, "method": 1.0, "all": 0.75}
