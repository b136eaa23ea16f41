"""The device kit's round trip: a model's weights cut into float16 parts and joined again (needs .venv-train)."""

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embedding"))

import device_kit  # noqa: E402


def tiny_model(folder: Path) -> "transformers.PreTrainedModel":
    """A small BERT saved as a Hugging Face folder, as train.py keeps ``best/``."""
    config = transformers.BertConfig(vocab_size=5000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=128)
    torch.manual_seed(0)
    model = transformers.BertModel(config)
    model.save_pretrained(str(folder))
    (folder / "step.json").write_text(json.dumps({"step": 7}))
    return model


def test_parts_stay_under_the_return_limit_and_join_to_the_same_weights(tmp_path, monkeypatch):
    """Every part fits what a device run may return; joined, each weight is its float16 rounding in float32."""
    model = tiny_model(tmp_path / "best")
    monkeypatch.setattr(device_kit, "PART_BYTES", 200_000)  # a tiny model still cuts into several parts
    device_kit.split_weights(tmp_path / "best", tmp_path / "out")
    parts = sorted((tmp_path / "out").glob(f"{device_kit.WEIGHTS}.part*"))
    assert len(parts) > 2 and all(part.stat().st_size <= 200_000 for part in parts)
    device_kit.unpack(tmp_path / "out", tmp_path / "joined")
    joined = transformers.AutoModel.from_pretrained(str(tmp_path / "joined"))
    assert json.loads((tmp_path / "joined" / "step.json").read_text()) == {"step": 7}
    for name, tensor in model.state_dict().items():
        restored = joined.state_dict()[name]
        assert restored.dtype == torch.float32
        assert torch.allclose(restored, tensor.half().float())  # float16 rounding, nothing else


def test_unpack_without_parts_says_so(tmp_path):
    """A folder the run returned nothing to is refused with the file it looked for."""
    with pytest.raises(SystemExit, match="no weights"):
        device_kit.unpack(tmp_path, tmp_path / "joined")
