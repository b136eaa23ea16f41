"""The code-trained MiniLM (``code-minilm``): loads from its pinned file, makes its own vectors under its own id."""

import shutil

import numpy as np
from grepgraph.retrievers.core.index_settings import IndexSettings
from grepgraph.retrievers.dense.derived_models import quantized_model
from grepgraph.retrievers.dense.embeddings import embedder_for, query_model_for
from grepgraph.retrievers.dense.minilm import (
    CODE_MINILM_MODEL_ID,
    CODE_MINILM_QUANTIZED_MODEL_ID,
    CODE_MINILM_QUERY_MODEL_ID,
    MINILM_MODEL_ID,
    MINILM_QUANTIZED_MODEL_ID,
    MiniLMEmbedder,
)
from grepgraph.retrievers.dense.model_files import (
    CODE_MODEL,
    CODE_MODEL_QUANTIZED,
    CODE_QUERY_MODEL,
    DATA_DIR,
    code_query_model_file,
    sha256_of,
)
from grepgraph.retrievers.dense.sync import vector_model_ids
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from tests.conftest import SAMPLE_REPO

TEXTS = ["def parse_header(line):\n    name, _, value = line.partition(':')\n    return name, value",
         "Open a connection to the database and retry on timeout.",
         "class RingBuffer:\n    def push(self, item): ..."]


def test_the_setting_runs_the_pinned_file_into_unit_vectors_under_its_own_id():
    code = embedder_for("code-minilm")
    assert code.model_path() == DATA_DIR / CODE_MODEL.name
    assert sha256_of(code.model_path()) == CODE_MODEL.sha256
    assert code.model_id == CODE_MINILM_MODEL_ID not in (MINILM_MODEL_ID, MINILM_QUANTIZED_MODEL_ID)
    assert vector_model_ids("code-minilm", code) == (CODE_MINILM_MODEL_ID, f"{CODE_MINILM_MODEL_ID}/128")

    vectors = code.embed(TEXTS)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Another model: close to MiniLM's vectors (fine-tuned from it), not the same ones.
    cosines = (vectors * embedder_for("minilm").embed(TEXTS)).sum(axis=1)
    assert np.all(cosines > 0.5) and not np.allclose(cosines, 1.0, atol=1e-3)


def test_both_code_settings_embed_queries_with_the_pinned_query_tower_and_documents_as_before():
    assert sha256_of(code_query_model_file()) == CODE_QUERY_MODEL.sha256
    tower = MiniLMEmbedder()
    tower._model_path, tower._model_id = code_query_model_file(), "tower"
    for name, documents_id in (("code-minilm", CODE_MINILM_MODEL_ID),
                               ("code-minilm-quantized", CODE_MINILM_QUANTIZED_MODEL_ID)):
        code = embedder_for(name)
        assert code.model_id == documents_id and query_model_for(name) == CODE_MINILM_QUERY_MODEL_ID
        query = code.embed_query(TEXTS[1])
        assert query.shape == (384,) and abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
        assert np.allclose(query, tower.embed([TEXTS[1]])[0], atol=1e-5)
        # A copy of the code model trained on the query side: near its vectors of the same text, not the same.
        cosine = float(query @ code.embed([TEXTS[1]])[0])
        assert 0.7 < cosine < 0.9999
    # MiniLM has no tower: a query is embedded as a document.
    minilm = embedder_for("minilm")
    assert query_model_for("minilm") == "minilm"
    assert np.allclose(minilm.embed_query(TEXTS[1]), minilm.embed([TEXTS[1]])[0], atol=1e-6)


def test_a_query_loads_only_the_tower_and_an_index_only_the_document_model():
    searcher_side = MiniLMEmbedder(quantized=True, code=True)
    first = searcher_side.embed_query(TEXTS[1])
    assert searcher_side._query_session is not None and searcher_side._session is None
    # The document model loads when texts are embedded, beside the tower, which queries keep using.
    documents = searcher_side.embed(TEXTS[:1])
    assert searcher_side._session is not None
    assert np.allclose(searcher_side.embed_query(TEXTS[1]), first, atol=1e-6)
    assert np.allclose(documents, embedder_for("code-minilm-quantized").embed(TEXTS[:1]), atol=1e-6)

    indexer_side = MiniLMEmbedder(quantized=True, code=True)
    indexer_side.embed(TEXTS)
    assert indexer_side._session is not None and indexer_side._query_session is None


def test_the_quantized_setting_runs_the_shipped_quantized_copy_under_its_own_id(tmp_path):
    quantized = embedder_for("code-minilm-quantized")
    assert quantized.model_id == CODE_MINILM_QUANTIZED_MODEL_ID
    assert quantized.model_path() == DATA_DIR / CODE_MODEL_QUANTIZED.name
    assert sha256_of(quantized.model_path()) == CODE_MODEL_QUANTIZED.sha256
    # Other vectors than the code model's (another id), but close to them.
    vectors = quantized.embed(TEXTS)
    cosines = (vectors * embedder_for("code-minilm").embed(TEXTS)).sum(axis=1)
    assert np.all(cosines > 0.97) and not np.allclose(cosines, 1.0, atol=1e-4)
    assert vector_model_ids("code-minilm-quantized", quantized)[0] == CODE_MINILM_QUANTIZED_MODEL_ID
    # The shipped copy is what the quantization recipe makes of the shipped model.
    remade = MiniLMEmbedder()
    remade._model_path, remade._model_id = quantized_model(DATA_DIR / CODE_MODEL.name, tmp_path), "remade"
    assert np.allclose(remade.embed(TEXTS), vectors, atol=1e-5)


def test_an_index_switched_to_the_code_model_re_embeds_every_vector(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    first = CodeIndex(repo, settings=IndexSettings()).update()
    assert first.vectors_embedded > 0

    index = CodeIndex(repo, settings=IndexSettings(embedding_model="code-minilm"))
    switched = index.update()
    assert switched.rebuilt and switched.vectors_embedded == first.vectors_embedded
    status = index.status()
    assert status["versions"]["embedding"] == CODE_MINILM_MODEL_ID
    assert status["query_embedding"] == CODE_MINILM_QUERY_MODEL_ID
    assert not any(status["vectors_pending"].values())
    # Reopened without settings, it keeps the code model and embeds nothing more.
    again = CodeIndex(repo)
    assert not again.update().rebuilt and again.settings.embedding_model == "code-minilm"

    hits, _ = Searcher(again).search("add an edge between two nodes", 5)
    assert hits
