"""Both BM25 engines: ranking, persistence and top-k selection."""

from __future__ import annotations

import json

import numpy as np
import pytest
from grepgraph.retrievers.lexical.bm25 import (
    ENGINES,
    build_lexical_index,
    load_lexical_index,
    save_lexical_index,
    top_k,
)
from grepgraph.retrievers.lexical.tokenize import tokenize_code, tokenize_query

DOCUMENTS = [
    "def tokenize(text): return [word.lower() for word in WORD.findall(text)]",
    "def store_parse_result(self, result): self._insert_edges('INSERT INTO calls', result.calls)",
    "def load_config(path): return tomllib.load(open(path, 'rb'))",
    "",  # an empty file still gets a row
    "def rank(scores): return sorted(scores.items(), key=lambda item: -item[1])",
    "def delete_file(self, path): self.connection.execute('DELETE FROM calls WHERE path = ?', (path,))",
]
CORPUS = [tokenize_code(text) for text in DOCUMENTS]


@pytest.fixture(params=sorted(ENGINES))
def engine(request) -> str:
    return request.param


def ranking(index, query: str) -> list[int]:
    return top_k(index.scores(tokenize_query(query)), len(CORPUS)).tolist()


def test_relevant_document_ranks_first(engine):
    index = build_lexical_index(engine, CORPUS)
    assert index.engine == engine
    assert ranking(index, "insert edges for a parse result")[0] == 1
    assert ranking(index, "load the TOML config")[0] == 2
    assert ranking(index, "sort scores")[0] == 4
    assert ranking(index, "delete a file's calls")[0] == 5


def test_scores_cover_every_document(engine):
    index = build_lexical_index(engine, CORPUS)
    scores = index.scores(tokenize_query("calls"))
    assert scores.shape == (len(CORPUS),)
    assert {i for i, score in enumerate(scores) if score > 0} == {1, 5}


def test_unknown_and_empty_queries_score_zero(engine):
    index = build_lexical_index(engine, CORPUS)
    assert not index.scores(["xylophone"]).any()
    assert not index.scores([]).any()
    assert top_k(index.scores(["xylophone"]), 3).size == 0


def test_save_load_roundtrip(engine, tmp_path):
    index = build_lexical_index(engine, CORPUS)
    save_lexical_index(index, tmp_path / "bm25")
    assert json.loads((tmp_path / "bm25" / "engine.json").read_text()) == {"engine": engine}
    loaded = load_lexical_index(tmp_path / "bm25")
    assert type(loaded) is type(index)
    for query in ("insert edges", "config path", "rank scores items", "nothing matches"):
        tokens = tokenize_query(query)
        np.testing.assert_allclose(loaded.scores(tokens), index.scores(tokens), rtol=1e-6)


def test_engines_agree_on_the_best_document():
    indexes = [build_lexical_index(engine, CORPUS) for engine in sorted(ENGINES)]
    for query in ("insert edges", "toml config", "lowercase words", "delete rows of a path"):
        assert len({ranking(index, query)[0] for index in indexes}) == 1, query


def test_unknown_engine_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown bm25_backend 'lucene'"):
        build_lexical_index("lucene", CORPUS)


def test_top_k_best_first_positive_only():
    scores = np.array([0.0, 3.0, 1.0, 2.5, -1.0, 2.0], dtype=np.float32)
    assert top_k(scores, 3).tolist() == [1, 3, 5]
    assert top_k(scores, 100).tolist() == [1, 3, 5, 2]  # zero and negative scores are not hits
    assert top_k(scores, 1).tolist() == [1]


def test_top_k_ties_and_edge_cases():
    tied = top_k(np.array([1.0, 2.0, 2.0, 1.0]), 4).tolist()
    assert set(tied[:2]) == {1, 2} and set(tied[2:]) == {0, 3}
    assert top_k(np.array([1.0, 2.0]), 0).size == 0
    assert top_k(np.array([], dtype=np.float32), 5).size == 0
    assert top_k(np.zeros(4), 2).size == 0
