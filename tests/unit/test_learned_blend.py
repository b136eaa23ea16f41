"""The learned blend's pure parts: the columns a candidate gets, products of columns, reading a weights file."""

import json

import numpy as np
import pytest
from grepgraph.retrievers.rank import learned
from grepgraph.retrievers.rank.learned import (
    BLEND_FILE,
    COLUMNS,
    POOL_COLUMNS,
    PoolRow,
    QueryShape,
    candidate_columns,
    design_matrix,
    load_blend,
    read_blend,
)

SHORT_DESCRIPTION = QueryShape(multiline=False, statement=True, question=False, described="type", wants_type=True,
                               describes_exception=False, pasted_block=False)


def columns_of(components, rows, subclasses=frozenset()):
    ids = sorted(rows)
    return ids, candidate_columns(ids, rows, components, SHORT_DESCRIPTION, {}, set(subclasses), {"http", "client"})


def test_every_column_is_there_with_one_value_per_candidate():
    rows = {1: PoolRow("a.py", "f", "function"), 2: PoolRow("a.py", "C", "class")}
    ids, columns = columns_of({"bm25": {1: 0.5}}, rows)
    assert set(columns) == {*COLUMNS, *POOL_COLUMNS}
    assert all(len(values) == len(ids) for values in columns.values())
    assert columns["bm25"].tolist() == [0.5, 0.0]  # absent evidence is 0
    assert columns["kind_callable"].tolist() == [1.0, 0.0] and columns["kind_type"].tolist() == [0.0, 1.0]
    assert columns["wants_type"].tolist() == [1.0, 1.0] and columns["multiline"].tolist() == [0.0, 0.0]


def test_a_type_carries_its_best_members_evidence_and_nobody_elses():
    rows = {1: PoolRow("a.py", "Store", "class"), 2: PoolRow("a.py", "Store.save", "method"),
            3: PoolRow("a.py", "Store.load", "method"), 4: PoolRow("b.py", "Store", "class"),
            5: PoolRow("a.py", "save", "function")}
    components = {"card": {2: 0.7, 3: 0.4, 5: 0.9}, "bm25": {3: 1.0}}
    _, columns = columns_of(components, rows)
    assert columns["member_card"].tolist() == [0.7, 0.0, 0.0, 0.0, 0.0]  # b.py's Store owns nothing here
    assert columns["member_bm25"].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_exact_symbol_frame_and_verbatim_evidence_are_columns_of_their_own():
    rows = {1: PoolRow("a.py", "f", "function"), 2: PoolRow("a.py", "g", "function")}
    _, columns = columns_of({"symbol": {1: 1.0, 2: 1.0}, "symbol_exact": {1: 1.0}, "mention": {1: 1.0, 2: 1.0},
                             "mention_frame": {1: 1.0}, "exact": {1: 1.0, 2: 1.0}, "exact_verbatim": {1: 1.0}}, rows)
    assert columns["symbol"].tolist() == [1.0, 1.0]
    assert columns["symbol_exact"].tolist() == [1.0, 0.0]
    assert columns["mention_frame"].tolist() == [1.0, 0.0]
    assert columns["exact_verbatim"].tolist() == [1.0, 0.0]


def test_a_subclass_column_marks_types_named_as_subclasses_only():
    rows = {1: PoolRow("a.py", "JsonChecker", "class"), 2: PoolRow("b.py", "JsonChecker", "function")}
    _, columns = columns_of({}, rows, {"JsonChecker"})
    assert columns["subclass"].tolist() == [1.0, 0.0]


def test_a_feature_named_with_a_star_is_the_product_of_its_columns():
    columns = {"one": np.ones(2), "bm25": np.array([0.5, 1.0]), "multiline": np.array([1.0, 1.0])}
    matrix = design_matrix(columns, ("bm25", "multiline*bm25", "bm25*bm25"))
    assert matrix.tolist() == [[0.5, 0.5, 0.25], [1.0, 1.0, 1.0]]


def blend_file(tmp_path, full_features, weights):
    path = tmp_path / "blend.json"
    path.write_text(json.dumps({"version": "test", "models": {
        "full": {"features": full_features, "weights": weights},
        "lexical": {"features": ["bm25"], "weights": [1.0]}}}))
    return path


def test_a_weights_file_scores_candidates_linearly(tmp_path):
    blend = read_blend(blend_file(tmp_path, ["bm25", "multiline*card"], [2.0, 1.0]))
    columns = {"one": np.ones(2), "bm25": np.array([0.5, 0.1]), "card": np.array([0.2, 0.9]), "multiline": np.ones(2)}
    assert blend.model(with_vectors=True).score(columns).tolist() == pytest.approx([1.2, 1.1])
    assert blend.model(with_vectors=False).features == ("bm25",)
    assert blend.full.evidence == {"bm25", "card"}


@pytest.mark.parametrize(("features", "weights"), [(["bm25", "nonsense*card"], [1.0, 1.0]), (["bm25"], [1.0, 2.0])])
def test_a_weights_file_naming_unknown_columns_or_miscounting_is_refused(tmp_path, features, weights):
    with pytest.raises(ValueError, match="unknown columns"):
        read_blend(blend_file(tmp_path, features, weights))


