"""The query tower's data and loss: each query against its own package's frozen texts (needs .venv-train)."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embedding"))

import query_tower  # noqa: E402
from train import Encoder, take_step  # noqa: E402


def pair(package: str, query: str, card: str, code: str, negatives: list[str]) -> dict:
    """A ``pairs.py`` line."""
    return {"id": query, "package": package, "language": "python", "kind": "docstring", "query": query,
            "card": card, "code": code, "negative_cards": [f"card {text}" for text in negatives],
            "negative_codes": [f"code {text}" for text in negatives]}


@pytest.fixture
def pairs_file(tmp_path: Path) -> Path:
    """Two packages' lines; one negative text is in both."""
    lines = [pair("alpha", "open the file", "card open", "code open", ["close", "read"]),
             pair("alpha", "close it", "card close", "code close", ["open"]),
             pair("beta", "parse a header", "card parse", "code parse", ["emit", "read"])]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def documents(pairs_file: Path) -> dict[str, np.ndarray]:
    """Random unit vectors in the rows :func:`query_tower.gathered_texts` gives, as ``documents`` writes them."""
    rng = np.random.default_rng(0)
    out = {}
    for view, rows in query_tower.gathered_texts(query_tower.read_pairs(pairs_file)).items():
        vectors = rng.normal(size=(len(rows), 32)).astype(np.float32)
        out[f"train/{view}"] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return out


def test_texts_are_gathered_once_and_each_package_holds_only_its_own(pairs_file):
    """A text is one row however often it recurs; a query is scored only against its own package's rows."""
    rows = query_tower.gathered_texts(query_tower.read_pairs(pairs_file))
    # "card read" is a negative in both packages: one row, a member of both.
    assert list(rows["card"]) == ["card open", "card close", "card read", "card parse", "card emit"]
    tower = query_tower.Tower(query_tower.read_pairs(pairs_file), documents(pairs_file))
    members = {package: sorted(found["card"].tolist()) for package, found in tower.members.items()}
    assert members == {"alpha": [0, 1, 2], "beta": [2, 3, 4]}
    assert [(query, package, gold["card"]) for query, package, gold in tower.queries] == \
        [("open the file", "alpha", 0), ("close it", "alpha", 1), ("parse a header", "beta", 3)]
    # Whole batches only, each epoch in its own seeded order, the same on every run.
    batches = tower.batches(epochs=2, size=2)
    assert len(batches) == 2 and all(len(set(batch)) == 2 and set(batch) <= {0, 1, 2} for batch in batches)
    assert batches == tower.batches(epochs=2, size=2)


def test_steps_on_the_loss_bring_each_query_to_its_gold(pairs_file):
    """The loss is differentiable through the query encoder alone, and minimising it ranks each gold first."""
    config = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=64)
    torch.manual_seed(0)
    encoder = Encoder(transformers.BertModel(config))
    tower = query_tower.Tower(query_tower.read_pairs(pairs_file), documents(pairs_file))
    optimiser = torch.optim.AdamW(encoder.model.parameters(), lr=1e-3)
    batch = [0, 1, 2]
    first = tower.loss(encoder, batch, 16)
    assert torch.isfinite(first) and first.requires_grad
    for _ in range(30):
        take_step(encoder.model, optimiser, tower.loss(encoder, batch, 16))
    assert tower.loss(encoder, batch, 16).item() < first.item() / 2
    queries = encoder.vectors([query for query, _, _ in tower.queries], 16).detach()
    for row, (_, package, gold) in enumerate(tower.queries):
        for view in query_tower.VIEWS:
            members = tower.members[package][view]
            best = members[int(torch.argmax(tower.vectors[view][members] @ queries[row]))]
            assert int(best) == gold[view]


def test_an_earlier_documents_file_gives_each_text_its_vector(pairs_file, tmp_path):
    """Reused vectors are looked up by text through the earlier pairs, whatever row a text has now.

    Another model's file is refused rather than mixed in.
    """
    earlier = documents(pairs_file)
    npz = tmp_path / "documents.npz"
    np.savez(npz, model=np.array("some-model"), **earlier)
    known = query_tower.reusable_vectors([npz, pairs_file], "some-model")
    rows = query_tower.gathered_texts(query_tower.read_pairs(pairs_file))
    for view in query_tower.VIEWS:
        assert set(known[view]) == set(rows[view])
        for text, row in rows[view].items():
            assert np.array_equal(known[view][text], earlier[f"train/{view}"][row])
    with pytest.raises(SystemExit, match="not of other-model"):
        query_tower.reusable_vectors([npz, pairs_file], "other-model")
