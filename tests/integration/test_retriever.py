"""``GrepGraphRetriever`` on a real index of the fixture repository, alone and inside an LCEL chain."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from grepgraph.graphs.resources import forget_searchers
from grepgraph.graphs.retriever import GrepGraphRetriever
from grepgraph.retrievers.core.errors import IndexMissing
from grepgraph.retrievers.store.index import CodeIndex
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_repo"
METADATA = {"path", "start_line", "end_line", "symbol", "kind", "score"}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("retriever")
    repo, index_dir = root / "sample_repo", root / "index"
    shutil.copytree(FIXTURE, repo)
    CodeIndex(repo, index_dir).update()
    yield {"repo": str(repo), "index_dir": str(index_dir)}
    forget_searchers()


@pytest.fixture()
def retriever(indexed) -> GrepGraphRetriever:
    return GrepGraphRetriever(**indexed, limit=3, context={"llm_enabled": False})


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(f"{d.metadata['path']}:{d.metadata['start_line']} {d.metadata['symbol']}\n{d.page_content}"
                       for d in docs)


def test_invoke_returns_documents_with_metadata(retriever):
    docs = retriever.invoke("store_parse_result")
    assert 1 <= len(docs) <= 3
    assert all(isinstance(doc, Document) and METADATA <= set(doc.metadata) for doc in docs)
    top = docs[0]
    assert top.metadata["path"] == "graphstore/store.py"
    assert top.metadata["symbol"] == "GraphStore.store_parse_result"
    assert top.metadata["kind"] == "method"
    assert top.metadata["start_line"] <= top.metadata["end_line"]
    assert "def store_parse_result" in top.page_content
    scores = [doc.metadata["score"] for doc in docs]
    assert scores == sorted(scores, reverse=True)


def test_in_an_lcel_chain_invoke_and_batch(retriever):
    chain = retriever | RunnableLambda(format_docs)
    text = chain.invoke("handleSearch")
    assert text.startswith("cmd/server/main.go:") and "handleSearch" in text.splitlines()[0]
    texts = chain.batch(["createRouter", "load_config"])
    assert texts[0].startswith("web/src/router.ts:") and "createRouter" in texts[0].splitlines()[0]
    assert texts[1].startswith("graphstore/config.py:") and "load_config" in texts[1].splitlines()[0]


def test_async_invoke(retriever):
    docs = asyncio.run(retriever.ainvoke("createRouter"))
    assert docs[0].metadata["symbol"] == "createRouter"


def test_focus_and_limit_are_passed_to_the_graph(indexed):
    tests_first = GrepGraphRetriever(**indexed, limit=2, focus="tests", context={"llm_enabled": False})
    docs = tests_first.invoke("store parse result edges")
    assert len(docs) == 2
    assert docs[0].metadata["path"].startswith("tests/")


def test_literal_and_regex_modes_with_path_and_language_filters(indexed):
    literal = GrepGraphRetriever(**indexed, limit=20, mode="literal", paths=["graphstore/**"],
                                 context={"llm_enabled": False})
    docs = literal.invoke("store_parse_result")
    assert docs and all(doc.metadata["path"].startswith("graphstore/") for doc in docs)
    assert all("store_parse_result" in doc.page_content for doc in docs)
    regex = GrepGraphRetriever(**indexed, limit=20, mode="regex", languages=["python"],
                               context={"llm_enabled": False})
    docs = regex.invoke(r"def (delete_file|callers_of)\b")
    assert {doc.metadata["symbol"].rsplit(".", 1)[-1] for doc in docs} >= {"delete_file", "callers_of"}
    assert all(doc.metadata["path"].endswith(".py") for doc in docs)


def test_graph_questions_keep_their_relation(retriever):
    docs = retriever.invoke("who calls store_parse_result")
    assert docs and all("relation" in doc.metadata for doc in docs)


def test_the_graph_run_is_a_child_of_the_retriever_run(retriever):
    class Names(BaseCallbackHandler):
        def __init__(self) -> None:
            self.chains: list[str] = []

        def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs) -> None:
            self.chains.append(kwargs.get("name") or "")

    names = Names()
    retriever.invoke("store_parse_result", config={"callbacks": [names]})
    assert "code_search" in names.chains


def test_missing_index_raises(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    with pytest.raises(IndexMissing):
        GrepGraphRetriever(repo=str(tmp_path), context={"llm_enabled": False}).invoke("x")
