"""The learned blend inside a real search (MiniLM, BM25, Chroma): it ranks the pool, the focus rule still demotes,
and a query showing evidence its training never saw is ranked by the hand-set blend."""

from __future__ import annotations

import json

import numpy as np
import pytest
from grepgraph.retrievers.rank import search as search_module
from grepgraph.retrievers.rank.learned import BLEND_FILE, read_blend
from grepgraph.retrievers.rank.search import HAND_FOR_UNTRAINED, Searcher
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


def use_blend(monkeypatch, tmp_path, full: dict, unsupported: list[str] = ()) -> None:
    path = tmp_path / "blend.json"
    path.write_text(json.dumps({"version": "test", "unsupported": list(unsupported), "models": {
        "full": full, "lexical": {"features": ["bm25"], "weights": [1.0]}}}))
    monkeypatch.setattr(search_module, "load_blend", lambda _path: read_blend(path))


def test_the_learned_blend_ranks_by_its_weights_and_the_focus_still_demotes_tests(searcher, monkeypatch, tmp_path):
    use_blend(monkeypatch, tmp_path, {"features": ["name", "bm25"], "weights": [4.0, 1.0]})
    hits, _ = searcher.search("parse duration", 5, blend="learned")
    assert hits[0].symbol == "parse_duration" and hits[0].score == pytest.approx(1.0)
    test_hit = next(hit for hit in hits if hit.symbol == "test_parse_duration")
    all_hits, _ = searcher.search("parse duration", 5, blend="learned", focus="all")
    undemoted = next(hit for hit in all_hits if hit.symbol == "test_parse_duration")
    assert test_hit.score == pytest.approx(undemoted.score * 0.5)


def test_a_query_showing_unsupported_evidence_is_ranked_by_the_hand_set_blend(searcher, monkeypatch, tmp_path):
    use_blend(monkeypatch, tmp_path, {"features": ["bm25"], "weights": [-1.0]}, unsupported=["mention"])
    query = "where does util.py keep a value between bounds"
    learned, signal = searcher.search(query, 5, blend="learned")
    hand, hand_signal = searcher.search(query, 5, blend="hand")
    assert [(h.symbol, h.score) for h in learned] == [(h.symbol, h.score) for h in hand]
    assert signal.ranking == HAND_FOR_UNTRAINED and hand_signal.ranking == "hand"  # what the trace says
    # Without a mention, the (deliberately inverted) learned weights rank.
    plain, plain_signal = searcher.search("keep a value between bounds", 5, blend="learned")
    assert plain[0].symbol != "clamp"
    assert plain_signal.ranking == "learned"


def test_a_named_file_is_ranked_by_the_learned_blend_when_the_weights_leave_no_column_to_the_hand_set_one(
        searcher, monkeypatch, tmp_path):
    use_blend(monkeypatch, tmp_path, {"features": ["bm25"], "weights": [-1.0]})  # mentions ignored, not unsupported
    learned, signal = searcher.search("where does util.py keep a value between bounds", 5, blend="learned")
    assert signal.ranking == "learned"
    assert learned[0].symbol != "clamp"  # the inverted weights, not the hand-set blend's mention bonus


@pytest.mark.parametrize(("unsupported", "query"), [
    (["invoked"], "running `tool clamp --max 3` gives a value out of bounds"),
    (["kind_callable"], "keep a value between bounds"),
])
def test_a_command_line_or_a_column_seen_only_after_gathering_falls_back_too(searcher, monkeypatch, tmp_path,
                                                                                unsupported, query):
    use_blend(monkeypatch, tmp_path, {"features": ["bm25"], "weights": [-1.0]}, unsupported=unsupported)
    learned, signal = searcher.search(query, 5, blend="learned")
    hand, _ = searcher.search(query, 5, blend="hand")
    assert [(h.symbol, h.score) for h in learned] == [(h.symbol, h.score) for h in hand]
    assert signal.ranking == HAND_FOR_UNTRAINED


@pytest.mark.skipif(not BLEND_FILE.exists(), reason="no learned blend shipped")
def test_the_shipped_blend_finds_a_described_function(searcher):
    hits, _ = searcher.search("Write seconds as hours and minutes", 3, blend="learned")
    assert hits[0].symbol == "format_duration"


def test_a_model_with_a_learned_focus_weight_demotes_tests_by_it_alone(searcher, monkeypatch, tmp_path):
    use_blend(monkeypatch, tmp_path, {"features": ["name", "bm25", "out_of_focus"], "weights": [4.0, 1.0, -3.0]})
    focused, _ = searcher.search("parse duration", 5, blend="learned")
    unfocused, _ = searcher.search("parse duration", 5, blend="learned", focus="all")

    def ratio(hits):
        score = {hit.symbol: hit.score for hit in hits}
        return score["test_parse_duration"] / score["parse_duration"]

    assert ratio(focused) == pytest.approx(ratio(unfocused) * np.exp(-3.0))  # e^-3, not also focus_factor's 0.5
