"""Derived MiniLM files: made once in the user's cache, safe under a race; the quantized one is another model."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from grepgraph.retrievers.dense.derived_models import (
    UNGUARDED_RECIPE,
    derived_path,
    models_cache_dir,
    quantized_model,
    quantized_path,
    unguarded_model,
)
from grepgraph.retrievers.dense.embeddings import embedder_for
from grepgraph.retrievers.dense.minilm import (
    MINILM_MODEL_ID,
    MINILM_QUANTIZED_MODEL_ID,
    MiniLMEmbedder,
    cut_ids,
    minilm_files,
)
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from tests.conftest import SAMPLE_REPO

TEXTS = ["def parse_header(line):\n    name, _, value = line.partition(':')\n    return name, value",
         "Open a connection to the database and retry on timeout.",
         "class RingBuffer:\n    def push(self, item): ..."]


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user cache of the test's own, so the quantized model is made here."""
    home = tmp_path / "cache-home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def test_the_quantized_copy_is_made_once_and_named_after_its_source(tmp_path):
    source = minilm_files()[0]
    made = quantized_model(source, tmp_path)
    assert made == quantized_path(source, tmp_path) and made.is_file()
    stamp = made.stat().st_mtime_ns
    assert quantized_model(source, tmp_path) == made and made.stat().st_mtime_ns == stamp
    assert [path.name for path in tmp_path.iterdir()] == [made.name]  # no scratch files left

    other_source = tmp_path / "other" / "model.onnx"
    other_source.parent.mkdir()
    other_source.write_bytes(source.read_bytes() + b"\0")  # another model file: another cache entry
    assert quantized_path(other_source, tmp_path) != made


def test_two_processes_making_it_at_once_both_get_one_complete_model(tmp_path):
    script = ("import sys; from pathlib import Path\n"
              "from grepgraph.retrievers.dense.minilm import minilm_files\n"
              "from grepgraph.retrievers.dense.derived_models import quantized_model\n"
              "print(quantized_model(minilm_files()[0], Path(sys.argv[1])))\n")
    racers = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True)
              for _ in range(2)]
    paths = {racer.communicate(timeout=300)[0].strip() for racer in racers}
    assert all(racer.returncode == 0 for racer in racers)
    assert len(paths) == 1 and [p.name for p in tmp_path.iterdir()] == [Path(paths.pop()).name]


def test_quantized_vectors_stay_close_to_the_packaged_model_under_another_id(cache_home):
    exact, quantized = embedder_for("minilm"), embedder_for("minilm-quantized")
    assert (exact.model_id, quantized.model_id) == (MINILM_MODEL_ID, MINILM_QUANTIZED_MODEL_ID)
    assert quantized.model_path().is_relative_to(cache_home)
    a, b = exact.embed(TEXTS), quantized.embed(TEXTS)
    cosines = (a * b).sum(axis=1)
    assert np.all(cosines > 0.97) and not np.allclose(a, b)
    # The nearest text of each query is the same under both models.
    assert np.array_equal((a @ a.T).argsort(axis=1)[:, -2], (b @ b.T).argsort(axis=1)[:, -2])


def test_without_a_writable_cache_the_packaged_model_runs_and_says_so(tmp_path, monkeypatch, caplog):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    embedder = MiniLMEmbedder(quantized=True)
    assert embedder.model_id == MINILM_MODEL_ID
    assert embedder.embed(TEXTS).shape == (3, 384)
    assert "quantized embedding model could not be made" in caplog.text


def test_the_default_model_runs_without_nan_guards_and_embeds_exactly_as_the_packaged_file(cache_home):
    import onnx

    packaged = minilm_files()[0]
    default = MiniLMEmbedder()
    assert default.model_id == MINILM_MODEL_ID and default.model_path().is_relative_to(cache_home)
    assert default.model_path() == unguarded_model(packaged)
    ops = [node.op_type for node in onnx.load(str(default.model_path())).graph.node]
    packaged_ops = [node.op_type for node in onnx.load(str(packaged)).graph.node]
    assert "IsNaN" in packaged_ops and "IsNaN" not in ops
    assert ops.count("Softmax") == packaged_ops.count("Softmax") and ops.count("Where") < packaged_ops.count("Where")

    as_packaged = MiniLMEmbedder(batch_size=2)
    as_packaged._model_path = packaged
    texts = [*TEXTS, "x", " ".join(["token"] * 300)]  # padded batches: masked keys are where a guard would act
    assert np.allclose(default.embed(texts), as_packaged.embed(texts), atol=1e-5)


def test_a_damaged_unguarded_copy_gives_way_to_the_packaged_file(cache_home, caplog):
    packaged = minilm_files()[0]
    damaged = derived_path(packaged, UNGUARDED_RECIPE, models_cache_dir())
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"not a model")
    embedder = MiniLMEmbedder()
    assert embedder.model_path() == damaged
    vectors = embedder.embed(TEXTS)
    assert embedder.model_path() == packaged and embedder.model_id == MINILM_MODEL_ID
    assert "does not load" in caplog.text
    as_packaged = MiniLMEmbedder()
    as_packaged._model_path = packaged
    assert np.allclose(vectors, as_packaged.embed(TEXTS), atol=1e-5)


def test_a_cut_keeps_the_closing_token():
    assert cut_ids([101, 7, 8, 9, 102], 3) == [101, 7, 102]
    assert cut_ids([101, 7, 102], 3) == [101, 7, 102]
    assert cut_ids([101, 7, 8, 102], None) == [101, 7, 8, 102]


def test_an_index_embedded_with_the_packaged_model_is_re_embedded_by_the_quantized_one(tmp_path, cache_home):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    first = CodeIndex(repo, embedder=MiniLMEmbedder()).update()
    assert first.vectors_embedded > 0

    index = CodeIndex(repo, embedder=MiniLMEmbedder(quantized=True))
    switched = index.update()
    assert switched.rebuilt and switched.vectors_embedded == first.vectors_embedded
    assert index.status()["versions"]["embedding"] == MINILM_QUANTIZED_MODEL_ID
    unchanged = CodeIndex(repo, embedder=MiniLMEmbedder(quantized=True)).update()
    assert not unchanged.rebuilt and unchanged.vectors_embedded == 0

    hits, _ = Searcher(index).search("add an edge between two nodes", 5)
    assert hits and not any(index.status()["vectors_pending"].values())
