"""The learned model of what a query is: a report, a description, or neither (retrievers/query/asked.py)."""

import json

import pytest
from grepgraph.retrievers.query.asked import KINDS, WEIGHTS_FILE, kind_chances, query_features
from grepgraph.retrievers.rank.learned import QueryShape

REPORTS = [
    "Fix crash when the settings file is empty",
    "Fixed wrong offset in the tokenizer for multibyte input",
    "The parser fails with an error on a trailing comma\n\nReading a list that ends with a comma raises an error "
    "instead of ignoring it.",
]
DESCRIPTIONS = [
    "Return the entry stored under a key in the cache.",
    "Converts a borrowed pair to a pair of borrows.",
    "A reader that yields the lines of a file without their endings.",
]
NEITHER = [
    "open_connection",
    "if (buffer.length > limit) { return null; }",
    "Traceback (most recent call last):\n  File \"main.py\", line 3, in <module>\n    run()\nKeyError: 'name'",
]


def test_reports_descriptions_and_quotes_are_told_apart():
    for query in REPORTS:
        chances = kind_chances(query)
        assert chances["report"] > 0.5 > chances["description"], (query, chances)
    for query in DESCRIPTIONS:
        chances = kind_chances(query)
        assert chances["description"] > 0.5 > chances["report"], (query, chances)
    for query in NEITHER:
        chances = kind_chances(query)
        assert max(chances.values()) < 0.5, (query, chances)


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_no_kind(query):
    assert kind_chances(query) == {kind: 0.0 for kind in KINDS}


def test_the_features_are_opening_words_the_words_read_first_and_the_size():
    found = query_features("Fix the Parser\nwhen it reads a BOM")
    assert found[:3] == ["at0:fix", "at1:the", "at2:parser"]
    assert {"word:fix", "word:bom", "size:4-10", "lines:2-5"} <= set(found)
    assert "word:later" not in query_features("a " * 70 + "later")  # only the first words are read


def test_the_shipped_weights_say_how_they_were_made():
    data = json.loads(WEIGHTS_FILE.read_text())
    assert data["command"].startswith("python training/fit_asked.py") and len(data["manifest_sha256"]) == 64
    assert set(data["models"]) == {*KINDS, "neither"} and data["training"]["queries"] > 1000
    for model in data["models"].values():
        assert model["weights"]
        assert all(name.split(":", 1)[0] in {"at0", "at1", "at2", "word", "size", "lines"} for name in model["weights"])


def test_the_learned_columns_read_the_chances():
    shape = dict(multiline=False, statement=True, question=False, described=None, wants_type=False,
                 describes_exception=False, pasted_block=False)
    flags = QueryShape(**shape, asked={"report": 0.9, "description": 0.05}).flags()
    assert flags["is_report"] == pytest.approx(0.9) and flags["is_description"] == pytest.approx(0.05)
    assert QueryShape(**shape).flags()["is_report"] == 0.0


def test_another_fit_is_read_from_its_own_file(tmp_path):
    """A candidate model (``fit_asked.py --out``) is read from its file; a missing file gives no kind."""
    candidate = tmp_path / "asked.json"
    candidate.write_text(json.dumps({"models": {"report": {"bias": 0.0, "weights": {"at0:fix": 2.0}},
                                                "description": {"bias": 0.0, "weights": {}},
                                                "neither": {"bias": 0.0, "weights": {}}}}))
    chances = kind_chances("fix it", candidate)
    assert chances["report"] == pytest.approx(7.389056 / (7.389056 + 2)) and chances["report"] > 0.7
    assert kind_chances("fix it", tmp_path / "missing.json") == {kind: 0.0 for kind in KINDS}
