"""The document tower: the cached split of the model, a step that trains only the top layers (needs .venv-train)."""

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embedding"))

import document_tower  # noqa: E402
from train import EVAL_PACKAGES, Encoder  # noqa: E402

CARDS = ["function add in pkg a", "function load in pkg a", "class Store in pkg a", "function save in pkg a",
         "function drop in pkg b"]
CODES = ["def add(a, b):\n    return a + b", "def load(path):\n    return open(path).read()",
         "class Store:\n    rows = []", "def save(self, row):\n    self.rows.append(row)",
         "def drop(self):\n    self.rows.clear()"]


def tiny_model(folder: Path) -> None:
    """A four-layer BERT with the runtime tokenizer's vocabulary, saved as the base."""
    config = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=4, num_attention_heads=2,
                                     intermediate_size=64)
    torch.manual_seed(0)
    transformers.BertModel(config).save_pretrained(str(folder))


def write_inputs(folder: Path) -> argparse.Namespace:
    """Pairs, one watched validation package, and frozen query vectors of the model's width."""
    pairs = [{"query": f"query {number}", "package": "pkg", "card": CARDS[number], "code": CODES[number],
              "negative_cards": [CARDS[(number + 1) % 5], CARDS[(number + 2) % 5]],
              "negative_codes": [CODES[(number + 1) % 5]]} for number in range(4)]
    (folder / "pairs.jsonl").write_text("".join(json.dumps(pair) + "\n" for pair in pairs))
    (folder / "eval").mkdir()
    package = {"package": EVAL_PACKAGES[0], "language": "python",
               "chunks": [{"card": card, "code": code, "is_test": False} for card, code in zip(CARDS, CODES)],
               "queries": [{"query": "add two numbers", "gold": [0], "kind": "docstring"}]}
    (folder / "eval" / f"{EVAL_PACKAGES[0]}.json").write_text(json.dumps(package))
    tiny_model(folder / "base")
    (folder / "work").mkdir()
    rng = np.random.default_rng(0)
    np.savez(folder / "work" / "queries.npz", model=np.array("test"), train=rng.normal(size=(4, 32)),
             **{f"eval/{EVAL_PACKAGES[0]}": rng.normal(size=(1, 32))})
    return argparse.Namespace(pairs=folder / "pairs.jsonl", eval_dir=folder / "eval", work=folder / "work",
                              base=folder / "base", trainable=2, cache_batch=2, epochs=2, batch=2, negatives=2,
                              learning_rate=1e-3, eval_every=2, checkpoint_every=1, max_steps=3, resume=False,
                              threads=1, max_queries=None)


def test_the_cached_lower_layers_and_the_top_give_the_whole_models_vectors(tmp_path):
    """Lower layers then top layers, with padding, are the whole model's mean-pooled vectors."""
    tiny_model(tmp_path)
    layers = document_tower.Layers(tmp_path, trainable=2)
    encoder = Encoder(layers.model)
    layers.model.eval()
    ids = [encoder.tokenizer.encode(text).ids for text in CODES]
    with torch.no_grad():
        split = layers.vectors(layers.lower(ids), [len(row) for row in ids]).numpy()
    with torch.no_grad():
        whole = encoder.vectors(CODES, 128).numpy()
    assert np.allclose((split * whole).sum(axis=1), 1.0, atol=1e-5)


def test_training_moves_only_the_top_layers_and_resumes(tmp_path):
    """The cache holds each text once; training changes only the top layers and goes on from a checkpoint."""
    args = write_inputs(tmp_path)
    document_tower.build_cache(args)
    cache = document_tower.Cache(args.work / "cache", "card")
    assert len(cache.offsets) == len(CARDS) + 1  # the training texts and the package's chunks, each once
    trained = document_tower.train(args).model.state_dict()
    log = [json.loads(line) for line in (args.work / "train_log.jsonl").read_text().splitlines()]
    assert [record["step"] for record in log if "watched" in record] == [0, 2, 3]
    assert transformers.AutoModel.from_pretrained(str(args.work / "best")).config.num_hidden_layers == 4
    base = transformers.AutoModel.from_pretrained(str(args.base)).state_dict()
    for name in ("embeddings.word_embeddings.weight", "encoder.layer.1.output.dense.weight"):
        assert torch.equal(base[name], trained[name])
    assert not torch.equal(base["encoder.layer.3.output.dense.weight"], trained["encoder.layer.3.output.dense.weight"])
    document_tower.train(argparse.Namespace(**{**vars(args), "resume": True, "max_steps": 4}))
    log = [json.loads(line) for line in (args.work / "train_log.jsonl").read_text().splitlines()]
    assert log[-1]["step"] == 4 and "watched" in log[-1]