def test_the_shipped_weights_file_reads_when_there_is_one():
    if not BLEND_FILE.exists():
        pytest.skip("no learned blend shipped")
    blend = load_blend()
    assert len(blend.full.weights) == len(blend.full.features)
    assert not {part for f in blend.lexical.features for part in f.split("*")} & {"card", "code"}


def test_each_embedding_model_reads_the_fit_on_its_own_cosines_else_minilms(tmp_path, monkeypatch):
    monkeypatch.setattr(learned, "BLEND_FILE", tmp_path / "learned_blend.json")
    assert learned.blend_file("minilm") == tmp_path / "learned_blend.json"
    assert learned.blend_file("code-minilm") == tmp_path / "learned_blend.json"
    own = learned.fitted_blend_path("code-minilm")
    own.write_text("{}")
    assert learned.blend_file("code-minilm") == own == tmp_path / "learned_blend-code-minilm.json"
    assert learned.blend_file("code-minilm-quantized") == own
    assert learned.blend_file("ollama:nomic-embed-text") == tmp_path / "learned_blend.json"
    assert learned.fitted_blend_path("ollama:nomic-embed-text").name == "learned_blend-ollama_nomic-embed-text.json"


def test_lines_file_words_and_language_describe_the_candidate():
    rows = {1: PoolRow("src/http_client.py", "get", "function", 10, 12, "python"),
            2: PoolRow("src/server.tsx", "Page", "function", 1, 1, "tsx")}
    _, columns = columns_of({}, rows)
    assert columns["lines"].tolist() == pytest.approx([np.log(4), np.log(2)])
    assert columns["file_words"].tolist() == [1.0, 0.0]
    assert columns["lang_python"].tolist() == [1.0, 0.0] and columns["lang_typescript"].tolist() == [0.0, 1.0]


def test_standardised_evidence_says_how_far_a_candidate_stands_out_in_its_pool():
    rows = {1: PoolRow("a.py", "f", "function"), 2: PoolRow("a.py", "g", "function")}
    _, columns = columns_of({"card": {1: 0.9, 2: 0.5}}, rows)
    assert columns["card_z"].tolist() == pytest.approx([1.0, -1.0])


def test_a_weights_file_leaving_columns_to_the_hand_set_blend_is_refused(tmp_path):
    """Files fitted before 2026-11-29 could leave columns to the hand-set blend, which is gone: refit them."""
    path = blend_file(tmp_path, ["bm25"], [1.0])
    path.write_text(json.dumps({**json.loads(path.read_text()), "unsupported": ["mention"]}))
    with pytest.raises(ValueError, match="refit"):
        read_blend(path)


@pytest.mark.parametrize(("focus", "expected"), [("implementation", [0, 1, 1, 2]), ("tests", [1, 0, 1, 0]),
                                                 ("all", [0, 0, 0, 0])])
def test_out_of_focus_counts_the_demotions_the_focus_rule_would_apply(focus, expected):
    rows = {1: PoolRow("src/a.py", "f", "function"), 2: PoolRow("tests/test_a.py", "test_f", "function", is_test=True),
            3: PoolRow("docs/guide.md", "Guide", "text"), 4: PoolRow("tests/notes.md", "Notes", "text", is_test=True)}
    ids = sorted(rows)
    columns = candidate_columns(ids, rows, {}, SHORT_DESCRIPTION, {}, set(), set(), focus)
    assert columns["out_of_focus"].tolist() == expected


def test_a_model_reading_the_focus_column_demotes_by_itself(tmp_path):
    assert read_blend(blend_file(tmp_path, ["bm25", "out_of_focus"], [1.0, -3.0])).full.weighs_focus
    assert not read_blend(blend_file(tmp_path, ["bm25"], [1.0])).full.weighs_focus


def test_the_pool_describes_a_candidates_file_and_type():
    rows = {1: PoolRow("a.py", "Store", "class"), 2: PoolRow("a.py", "Store.save", "method"),
            3: PoolRow("a.py", "helper", "function"), 4: PoolRow("b.py", "load", "function")}
    _, columns = columns_of({"card": {1: 0.4, 2: 0.7, 3: 0.2, 4: 0.5}}, rows)
    assert columns["file_card"].tolist() == pytest.approx([0.7, 0.7, 0.7, 0.5])
    assert columns["file_pool"].tolist() == pytest.approx([np.log(4)] * 3 + [np.log(2)])
    assert columns["owner_card"].tolist() == pytest.approx([0.0, 0.4, 0.0, 0.0])


def test_a_file_without_vectors_gets_the_median_files_best_not_its_neutral_stand_in():
    rows = [PoolRow("a.py", "f", "function"), PoolRow("b.py", "g", "function"), PoolRow("c.py", "h", "function"),
            PoolRow("new.py", "parse", "function")]
    context = learned.context_columns([1, 2, 3, 4], rows, np.array([0.8, 0.6, 0.4, 0.3]), unembedded={4})
    assert context["file_card"].tolist() == pytest.approx([0.8, 0.6, 0.4, 0.6])
