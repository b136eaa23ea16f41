"""Many searches at once while the index is rewritten: every answer is the one its generation gives alone.

Eight threads run a fixed mix of queries (text, graph questions, structured, decomposed, filtered,
literal, regex, and a question the Ollama-protocol test server rewrites and reranks) against one
index while a loop rewrites files of the repository and re-indexes it; then eight HTTP clients do
the same against ``grepgraph serve`` while the re-index runs as the CLI, in other processes; then
four MCP sessions (``grepgraph mcp`` over stdio, as agents start it) call ``search_code`` with the
queries it can express. Each answer must equal the answer of the same query alone on a copy of the
generation it saw (see ``tests/concurrency.py``), with no error and no 5xx.
``benchmarks/concurrency.py`` is the long run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import anyio
import httpx
import pytest
import uvicorn
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.llm import reset_llm_state
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.store.index import CodeIndex

from grepgraph.serve import create_app
from tests.concurrency import (
    LLM_REPLY,
    QUERIES,
    Answer,
    GenerationCopies,
    Tally,
    answer_of,
    compare_with_references,
    copy_sample_repo,
    reindex_loop,
    run_concurrently,
)
from tests.conftest import hang_deadline, isolated_settings
from tests.ollama_server import OllamaTestServer
from tests.processes import answers_health, free_port
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

THREADS = 8
SEARCH_SECONDS = 12.0
REINDEX_PAUSE_S = 0.3
HTTP_SECONDS = 10.0
MCP_SESSIONS = 4
MCP_SECONDS = 10.0
# What search_code takes of a query (the structured fields keywords/concepts/passage are not MCP arguments).
MCP_ARGUMENTS = {"query", "intent", "focus", "limit", "rewrite", "rerank", "mode", "paths", "languages"}
ROOT = Path(__file__).resolve().parents[2]
# Generous: a slow shared machine must not turn a reply into a timeout (a fallback answer differs).
LLM_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """A copy of the fixture repository indexed with vectors, and the copies of its generations."""
    tmp_path = tmp_path_factory.mktemp("concurrency")
    with isolated_settings(tmp_path_factory):
        repo = copy_sample_repo(tmp_path / "repo")
        index_dir = tmp_path / "index"
        CodeIndex(repo, index_dir).update()
        copies = GenerationCopies(tmp_path / "generations", index_dir)
        copies.copy_committed()
        yield repo, index_dir, copies
        forget_searchers()
        reset_llm_state()


def graph_searcher(repo: Path, llm_url: str):
    """``search(name, index_dir)``: one query of the mix through the compiled graph."""
    def search(name: str, index_dir: Path) -> Answer:
        payload = dict(QUERIES[name])
        context = {"repo": str(repo), "index_dir": str(index_dir), "llm_enabled": name.endswith("+llm"),
                   "llm_base_url": llm_url, "llm_timeout_s": LLM_TIMEOUT_S}
        return answer_of(name, graph.invoke(payload, context=context))
    return search


def test_threads_get_the_answer_of_their_generation_while_the_index_changes(indexed):
    repo, index_dir, copies = indexed
    tally = Tally()
    stop = threading.Event()
    with OllamaTestServer(responder=lambda request: LLM_REPLY) as llm, hang_deadline(240):
        search = graph_searcher(repo, llm.base_url)
        loop = threading.Thread(target=reindex_loop, args=(repo, index_dir, copies, tally, stop, REINDEX_PAUSE_S))
        loop.start()
        try:
            run_concurrently(THREADS, SEARCH_SECONDS, lambda name: search(name, index_dir), tally, list(QUERIES))
        finally:
            stop.set()
            loop.join(timeout=60)
        compare_with_references(tally, lambda name, generation: search(name, copies.path(generation)))
    summary = tally.summary()
    assert not tally.errors, tally.errors[:3]
    assert not tally.mismatches, tally.mismatches[:3]
    assert summary["reindexes"] >= 3 and summary["generations_seen"] >= 3, summary
    assert summary["searches"] >= 2 * THREADS * len(QUERIES) // 4, summary
    # Generations stay on disk while a reader holds them; once none does, the next run deletes them.
    forget_searchers()
    CodeIndex(repo, index_dir).update(embed=False)
    assert len(list((index_dir / "bm25").iterdir())) == 1
    copies.copy_committed()


def test_http_clients_get_no_5xx_while_the_cli_reindexes(indexed):
    repo, index_dir, copies = indexed
    tally = Tally()
    statuses: list[int] = []
    app = create_app([str(repo)], index_dirs={str(repo): str(index_dir)}, settings={"llm_enabled": False})
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = threading.Thread(target=server.run, daemon=True)
    serving.start()
    url = f"http://127.0.0.1:{port}"
    names = [name for name in QUERIES if not name.endswith("+llm")]

    def cli_index() -> None:
        done = subprocess.run([sys.executable, "-m", "grepgraph.cli", "index", str(repo), "--index-dir", str(index_dir),
                               "--no-embed", "--quiet", "--wait"], capture_output=True, text=True, timeout=120,
                              cwd=ROOT)
        assert done.returncode == 0, done.stderr[-2000:]

    def post(name: str) -> Answer:
        response = httpx.post(f"{url}/search/invoke", json={"input": QUERIES[name]}, timeout=60)
        with tally.lock:
            statuses.append(response.status_code)
        response.raise_for_status()
        return answer_of(name, response.json()["output"])

    stop = threading.Event()
    with hang_deadline(240):
        wait_until(lambda: answers_health(url, serving), what="serve answering /health")
        loop = threading.Thread(target=reindex_loop, args=(repo, index_dir, copies, tally, stop, 0.0, cli_index))
        loop.start()
        try:
            run_concurrently(THREADS, HTTP_SECONDS, post, tally, names)
        finally:
            stop.set()
            loop.join(timeout=180)
            server.should_exit = True
            serving.join(timeout=10)
        search_alone = graph_searcher(repo, "http://127.0.0.1:9")
        compare_with_references(tally, lambda name, generation: search_alone(name, copies.path(generation)))
    assert not [status for status in statuses if status >= 500]
    assert not tally.errors, tally.errors[:3]
    assert not tally.mismatches, tally.mismatches[:3]
    assert tally.reindexes >= 2 and tally.searches >= THREADS, tally.summary()


def mcp_session_params(repo: Path, index_dir: Path, llm_url: str, home: Path):
    """``grepgraph mcp`` over stdio as an MCP client starts it: a small environment, the index and the test LLM."""
    from mcp.client.stdio import StdioServerParameters

    home.mkdir(exist_ok=True)
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
           "HOME": str(home), "GREPGRAPH_INDEX_DIR": str(index_dir), "GREPGRAPH_LLM_BASE_URL": llm_url,
           "GREPGRAPH_LLM_TIMEOUT_S": str(LLM_TIMEOUT_S), "GREPGRAPH_EMBEDDING_CACHE": "off"}
    return StdioServerParameters(command=sys.executable, args=["-m", "grepgraph.cli", "mcp", "--repo", str(repo)],
                                 env=env, cwd=str(home))


def mcp_answer(name: str, content: dict) -> Answer:
    """An :class:`Answer` from ``search_code``'s structured result (its ``index_generation`` names the generation)."""
    generation = content.get("index_generation")
    return Answer(name, frozenset([generation] if generation else []), [dict(hit) for hit in content["results"]],
                  content.get("total_matches"))


