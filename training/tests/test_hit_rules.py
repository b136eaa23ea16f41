"""The two hit rules the training and the validation report use: the rulers' and the definition's own."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from features import first_hit_rank, is_answer  # noqa: E402

GOLD = {"path": "pkg/store.py", "symbol": "Store.save", "kind": "method", "start_line": 20, "end_line": 30}
MODULE = {"path": "pkg/store.py", "symbol": "store", "kind": "module", "start_line": 1, "end_line": 90}
CLASS = {"path": "pkg/store.py", "symbol": "Store", "kind": "class", "start_line": 10, "end_line": 60}
METHOD = {"path": "pkg/store.py", "symbol": "Store.save", "kind": "method", "start_line": 19, "end_line": 30}


def test_a_container_around_the_gold_is_a_ruler_hit_but_not_the_definition():
    """The module and the class hold the method's lines: the rulers count them, the definition's rule skips them."""
    ranked = [MODULE, CLASS, METHOD]
    assert first_hit_rank(ranked, [GOLD]) == 1
    assert first_hit_rank(ranked, [GOLD], is_answer) == 3


def test_a_class_asked_for_is_its_own_definition_in_its_own_file_only():
    """A class gold is found by the class chunk (its lines reach past the gold's head), not by another file's."""
    class_gold = {**CLASS, "end_line": 12}
    assert first_hit_rank([CLASS], [class_gold], is_answer) == 1
    assert first_hit_rank([{**CLASS, "path": "other.py"}], [class_gold], is_answer) == 0
