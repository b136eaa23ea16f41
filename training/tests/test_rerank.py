"""The reranker's input, its training groups and its training step (the step needs .venv-train)."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rerank"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embedding"))

from reranker_input import (  # noqa: E402
    PAIR_TOKENS,
    QUERY_TOKENS,
    candidate_text,
    padded,
    pair_ids,
    runtime_tokenizer,
    without_comments,
)


@pytest.fixture(scope="module")
def tokenizer():
    """The runtime's tokenizer, as the reranker reads it."""
    return runtime_tokenizer()


def test_a_pair_is_query_then_candidate_within_both_budgets(tokenizer):
    """A long query keeps its first pieces, the candidate fills the rest, and the token types tell them apart."""
    query = "retry the request " * 40
    code = "def send(self, request):\n" + "    attempts += 1\n" * 200
    ids, types = pair_ids(tokenizer, query, candidate_text("http/client.py", "Client.send", code))
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    assert len(ids) == len(types) == PAIR_TOKENS
    assert ids[0] == cls and ids[-1] == sep
    first_sep = ids.index(sep)
    assert first_sep == QUERY_TOKENS + 1
    assert set(types[: first_sep + 1]) == {0} and set(types[first_sep + 1 :]) == {1}


def test_a_short_pair_is_not_padded_and_reads_the_path_first(tokenizer):
    """A short pair is as long as its pieces, and the candidate starts with where it is."""
    ids, _ = pair_ids(tokenizer, "parse a header", candidate_text("a.py", "parse", "def parse(): pass"))
    assert len(ids) < 30
    assert tokenizer.decode(ids).startswith("parse a header a. py parse")


def test_the_reranker_reads_code_without_comment_lines_or_doc_strings():
    """Doc comments go in every language, code stays; a blanked doc comment and a kept one read the same."""
    python = 'def f(self):\n    """\n    Doc.\n    """\n    # why\n    x = 1  # kept\n    s = f"""{x}"""\n    return x'
    assert without_comments(python, "m.py") == 'def f(self):\n    x = 1  # kept\n    s = f"""{x}"""\n    return x'
    rust = "/// Docs\n//! more\n#[inline]\npub fn f() -> u8 {\n    // inner\n    1 // trailing\n}"
    assert without_comments(rust, "lib.rs") == "#[inline]\npub fn f() -> u8 {\n    1 // trailing\n}"
    java = "/**\n * Javadoc.\n * @param x\n */\npublic int f(int x) {\n    /* block */\n    return x;\n}"
    assert without_comments(java, "A.java") == "public int f(int x) {\n    return x;\n}"
    blanked = "def g():\n\n\n    return 1"
    documented = 'def g():\n    """Return one."""\n    return 1'
    assert candidate_text("m.py", "g", documented).split() == candidate_text("m.py", "g", blanked).split()
    assert '"""Return one."""' in candidate_text("m.py", "g", documented, keep_comments=True)


def test_a_batch_pads_to_its_longest_pair_with_a_zero_mask():
    """Three int64 inputs, the mask marking each pair's own pieces."""
    feeds = padded([([101, 7, 102], [0, 0, 0]), ([101, 7, 102, 9, 102], [0, 0, 0, 1, 1])])
    assert feeds["input_ids"].shape == (2, 5) and feeds["input_ids"].dtype == np.int64
    assert feeds["attention_mask"].tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]
    assert feeds["token_type_ids"].tolist() == [[0, 0, 0, 0, 0], [0, 0, 0, 1, 1]]


def candidate(symbol: str, label: bool, score: float) -> dict:
    """A pool's candidate as ``pools.py`` writes it."""
    return {"path": "m.py", "symbol": symbol, "kind": "function", "score": score, "label": label,
            "ruler_label": label, "text": f"def {symbol}():\n    return {len(symbol)}"}


def test_a_group_is_the_definition_then_the_highest_placed_wrong_answers():
    """Pools without the definition, or with nothing wrong, teach nothing and are left out."""
    torch = pytest.importorskip("torch")  # noqa: F841 - train_reranker imports it
    from train_reranker import training_groups

    pools = [{"query": "q1", "kind": "docstring",
              "candidates": [candidate("a", False, 1.0), candidate("b", False, 0.5), candidate("gold", True, 0.2),
                             candidate("c", False, 0.1)]},
             {"query": "q2", "kind": "docstring", "candidates": [candidate("a", False, 1.0)]},
             {"query": "q3", "kind": "name", "candidates": [candidate("gold", True, 1.0)]}]
    groups = training_groups(pools, negatives=2)
    assert len(groups) == 1
    assert [c["symbol"] for c in groups[0]["candidates"]] == ["gold", "a", "b"]


def test_the_untrained_reranker_keeps_the_ranking_and_a_step_lifts_the_definition(tmp_path):
    """With its head at zero the scores are the ranking's; a few steps on one group raise the definition's share."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from train import take_step
    from train_reranker import Pairs, Reranker, group_loss, reranked

    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=64)
    transformers.BertModel(config).save_pretrained(str(tmp_path / "base"))
    model = Reranker(tmp_path / "base")
    pairs = Pairs()
    pool = {"query": "count the letters", "kind": "docstring",
            "candidates": [candidate("a", False, 1.0), candidate("bb", False, 0.6), candidate("gold", True, 0.5)]}
    assert [c["symbol"] for c in reranked(model.eval(), pairs, pool)] == ["a", "bb", "gold"]
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
    first = group_loss(model, pairs, [pool]).item()
    for _ in range(10):
        take_step(model, optimiser, group_loss(model, pairs, [pool]))
    assert group_loss(model, pairs, [pool]).item() < first


def test_a_reranker_that_ignores_the_query_cannot_lower_the_other_query_loss():
    """With ``other_queries`` each definition's own query is picked among others: a prior scores them alike."""
    torch = pytest.importorskip("torch")
    from train_reranker import Pairs, group_loss

    class Prior:
        """Scores each pair by its candidate alone (its word pieces), whatever the query."""

        def scores(self, feeds, ranking):
            return (feeds["token_type_ids"] * feeds["input_ids"]).sum(dim=1).float() / 1e4 + torch.log(ranking)

    groups = [{"query": f"query {n}", "kind": "docstring",
               "candidates": [candidate("gold", True, 0.5), candidate("a", False, 1.0), candidate("bb", False, 0.2)]}
              for n in range(3)]
    pairs = Pairs()
    alone = group_loss(Prior(), pairs, groups).item()
    with_others = group_loss(Prior(), pairs, groups, other_queries=2).item()
    # Half the terms are now the query-side ones, each exactly log(3): the prior ties the three queries.
    assert with_others == pytest.approx((alone + np.log(3)) / 2, rel=1e-5)
