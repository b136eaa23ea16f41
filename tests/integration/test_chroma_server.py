"""A Chroma server as the vector store, end to end.

``chroma run`` is started on a free loopback port with a temporary path; two copies of the fixture
repository (one with an extra module) are indexed into it with ``grepgraph index --chroma-url``,
searched through the graph and the CLI, re-indexed after a change, and a third repository on its own
server is searched while that server is down. Every index remembers its server, so nothing after
the first ``index`` passes the URL again.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from grepgraph.cli import main
from tests.processes import free_port, stop_process_group, wait_until_answering

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_repo"
CHROMA = Path(sys.executable).with_name("chroma")
STARTUP_TIMEOUT_S = 60
VIEWS = ("card", "code")
# Settings a developer's shell may carry that would point the runs below elsewhere.
FOREIGN_ENV = ("GREPGRAPH_CHROMA_URL", "GREPGRAPH_REPO", "GREPGRAPH_INDEX_DIR", "GREPGRAPH_CONFIG")

LEDGER = '''"""Double-entry bookkeeping for what the graph store bills."""


def reconcile_ledger_entries(debits: list[int], credits: list[int]) -> list[int]:
    """Match every debit with a credit of the same amount; return the debits left unmatched."""
    remaining = list(credits)
    unmatched = []
    for amount in debits:
        if amount in remaining:
            remaining.remove(amount)
        else:
            unmatched.append(amount)
    return unmatched
'''

PRUNE = '''

def prune_orphan_edges(store: GraphStore, known_functions: set[str]) -> int:
    """Delete call edges whose caller no longer exists in the code base; return how many went."""
    rows = store.connection.execute("SELECT DISTINCT caller FROM calls").fetchall()
    gone = [caller for (caller,) in rows if caller not in known_functions]
    store.connection.executemany("DELETE FROM calls WHERE caller = ?", [(c,) for c in gone])
    store.connection.commit()
    return len(gone)
'''


@contextmanager
def chroma_server(path: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """``chroma run --path PATH`` on a free loopback port, ready once its heartbeat answers."""
    if not CHROMA.is_file():
        pytest.skip(f"no chroma CLI next to {sys.executable}")
    port = free_port()
    log_path = path.with_name(path.name + ".log")
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [str(CHROMA), "run", "--path", str(path), "--port", str(port), "--host", "127.0.0.1"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        problem = wait_until_answering(process, f"{url}/api/v2/heartbeat", STARTUP_TIMEOUT_S)
        if problem:
            pytest.fail(f"chroma run {problem}: {log_path.read_text()[-2000:]}")
        yield url, process
    finally:
        stop_process_group(process)


def cli(*args: str) -> tuple[int, str, str]:
    """Run ``grepgraph ARGS`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(arg) for arg in args])
    return code, out.getvalue(), err.getvalue()


def cli_process(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``grepgraph ARGS`` in a fresh process that knows no Chroma URL from its environment."""
    env = {key: value for key, value in os.environ.items() if key not in FOREIGN_ENV}
    env["GREPGRAPH_EMBEDDING_CACHE"] = "off"
    return subprocess.run([sys.executable, "-m", "grepgraph.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def search(repo: Path, query: str, limit: int = 5) -> dict:
    return graph.invoke({"query": query, "limit": limit}, context={"repo": str(repo), "llm_enabled": False})


def vector_notes(out: dict) -> list[str]:
    return [entry["vectors"] for entry in out["trace"] if entry.get("vectors")]


def keys_of(repo: Path, view: str) -> set[str]:
    """The vector keys ``repo``'s index embeds for a view (test chunks get a card, not a code vector)."""
    column, where = ("card_key", "") if view == "card" else ("code_key", " WHERE is_test = 0")
    connection = sqlite3.connect(CodeIndex(repo).db_path)
    try:
        return {row[0] for row in connection.execute(f"SELECT DISTINCT {column} FROM chunks{where}")}  # noqa: S608
    finally:
        connection.close()


def card_key(repo: Path, symbol: str) -> str:
    connection = sqlite3.connect(CodeIndex(repo).db_path)
    try:
        return connection.execute("SELECT card_key FROM chunks WHERE symbol = ?", (symbol,)).fetchone()[0]
    finally:
        connection.close()


def stored_keys(repo: Path, view: str) -> set[str]:
    """Every key in ``repo``'s collection for a view, read from the server through a fresh index."""
    return CodeIndex(repo).vector_store(VIEWS).all_keys(view)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """Two repositories (``alpha``: the fixture; ``beta``: the fixture plus a ledger module) in one server."""
    root = tmp_path_factory.mktemp("chroma-server")
    alpha, beta = root / "alpha", root / "beta"
    shutil.copytree(FIXTURE, alpha)
    shutil.copytree(FIXTURE, beta)
    (beta / "graphstore" / "ledger.py").write_text(LEDGER)
    with pytest.MonkeyPatch.context() as patch:
        for name in FOREIGN_ENV:
            patch.delenv(name, raising=False)
        with chroma_server(root / "chroma-db") as (url, _process):
            summaries = {}
            for repo in (alpha, beta):
                code, out, err = cli("index", repo, "--chroma-url", url, "--json", "--quiet")
                assert code == 0, err
                summaries[repo.name] = json.loads(out)
            yield {"root": root, "url": url, "alpha": alpha, "beta": beta, "summaries": summaries}
            forget_searchers()


def test_index_remembers_its_server_and_keeps_no_embedded_database(shared):
    for name in ("alpha", "beta"):
        repo, summary = shared[name], shared["summaries"][name]
        assert summary["vectors_embedded"] > 0 and summary["vectors_pending"] == 0
        assert CodeIndex(repo).chroma_url == shared["url"]  # no URL given: the recorded one
        assert CodeIndex(repo, chroma_url="").chroma_url is None  # "" forces the embedded database
        assert not (repo / ".grepgraph" / "chroma").exists()
        code, out, err = cli("status", repo, "--json")
        assert code == 0, err
        status = json.loads(out)
        assert status["chroma_url"] == shared["url"]
        assert status["vectors_pending"] == {"card": 0, "code": 0}
        code, out, _ = cli("status", repo)
        assert f"chroma:     {shared['url']}" in out


def test_each_repository_has_its_own_collections(shared):
    import chromadb
    from chromadb.config import Settings

    alpha, beta = shared["alpha"], shared["beta"]
    names = {CodeIndex(repo).vector_store(VIEWS).collections[view].name for repo in (alpha, beta) for view in VIEWS}
    assert len(names) == 4
    host, port = shared["url"].removeprefix("http://").split(":")
    client = chromadb.HttpClient(host=host, port=int(port), settings=Settings(anonymized_telemetry=False))
    assert names <= {collection.name for collection in client.list_collections()}
    for repo in (alpha, beta):
        for view in VIEWS:
            assert stored_keys(repo, view) == keys_of(repo, view), (repo.name, view)
    ledger = card_key(beta, "reconcile_ledger_entries")
    assert ledger in stored_keys(beta, "card")
    assert ledger not in stored_keys(alpha, "card")


def test_graph_search_in_each_repository_sees_only_its_own_vectors(shared):
    alpha, beta = shared["alpha"], shared["beta"]
    query = "match each debit with a credit of the same amount and report what stays unmatched"
    out = search(beta, query)
    assert not vector_notes(out)
    assert (out["results"][0]["path"], out["results"][0]["symbol"]) == (
        "graphstore/ledger.py", "reconcile_ledger_entries")
    assert all(result["path"] != "graphstore/ledger.py" for result in search(alpha, query)["results"])
    # The dense side itself: alpha's nearest vectors, as many as it has, are all alpha's own keys.
    index = CodeIndex(alpha)
    store = index.vector_store(VIEWS)
    vector = index.embedder.embed([query])[0]
    nearest = store.query("card", vector, 1000)
    assert set(nearest) == keys_of(alpha, "card")
    searcher = Searcher(CodeIndex(beta))
    try:
        dense = searcher.dense_scores(query)
    finally:
        searcher.close()
    top_card = max(dense["card"], key=dense["card"].get)
    connection = sqlite3.connect(CodeIndex(beta).db_path)
    try:
        assert connection.execute("SELECT symbol FROM chunks WHERE id = ?", (top_card,)).fetchone()[0] == (
            "reconcile_ledger_entries")
    finally:
        connection.close()


def test_cli_search_in_a_fresh_process_reaches_the_recorded_server(shared):
    beta = shared["beta"]
    done = cli_process("search", "reconcile_ledger_entries debits credits", "--repo", beta, "--no-llm",
                       "--json", "--explain", "--limit", "3", cwd=shared["root"])
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    payload = json.loads(done.stdout)
    assert payload["results"][0]["symbol"] == "reconcile_ledger_entries"
    assert not vector_notes(payload)
    assert not (beta / ".grepgraph" / "chroma").exists()  # it did not fall back to an embedded database
    # --chroma-url on search names the server explicitly.
    code, out, err = cli("search", "insert the call and import edges of a parsed file", "--repo", shared["alpha"],
                         "--chroma-url", shared["url"], "--no-llm", "--json", "--explain", "--limit", "3")
    assert code == 0, err
    named = json.loads(out)
    assert not vector_notes(named)  # the vectors came from that server
    assert "GraphStore.store_parse_result" in [result["symbol"] for result in named["results"]]


def test_reindex_after_a_change_uses_the_recorded_server_and_leaves_the_other_repository_alone(shared):
    alpha, beta = shared["alpha"], shared["beta"]
    before_beta = {view: stored_keys(beta, view) for view in VIEWS}
    config_key = card_key(alpha, "load_config")
    assert config_key in before_beta["card"]  # the two copies share this file, hence this vector key
    with open(alpha / "graphstore" / "store.py", "a") as handle:
        handle.write(PRUNE)
    (alpha / "graphstore" / "config.py").unlink()
    code, out, err = cli("index", alpha, "--json", "--quiet")  # no --chroma-url: the recorded server
    assert code == 0, err
    summary = json.loads(out)
    assert (summary["files_changed"], summary["files_removed"]) == (1, 1)
    assert summary["vectors_embedded"] > 0 and summary["vectors_pending"] == 0
    assert not (alpha / ".grepgraph" / "chroma").exists()
    for view in VIEWS:
        assert stored_keys(alpha, view) == keys_of(alpha, view)  # new vectors in, orphans collected
        assert stored_keys(beta, view) == before_beta[view]  # beta's collections untouched
    assert config_key not in stored_keys(alpha, "card")
    assert config_key in stored_keys(beta, "card")
    out = search(alpha, "delete call edges whose caller no longer exists")
    assert not vector_notes(out)
    assert out["results"][0]["symbol"] == "prune_orphan_edges"
    assert all(result["path"] != "graphstore/config.py" for result in out["results"])
    assert search(beta, "load_config", 3)["results"][0]["path"] == "graphstore/config.py"
    code, out, err = cli("status", alpha, "--json")
    assert code == 0, err
    status = json.loads(out)
    assert (status["chroma_url"], status["vectors_pending"]) == (shared["url"], {"card": 0, "code": 0})


def test_server_down_search_answers_from_bm25_with_a_note(tmp_path, monkeypatch):
    for name in FOREIGN_ENV:
        monkeypatch.delenv(name, raising=False)
    repo = tmp_path / "gamma"
    shutil.copytree(FIXTURE, repo)
    forget_searchers()
    try:
        with chroma_server(tmp_path / "chroma-db") as (url, process):
            code, _, err = cli("index", repo, "--chroma-url", url, "--quiet")
            assert code == 0, err
            assert not vector_notes(search(repo, "insert call edges into the graph"))  # opens the store
            stop_process_group(process)
            # A searcher whose store was open when the server went away.
            out = search(repo, "insert call edges into the graph")
            notes = vector_notes(out)
            assert notes and url in notes[0] and "lexical results only" in notes[0]
            assert out["results"][0]["symbol"] in ("GraphStore.store_parse_result", "GraphStore._insert_edges")
            # A fresh process, whose store can't even be opened: results, exit 0, one warning line.
            done = cli_process("search", "store_parse_result", "--repo", repo, "--no-llm", "--limit", "3",
                               cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            assert "graphstore/store.py" in done.stdout and "GraphStore.store_parse_result" in done.stdout
            warnings = [line for line in done.stderr.splitlines() if line.startswith("grepgraph: warning:")]
            assert len(warnings) == 1 and url in warnings[0] and "Traceback" not in done.stderr
            # Indexing while it is down: the lexical part is committed, the error is one line.
            (repo / "graphstore" / "ledger.py").write_text(LEDGER)
            code, _, err = cli("index", repo, "--quiet")
            assert code == 2
            assert err.count("\n") == 1 and err.startswith("grepgraph: error: the Chroma server at " + url)
            assert "lexical index" in err
            code, out, _ = cli("search", "reconcile_ledger_entries", "--repo", repo, "--no-llm", "--json")
            assert code == 0 and json.loads(out)["results"][0]["symbol"] == "reconcile_ledger_entries"
            # Back to the embedded database: every vector is stored again there.
            code, out, err = cli("index", repo, "--chroma-url", "", "--json", "--quiet")
            assert code == 0, err
            summary = json.loads(out)
            assert summary["vectors_pending"] == 0
            assert summary["vectors_embedded"] == sum(len(keys_of(repo, view)) for view in VIEWS)
            assert (repo / ".grepgraph" / "chroma").is_dir()
            code, out, _ = cli("status", repo, "--json")
            assert json.loads(out)["chroma_url"] == ""
            forget_searchers()
            assert not vector_notes(search(repo, "insert call edges into the graph"))
    finally:
        forget_searchers()
