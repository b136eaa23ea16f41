"""Index-time settings end to end: kept in the index, layered like every setting, and an embedding server that
does not answer (a real closed port, no mock) leaves a usable index and one line on stderr.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.core.index_settings import DEFAULT_EMBEDDING_MODEL
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store import embedded_views
from grepgraph.retrievers.store.index import CodeIndex

from grepgraph.cli import main
from tests.ollama_server import OllamaTestServer, closed_port

FILES = {
    "graph/edges.py": 'def insert_edge(table, source, target):\n    """Add a directed edge to the table."""\n'
                      "    table.setdefault(source, set()).add(target)\n",
    "graph/config.py": "def read_settings(path):\n    \"\"\"Parse the settings file.\"\"\"\n"
                       "    return dict(line.split('=', 1) for line in open(path))\n",
    "tests/test_edges.py": "from graph.edges import insert_edge\n\n\ndef test_insert_edge():\n"
                           "    table = {}\n    insert_edge(table, 1, 2)\n    assert table == {1: {2}}\n",
}


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("GREPGRAPH_") and name != "GREPGRAPH_EMBEDDING_CACHE":
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    forget_searchers()
    yield
    forget_searchers()


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def cli(*args: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(arg) for arg in args])
    return code, out.getvalue(), err.getvalue()


def status(repo: Path) -> dict:
    code, out, err = cli("status", repo, "--json")
    assert code == 0, err
    return json.loads(out)


def search(repo: Path, query: str) -> dict:
    forget_searchers()  # a fresh searcher, as a new process would open
    return graph.invoke({"query": query, "limit": 3}, context={"repo": str(repo), "llm_enabled": False})


def vector_notes(out: dict) -> list[str]:
    return [entry["vectors"] for entry in out["trace"] if entry.get("vectors")]


def assert_one_line_error(err: str, *fragments: str) -> None:
    assert err.startswith("grepgraph: error: ") and err.strip().count("\n") == 0, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def test_vector_settings_are_kept_by_the_index_and_used_when_it_reopens(monkeypatch, repo):
    # Pretend the repository is large: "auto" would embed cards only.
    monkeypatch.setattr(embedded_views, "AUTO_CODE_VIEW_MAX_CHUNKS", 1)
    code, _, err = cli("index", repo, "--views", "card+code", "--embed-tests", "never")
    assert code == 0, err
    reopened = CodeIndex(repo)
    assert (reopened.settings.views, reopened.settings.embed_tests) == ("card+code", "never")
    described = status(repo)
    assert described["views"] == ["card", "code"] and described["test_vectors"] is False
    assert described["settings"]["views"] == "card+code" and described["settings_changes"] == {}
    assert "views card+code, tests never" in cli("status", repo)[1]

    # A plain `index` after an edit keeps them; nothing is left to embed for the code view.
    (repo / "graph/edges.py").write_text(FILES["graph/edges.py"] + "\n\ndef drop_edge(table, source):\n"
                                         "    table.pop(source, None)\n", encoding="utf-8")
    code, _, err = cli("index", repo, "--json")
    assert code == 0, err
    assert status(repo)["vectors_pending"] == {"card": 0, "code": 0}
    searcher = Searcher(CodeIndex(repo))
    try:
        hits, _ = searcher.search("add a directed edge", 3)
    finally:
        searcher.close()
    assert hits[0].symbol == "insert_edge" and hits[0].components.get("code") is not None


def test_index_settings_come_from_flag_environment_file_then_the_index(monkeypatch, repo):
    (repo / "grepgraph.toml").write_text('[index]\nviews = "card"\n', encoding="utf-8")
    assert cli("index", repo)[0] == 0
    assert status(repo)["settings"]["views"] == "card" and status(repo)["views"] == ["card"]

    monkeypatch.setenv("GREPGRAPH_VIEWS", "card+code")
    assert status(repo)["settings_changes"] == {"views": {"now": "card", "next": "card+code", "from": "environment"}}
    assert "next index: views card -> card+code (from environment)" in cli("status", repo)[1]
    assert cli("index", repo)[0] == 0
    assert status(repo)["settings"]["views"] == "card+code"

    assert cli("index", repo, "--views", "card")[0] == 0  # the flag beats the environment
    assert status(repo)["settings"]["views"] == "card"

    monkeypatch.delenv("GREPGRAPH_VIEWS")
    (repo / "grepgraph.toml").unlink()
    assert cli("index", repo)[0] == 0  # nothing says otherwise: the index keeps what it was built with
    assert status(repo)["settings"]["views"] == "card"


def test_an_unreachable_embedding_server_leaves_the_index_as_it_was(monkeypatch, repo, tmp_path):
    assert cli("index", repo)[0] == 0
    monkeypatch.setenv("GREPGRAPH_LLM_BASE_URL", f"http://127.0.0.1:{closed_port()}")

    code, out, err = cli("index", repo, "--embedding", "ollama:nomic-embed-text")
    assert code == 2 and out == ""
    assert_one_line_error(err, "ollama:nomic-embed-text", "no Ollama server answers",
                          f"unchanged (embedding {DEFAULT_EMBEDDING_MODEL})")
    assert status(repo)["settings"]["embedding_model"] == DEFAULT_EMBEDDING_MODEL
    assert status(repo)["vectors_pending"] == {"card": 0, "code": 0}
    found = search(repo, "add a directed edge")
    assert found["results"][0]["symbol"] == "insert_edge" and not vector_notes(found)

    # Later runs are not poisoned.
    assert cli("index", repo)[0] == 0
    code, out, err = cli("index", repo, "--rebuild")
    assert code == 0 and "(rebuilt)" in out, err

    # Nothing to leave unchanged: nothing is built.
    code, _, err = cli("index", repo, "--index-dir", tmp_path / "other", "--embedding", "ollama:nomic-embed-text")
    assert code == 2
    assert_one_line_error(err, "nothing was indexed")
    assert not CodeIndex(repo, tmp_path / "other").exists()


def test_an_ollama_index_whose_server_stops_stays_searchable_and_switches_back(monkeypatch, repo, caplog):
    with OllamaTestServer() as server:
        monkeypatch.setenv("GREPGRAPH_LLM_BASE_URL", server.base_url)
        code, _, err = cli("index", repo, "--embedding", "ollama:nomic-embed-text")
        assert code == 0, err
        assert server.requests_to("/api/embed")
    monkeypatch.setenv("GREPGRAPH_LLM_BASE_URL", f"http://127.0.0.1:{closed_port()}")
    (repo / "graph/paths.py").write_text("def shortest_path(table, start, goal):\n    return [start, goal]\n",
                                         encoding="utf-8")

    code, _, err = cli("index", repo)
    assert code == 2
    assert_one_line_error(err, "no Ollama server answers", "lexical index", "is up to date")
    code, _, err = cli("index", repo, "--rebuild")
    assert code == 2
    assert_one_line_error(err, "no Ollama server answers")

    with caplog.at_level("WARNING", logger="grepgraph.retrievers.rank.search"):
        found = search(repo, "shortest path between two nodes")
    assert found["results"][0]["symbol"] == "shortest_path"  # the lexical index has the new file
    assert any("no Ollama server answers" in note and "Chroma" not in note for note in vector_notes(found))
    assert "vectors unavailable" in caplog.text and "no Ollama server answers" in caplog.text  # and in the log

    code, _, err = cli("index", repo, "--embedding", "minilm")
    assert code == 0, err
    described = status(repo)
    assert described["settings"]["embedding_model"] == "minilm"
    assert described["vectors_pending"] == {"card": 0, "code": 0}
    found = search(repo, "shortest path between two nodes")
    assert found["results"][0]["symbol"] == "shortest_path" and not vector_notes(found)
