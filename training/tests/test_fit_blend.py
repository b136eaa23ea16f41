"""The fit's loss, kinds and weights file.

The listwise loss with graded targets, kind weights, what a weights file says about the columns left out, and the
kinds a table's queries are reported and weighed by.
"""

import json
import sys
from pathlib import Path

import numpy as np
from grepgraph.retrievers.rank.learned import read_blend

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fit_blend import Package, Stacked, asked_columns, listwise_loss, query_kinds, stack, write_blend  # noqa: E402


def stacked(labels: list[float]) -> Stacked:
    """One query of three candidates, one feature each (the candidate's score is its weight times the feature)."""
    matrix = np.array([[1.0], [2.0], [3.0]])
    return Stacked(matrix, np.zeros(3), np.array(labels), np.array([0]), np.array([3]), np.array([1.0]))


def test_a_graded_target_weighs_each_gold_by_its_credit():
    """-log((e^s0 + 0.1 e^s1) / sum e^s): the container's share counts a tenth of the answer's."""
    weights = np.array([0.5])
    scores = stacked([0.0] * 3).matrix[:, 0] * weights[0]
    loss, _ = listwise_loss(weights, stacked([1.0, 0.1, 0.0]), penalty=0.0)
    expected = -np.log((np.exp(scores[0]) + 0.1 * np.exp(scores[1])) / np.exp(scores).sum())
    assert np.isclose(loss, expected)
    binary, _ = listwise_loss(weights, stacked([1.0, 0.0, 0.0]), penalty=0.0)
    assert np.isclose(binary, -np.log(np.exp(scores[0]) / np.exp(scores).sum()))


def test_the_gradient_of_a_graded_target_matches_the_loss():
    """The analytic gradient against a central difference."""
    data, weights, step = stacked([1.0, 0.3, 0.0]), np.array([0.2]), 1e-6
    _, gradient = listwise_loss(weights, data, penalty=1e-3)
    ahead, _ = listwise_loss(weights + step, data, penalty=1e-3)
    behind, _ = listwise_loss(weights - step, data, penalty=1e-3)
    assert np.isclose(gradient[0], (ahead - behind) / (2 * step), rtol=1e-5)


def package_of(kinds: list[str], query_weight: np.ndarray | None = None) -> Package:
    """One candidate-pair per query (the first the answer), a feature each: enough for stack's bookkeeping."""
    rows = 2 * len(kinds)
    columns = {"card": np.arange(rows, dtype=float), "one": np.ones(rows)}
    return Package(name="p", language="python", split="train", columns=columns,
                   label=np.array([1, 0] * len(kinds)), offset=np.zeros(rows), group=np.arange(rows),
                   query=np.repeat(np.arange(len(kinds)), 2), kinds=np.array(kinds), baseline_rank=np.zeros(len(kinds)),
                   bm25_rank=np.zeros(len(kinds)), digest="", project="p", query_weight=query_weight)


def test_kind_weights_scale_a_query_within_its_package_and_packages_stay_equal():
    """A docstring weighing 3 is three times a code line; the other package still weighs half of the whole."""
    weighted = package_of(["docstring", "code_line"], np.array([3.0, 1.0]))
    plain = package_of(["docstring", "code_line"])
    data = stack([weighted, plain], ("card",))
    assert np.allclose(data.weight, [0.375, 0.125, 0.25, 0.25])


def test_ignored_columns_have_no_weight_and_the_file_says_which(tmp_path):
    """Columns too few training queries set, and those ``--ignore`` names, are out of both models."""
    path = tmp_path / "blend.json"
    chosen = {"features": "base", "loss": "listwise", "penalty": 1e-4, "MRR@10": float("nan")}
    # The base set without the ignored columns.
    kept = ["card", "code", "bm25", "name", "symbol", "symbol_exact", "calls", "message", "exact", "exact_verbatim",
            "kind_type", "kind_callable", "kind_impl", "kind_module", "kind_text", "member_card", "member_code",
            "member_bm25", "member_name", "exception_type", "subclass", "lines", "file_words"]
    write_blend(path, [package_of(["docstring"])], chosen, np.ones(len(kept)), np.ones(len(kept) - 4), "test", {},
                {"mention", "mention_frame"}, "label")
    data = json.loads(path.read_text())
    assert data["ignored"] == ["mention", "mention_frame"] and "unsupported" not in data
    assert data["models"]["full"]["features"] == kept
    blend = read_blend(path)
    assert blend.full.features == tuple(kept)


def test_a_docstring_query_of_a_hidden_definition_is_a_kind_of_its_own(tmp_path):
    """The rulers take public definitions only; a table tells the others apart by its recorded queries."""
    queries = [{"kind": "docstring", "public": True}, {"kind": "docstring", "public": False},
               {"kind": "docstring_documented", "public": False}, {"kind": "code_line", "public": False},
               {"kind": "commit_message"}]
    path = tmp_path / "table.npz"
    np.savez(path, kind=np.array([query["kind"] for query in queries]), queries_json=np.array(json.dumps(queries)))
    assert query_kinds(np.load(path)).tolist() == ["docstring", "docstring_private", "docstring_documented_private",
                                                   "code_line", "commit_message"]
    np.savez(path, kind=np.array(["docstring"]))  # a table made before the queries were recorded
    assert query_kinds(np.load(path)).tolist() == ["docstring"]


def test_the_kind_columns_come_from_the_model_given_as_the_search_reads_the_query(tmp_path):
    """Each row gets its query's chances under the model file given, with an environment listing dropped first."""
    model = tmp_path / "asked.json"
    model.write_text(json.dumps({"models": {"report": {"bias": 0.0, "weights": {"at0:fix": 3.0, "lines:1": 1.0}},
                                            "description": {"bias": 0.0, "weights": {}},
                                            "neither": {"bias": 0.0, "weights": {"lines:6+": 9.0}}}}))
    listing = "\n".join(f"package{i}==1.{i}.0" for i in range(6))
    queries = [{"query": "fix it"}, {"query": f"fix it\n{listing}"}, {"query": "open"}]
    table = {"queries_json": json.dumps(queries), "kind": np.array(["commit_message"] * 3),
             "query": np.array([0, 0, 1, 2])}
    columns = asked_columns(table, model)
    assert columns["is_report"][0] == columns["is_report"][1] == columns["is_report"][2]  # the listing is not read
    assert columns["is_report"][2] > 0.9 > columns["is_report"][3] and columns["is_description"][3] > 0.1
