"""A model's weights read back from the ONNX file export.py writes, and the weight average of two models.

Needs .venv-train (torch, transformers, onnx), like test_device_kit.py.
"""

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("onnx")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embedding"))

import export  # noqa: E402
import from_onnx  # noqa: E402
import soup  # noqa: E402


def tiny_model(seed: int) -> "transformers.PreTrainedModel":
    """A small BERT whose linear layers are big enough to be stored in float16 by export.py."""
    config = transformers.BertConfig(vocab_size=500, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=128, attn_implementation="eager")
    torch.manual_seed(seed)
    model = transformers.BertModel(config).eval()
    with torch.no_grad():  # no two equal tensors (zero biases, unit norms), which the exporter would share
        for weight in model.parameters():
            weight.normal_(0.0, 0.05)
    return model


def test_every_weight_comes_back_under_its_own_name(tmp_path):
    """Named and unnamed (MatMul) initialisers both map to the model's weights, up to the file's float16."""
    model = tiny_model(0)
    path = tmp_path / "tiny.onnx"
    export.export_graph(model, path)
    export.float16_storage(path)
    weights = from_onnx.onnx_weights(path)
    state = model.state_dict()
    assert set(weights) == {name for name in state if not name.startswith("pooler.")}
    for name, array in weights.items():
        expected = state[name].half().float() if state[name].numel() >= export.FLOAT16_MIN_ELEMENTS else state[name]
        assert torch.equal(torch.from_numpy(array), expected), name
    # Query, key and value have the same shape: only the graph's order tells them apart.
    assert not torch.equal(torch.from_numpy(weights["encoder.layer.1.attention.self.query.weight"]),
                           torch.from_numpy(weights["encoder.layer.1.attention.self.key.weight"]))


def test_the_soup_is_the_weighted_mean_and_keeps_integer_buffers():
    """Floating weights are averaged with the given shares; integer tensors are the first model's."""
    first, second = tiny_model(1).state_dict(), tiny_model(2).state_dict()
    mixed = soup.averaged([first, second], [0.25, 0.75])
    name = "encoder.layer.0.output.dense.weight"
    assert torch.allclose(mixed[name], 0.25 * first[name] + 0.75 * second[name])
    integers = [key for key, value in first.items() if not value.is_floating_point()]
    assert all(torch.equal(mixed[key], first[key]) for key in integers)


def test_models_of_other_shapes_are_refused():
    """Two models with different weights cannot be averaged."""
    first = tiny_model(1).state_dict()
    with pytest.raises(SystemExit, match="same weights"):
        soup.averaged([first, {"other.weight": torch.zeros(1)}], [0.5, 0.5])
