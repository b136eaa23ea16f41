import math
import shutil
from pathlib import Path

from grepgraph.retrievers.core.index_settings import IndexSettings
from grepgraph.retrievers.langchain import GrepGraphEmbeddings
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from tests.ollama_server import OllamaTestServer

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_repo"


def test_langchain_embeddings_give_unit_vectors_that_rank_related_text_higher():
    embeddings = GrepGraphEmbeddings()
    documents = embeddings.embed_documents(["insert edges into the call graph table", "parse a TOML config file"])
    query = embeddings.embed_query("how are edges stored?")
    assert len(query) == 384 and math.isclose(sum(v * v for v in query), 1.0, rel_tol=1e-3)
    similarity = [sum(a * b for a, b in zip(query, doc)) for doc in documents]
    assert similarity[0] > similarity[1]


def test_an_index_embedded_by_ollama_is_searched_with_the_same_model(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE, repo, symlinks=True)
    with OllamaTestServer() as server:
        monkeypatch.setenv("GREPGRAPH_LLM_BASE_URL", server.base_url)
        summary = CodeIndex(repo, settings=IndexSettings(embedding_model="ollama:nomic-embed-text")).update()
        assert summary.vectors_embedded > 0
        assert server.requests_to("/api/embed")
        reopened = CodeIndex(repo)  # no settings given: the index's own are used
        assert reopened.settings.embedding_model == "ollama:nomic-embed-text"
        hits, _ = Searcher(reopened).search("insert edges into the graph store", 5)
        assert hits and all(hit.components.get("card") is not None for hit in hits[:3])
        assert any(r.get("model") == "nomic-embed-text" for r in server.requests_to("/api/embed"))


def test_a_large_call_embeds_on_several_sessions_with_the_same_vectors():
    from grepgraph.retrievers.dense.minilm import PARALLEL_MIN_TEXTS_PER_SESSION, MiniLMEmbedder

    texts = [f"def handler_{n}(request):\n    return route(request, {'x' * (n % 40)!r})" for n in range(96)]
    assert len(texts) >= 2 * PARALLEL_MIN_TEXTS_PER_SESSION
    alone = MiniLMEmbedder(threads=1).embed(texts)
    side_by_side = MiniLMEmbedder(threads=2)
    vectors = side_by_side.embed(texts)
    assert len(side_by_side._helpers) == 1  # a second session did half the batches
    assert float(abs(vectors - alone).max()) < 1e-5
    side_by_side.release_helpers()
    assert side_by_side._helpers == []
    assert float(abs(side_by_side.embed(texts[:3]) - alone[:3]).max()) < 1e-5  # few texts: one session
    assert side_by_side._helpers == []
