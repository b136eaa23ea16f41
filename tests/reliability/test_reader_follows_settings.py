"""A searcher that stays open (``serve``, MCP) reads each generation with the settings it was built with.

The index keeps its build settings; a re-index may switch the embedded views or the embedding model
while a long-running process holds a :class:`Searcher`. Its next search must use the new views and
embed the query with the new model (a query vector of the old model would not even have the right
length). Real index, real Chroma; the second model is the Ollama-protocol test server's embedder.
"""

from __future__ import annotations

import shutil

from grepgraph.retrievers.core.index_settings import IndexSettings
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from tests.conftest import SAMPLE_REPO, isolated_settings
from tests.ollama_server import OllamaTestServer

QUERY = "insert the call edges of a parsed file"


def test_an_open_searcher_follows_a_reindex_with_other_views_and_another_model(tmp_path, tmp_path_factory,
                                                                               monkeypatch):
    with isolated_settings(tmp_path_factory), OllamaTestServer() as ollama:
        monkeypatch.setenv("GREPGRAPH_LLM_BASE_URL", ollama.base_url)  # where ollama:<model> embeds
        repo = shutil.copytree(SAMPLE_REPO, tmp_path / "repo")
        index_dir = tmp_path / "index"
        CodeIndex(repo, index_dir, settings=IndexSettings(views="card")).update()
        searcher = Searcher(CodeIndex(repo, index_dir))
        try:
            assert set(searcher.dense_scores(QUERY)) == {"card"}

            CodeIndex(repo, index_dir, settings=IndexSettings(views="card+code")).update()
            assert set(searcher.dense_scores(QUERY)) == {"card", "code"}

            ollama_model = IndexSettings(views="card+code", embedding_model="ollama:nomic-embed-text")
            CodeIndex(repo, index_dir, settings=ollama_model).update()
            ollama.clear()
            hits, signal = searcher.search(QUERY, 5)
            assert searcher.index.settings.embedding_model == "ollama:nomic-embed-text"
            assert ollama.requests_to("/api/embed"), "the query was not embedded by the index's new model"
            assert hits and not signal.vectors_note
            assert {"card", "code"} <= set(hits[0].components)
        finally:
            searcher.close()