async def mcp_searches(params, names: list[str], offset: int, tally: Tally) -> None:
    """One MCP session: ``search_code`` over ``names`` in rotation for ``MCP_SECONDS`` after it started."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        deadline = time.monotonic() + MCP_SECONDS
        turn = offset
        while time.monotonic() < deadline:
            name = names[turn % len(names)]
            turn += 1
            arguments = {key: value for key, value in QUERIES[name].items() if key in MCP_ARGUMENTS}
            try:
                result = await client.call_tool("search_code", arguments)
            except Exception:  # noqa: BLE001 - every failure is counted, none may happen
                tally.record(error=f"{name}: {traceback.format_exc(limit=4)}")
                continue
            if result.is_error or result.structured_content is None:
                tally.record(error=f"{name}: {[getattr(block, 'text', '') for block in result.content]}")
            else:
                tally.record(mcp_answer(name, result.structured_content))


def test_mcp_sessions_get_the_answer_of_their_generation_while_the_index_changes(indexed, tmp_path):
    pytest.importorskip("mcp")
    repo, index_dir, copies = indexed
    tally = Tally()
    stop = threading.Event()
    names = [name for name in QUERIES if set(QUERIES[name]) <= MCP_ARGUMENTS]
    with OllamaTestServer(responder=lambda request: LLM_REPLY) as llm, hang_deadline(300):
        params = mcp_session_params(repo, index_dir, llm.base_url, tmp_path / "home")

        async def sessions() -> None:
            with anyio.fail_after(MCP_SECONDS + 180):
                async with anyio.create_task_group() as group:
                    for offset in range(MCP_SESSIONS):
                        group.start_soon(mcp_searches, params, names, offset, tally)

        loop = threading.Thread(target=reindex_loop, args=(repo, index_dir, copies, tally, stop, REINDEX_PAUSE_S))
        loop.start()
        try:
            anyio.run(sessions)
        finally:
            stop.set()
            loop.join(timeout=60)
        # The sessions' LLM setting is the default (on, heuristics decide): so is the reference's.
        def search_alone(name: str, generation: str) -> Answer:
            context = {"repo": str(repo), "index_dir": str(copies.path(generation)), "llm_base_url": llm.base_url,
                       "llm_timeout_s": LLM_TIMEOUT_S}
            return answer_of(name, graph.invoke(dict(QUERIES[name]), context=context))

        compare_with_references(tally, search_alone)
    summary = tally.summary()
    print(f"\n{MCP_SESSIONS} MCP sessions: {summary}")  # noqa: T201 - the counts, with pytest -s
    assert not tally.errors, tally.errors[:3]
    assert not tally.mismatches, tally.mismatches[:3]
    assert summary["reindexes"] >= 2 and summary["generations_seen"] >= 2, summary
    assert summary["searches"] >= MCP_SESSIONS * len(names) // 2, summary
