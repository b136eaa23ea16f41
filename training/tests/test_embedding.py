"""The embedding pipeline's pure parts: gold matching, caps, vectors-only fusion and scoring, trimming."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embedding"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunks import EmbeddedChunk, best_match, embedded_chunks, is_hit  # noqa: E402
from pairs import capped  # noqa: E402
from ranking import fused, package_scores, reciprocal_rank, trimmed  # noqa: E402

SOURCE = b'''class Store:
    """Keeps rows."""

    def save(self, row):
        return self.rows.append(row)


def load(path):
    with open(path) as handle:
        return handle.read()
'''


def chunk(symbol, start, end, part=0, kind="function"):
    """A chunk of ``a.py``."""
    return EmbeddedChunk("a.py", symbol, kind, start, end, part, False, f"card {symbol}", f"code {symbol}")


def test_chunks_carry_the_texts_the_index_embeds():
    """A parsed file's chunks come with a card naming the definition and a code view opening with the path."""
    chunks = embedded_chunks([("pkg/a.py", SOURCE, "python")])
    by_symbol = {c.symbol: c for c in chunks}
    assert "Store.save" in by_symbol and "load" in by_symbol
    assert by_symbol["load"].code.startswith("pkg/a.py load\ndef load(path):")
    assert by_symbol["load"].card.startswith("function load in pkg a")


def test_the_gold_is_the_definition_holding_its_line():
    """Overlapping lines or the same symbol hit; a window holding a code line's line is preferred."""
    chunks = [chunk("f", 1, 40), chunk("f", 35, 80, part=1), chunk("g", 81, 90)]
    gold = {"path": "a.py", "symbol": "f", "start_line": 1, "end_line": 80, "line": 60}
    assert is_hit(chunks[0], gold) and not is_hit(chunks[2], gold)
    assert best_match(chunks, gold) is chunks[1]
    assert best_match(chunks, {**gold, "line": None}) is chunks[0]
    assert best_match(chunks, {"path": "b.py", "symbol": "f", "start_line": 1, "end_line": 2}) is None


def test_caps_keep_a_seeded_sample_per_kind():
    """At most the cap of each kind, the same on every call; kinds without a cap are dropped."""
    queries = [{"kind": "docstring", "id": i} for i in range(10)] + [{"kind": "other", "id": 99}]
    first = capped(queries, {"docstring": 3}, "pkg")
    assert len(first) == 3 and first == capped(queries, {"docstring": 3}, "pkg")


def test_fusion_and_reciprocal_rank():
    """Reciprocal-rank fusion favours what both views rank high; only the top 10 count."""
    assert fused({"card": [1, 2, 3], "code": [2, 1, 3]})[:2] in ([1, 2], [2, 1])
    assert fused({"card": [5, 1], "code": [1, 7]})[0] == 1
    assert reciprocal_rank([4, 2, 9], {9}) == 1 / 3
    assert reciprocal_rank(list(range(20)), {15}) == 0.0


def test_package_scores_rank_by_cosine():
    """Each view ranks by cosine; a test chunk has no code vector, so the fusion puts the other chunk first."""
    package = {"chunks": [{"card": "a", "code": "a", "is_test": False}, {"card": "b", "code": "b", "is_test": True}],
               "queries": [{"query": "q", "kind": "docstring", "gold": [1]}]}
    vectors = {"card": np.eye(2, dtype=np.float32), "code": np.eye(2, dtype=np.float32)[:1]}
    scores = package_scores(package, np.array([[0.0, 1.0]], dtype=np.float32), vectors)
    assert scores["card"] == [1.0] and scores["code"] == [0.0] and scores["fused"] == [0.5]


def test_trimming_keeps_every_gold_and_renumbers():
    """A package cut to fewer chunks keeps its golds, and the queries point at them in the new numbering."""
    package = {"package": "p", "chunks": [{"i": i} for i in range(50)],
               "queries": [{"gold": [7, 42]}, {"gold": [3]}]}
    small = trimmed(package, 5)
    assert len(small["chunks"]) == 5
    kept = [c["i"] for c in small["chunks"]]
    assert {kept[g] for q in small["queries"] for g in q["gold"]} == {3, 7, 42}


def test_another_query_is_the_next_of_the_same_kind_and_never_itself_when_there_are_two():
    """``--other-query`` reads a docstring's gold with another docstring query, a code line's with a code line."""
    from evaluate_vectors import other_query_positions

    kinds = ["docstring", "code_line", "docstring", "docstring", "code_line", "error_message"]
    other = other_query_positions([{"kind": kind} for kind in kinds])
    assert other == [2, 4, 3, 0, 1, 5]
    assert all(kinds[i] == kinds[j] for i, j in enumerate(other))
