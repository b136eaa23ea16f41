"""The smaller student: which layers it keeps, the texts it learns from, its loss (needs .venv-train)."""

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embedding"))

import student  # noqa: E402
from test_query_tower import documents, pairs_file  # noqa: E402, F401 - the fixture and its vectors
from train import Encoder, take_step  # noqa: E402


def tiny_config(layers: int) -> "transformers.BertConfig":
    """A small BERT of the runtime tokenizer's vocabulary."""
    return transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
                                   intermediate_size=64)


def test_the_student_keeps_the_chosen_layers_of_the_base_in_order(tmp_path):
    """The kept layers are the base's own weights, in order, and the saved config says how many."""
    torch.manual_seed(0)
    base = transformers.BertModel(tiny_config(4))
    base.save_pretrained(str(tmp_path / "base"))
    small = student.student_of(tmp_path / "base", [1, 3])
    assert small.config.num_hidden_layers == 2 and len(small.encoder.layer) == 2
    for kept, original in zip(small.encoder.layer, (base.encoder.layer[1], base.encoder.layer[3])):
        assert torch.equal(kept.attention.self.query.weight, original.attention.self.query.weight)
    small.save_pretrained(str(tmp_path / "small"))  # what export.py reads back: two layers
    assert transformers.AutoConfig.from_pretrained(str(tmp_path / "small")).num_hidden_layers == 2


def test_each_text_comes_once_an_epoch_with_its_vector_in_batches_of_one_view(pairs_file, tmp_path):  # noqa: F811
    """The sample pairs each text with the teacher's vector of it; a batch holds one view; seeded."""
    vectors = documents(pairs_file)
    np.savez(tmp_path / "documents.npz", **vectors)
    texts = student.training_texts(pairs_file, np.load(tmp_path / "documents.npz"), per_view=3)
    assert sorted(view for view, _, _ in texts) == ["card"] * 3 + ["code"] * 3
    rows = student.gathered_texts(student.read_pairs(pairs_file))
    for view, text, vector in texts:
        assert np.array_equal(vector, vectors[f"train/{view}"][rows[view][text]])
    batches = student.batches_of(texts, size=2, epoch=0)
    assert all(len({view for view, _, _ in batch}) == 1 for batch in batches)
    assert sorted(text for batch in batches for _, text, _ in batch) == sorted(text for _, text, _ in texts)
    assert batches == student.batches_of(texts, size=2, epoch=0)


def test_steps_on_the_loss_bring_the_students_vectors_to_the_teachers(pairs_file, tmp_path):  # noqa: F811
    """One minus the cosine to the teacher's vector, minimised, brings the student's vectors to the teacher's."""
    np.savez(tmp_path / "documents.npz", **documents(pairs_file))
    texts = student.training_texts(pairs_file, np.load(tmp_path / "documents.npz"), per_view=5)
    torch.manual_seed(0)
    encoder = Encoder(transformers.BertModel(tiny_config(1)))
    optimiser = torch.optim.AdamW(encoder.model.parameters(), lr=3e-3)
    teacher = torch.from_numpy(np.stack([vector for _, _, vector in texts])).float()

    def agreement() -> torch.Tensor:
        return (encoder.vectors([text for _, text, _ in texts], 16) * teacher).sum(dim=1).mean()

    before = agreement().item()
    for epoch in range(75):
        for batch in student.batches_of(texts, size=len(texts), epoch=epoch):  # one batch a view
            take_step(encoder.model, optimiser, student.distillation_loss(encoder, batch))
    assert agreement().item() > max(0.9, before + 0.3)
