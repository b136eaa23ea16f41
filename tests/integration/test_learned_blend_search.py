"""The learned blend inside a real search (the bundled model, BM25, Chroma): it ranks every query's pool, the focus
rule still demotes where the weights leave the focus to it, and a caller's own weights rank by a plain blend."""

from __future__ import annotations

import json

import numpy as np
import pytest
from grepgraph.retrievers.rank import search as search_module
from grepgraph.retrievers.rank.learned import BLEND_FILE, read_blend
from grepgraph.retrievers.rank.search import CALLER_WEIGHTS, LEARNED_RANKING, Searcher
from grepgraph.retrievers.store.index import CodeIndex

PARSER_PY = '''\
def parse_duration(text):
    """Turn "3h20m" into seconds."""
    hours, _, rest = text.partition("h")
    return int(hours) * 3600 + int(rest.rstrip("m") or 0) * 60


def format_duration(seconds):
    """Write seconds as "3h20m"."""
    return f"{seconds // 3600}h{seconds % 3600 // 60}m"
'''

UTIL_PY = '''\
def clamp(value, low, high):
    """Keep a value between two bounds."""
    return max(low, min(high, value))
'''

TEST_PARSER_PY = '''\
from parser import parse_duration


def test_parse_duration():
    assert parse_duration("3h20m") == 12000
'''


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    root = tmp_path_factory.mktemp("durations")
    (root / "parser.py").write_text(PARSER_PY)
    (root / "util.py").write_text(UTIL_PY)
    (root / "tests").mkdir()
    (root / "tests" / "test_parser.py").write_text(TEST_PARSER_PY)
    index = CodeIndex(root, root / ".grepgraph")
    index.update()
    searcher = Searcher(index)
    yield searcher
    searcher.close()


def use_blend(monkeypatch, tmp_path, full: dict) -> None:
    path = tmp_path / "blend.json"
    path.write_text(json.dumps({"version": "test", "models": {
        "full": full, "lexical": {"features": ["bm25"], "weights": [1.0]}}}))
    monkeypatch.setattr(search_module, "load_blend", lambda _path: read_blend(path))


def test_the_learned_blend_ranks_by_its_weights_and_the_focus_still_demotes_tests(searcher, monkeypatch, tmp_path):
    use_blend(monkeypatch, tmp_path, {"features": ["name", "bm25"], "weights": [4.0, 1.0]})
    hits, _ = searcher.search("parse duration", 5)
    assert hits[0].symbol == "parse_duration" and hits[0].score == pytest.approx(1.0)
    test_hit = next(hit for hit in hits if hit.symbol == "test_parse_duration")
    all_hits, _ = searcher.search("parse duration", 5, focus="all")
    undemoted = next(hit for hit in all_hits if hit.symbol == "test_parse_duration")
    assert test_hit.score == pytest.approx(undemoted.score * 0.5)


def test_a_callers_own_weights_rank_by_a_plain_blend_of_the_evidence(searcher):
    hits, signal = searcher.search("keep a value between bounds", 5, weights={"bm25": 1.0}, focus="all")
    assert signal.ranking == CALLER_WEIGHTS
    assert hits[0].symbol == "clamp" and hits[0].score == pytest.approx(1.0)  # BM25 normalised by its best
    assert set(hits[0].components) <= {"bm25", "name", "symbol", "mention"}  # no evidence it does not weigh


def test_every_query_is_ranked_by_the_learned_blend_a_named_file_and_a_command_line_too(searcher, monkeypatch,
                                                                                         tmp_path):
    use_blend(monkeypatch, tmp_path, {"features": ["bm25"], "weights": [-1.0]})
    for query in ("where does util.py keep a value between bounds", "running `tool clamp --max 3` is out of bounds"):
        learned, signal = searcher.search(query, 5)
        assert signal.ranking == LEARNED_RANKING
        assert learned[0].symbol != "clamp"  # the (deliberately inverted) weights ranked


@pytest.mark.skipif(not BLEND_FILE.exists(), reason="no learned blend shipped")
def test_the_shipped_blend_finds_a_described_function(searcher):
    hits, _ = searcher.search("Write seconds as hours and minutes", 3)
    assert hits[0].symbol == "format_duration"


def test_a_model_with_a_learned_focus_weight_demotes_tests_by_it_alone(searcher, monkeypatch, tmp_path):
    use_blend(monkeypatch, tmp_path, {"features": ["name", "bm25", "out_of_focus"], "weights": [4.0, 1.0, -3.0]})
    focused, _ = searcher.search("parse duration", 5)
    unfocused, _ = searcher.search("parse duration", 5, focus="all")

    def ratio(hits):
        score = {hit.symbol: hit.score for hit in hits}
        return score["test_parse_duration"] / score["parse_duration"]

    assert ratio(focused) == pytest.approx(ratio(unfocused) * np.exp(-3.0))  # e^-3, not also focus_factor's 0.5
