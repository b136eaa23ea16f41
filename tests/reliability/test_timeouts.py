"""Work that times out stops: a 504 leaves no thread working and no LLM request open.

``grepgraph serve`` stops a search after its ``timeout_s`` with a 504, but the graph's synchronous
nodes run in worker threads that cancelling the request cannot stop. The run therefore carries a
deadline (``run_timeout_s``): nodes check it and stop, and LLM calls are cut and cancelled at the
HTTP level when it comes. Here the Ollama-protocol test server streams its replies so slowly that
every forced rewrite outlives the server's timeout; after 100 timed-out requests the process must
get back to its thread count, with no thread in grepgraph's, LangGraph's or the HTTP client's code
and no request still streaming at the test server (waiting up to ``SETTLE_S``, far less than a reply
nobody cancelled streams for). The census is printed (``pytest -s``); how soon a run stops at its
deadline is measured by ``benchmarks/llm_paths.py``.
"""

from __future__ import annotations

import shutil
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path

import httpx
import pytest
import uvicorn
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.deadline import SearchDeadlineExceeded
from grepgraph.graphs.llm import reset_llm_state
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.store.index import CodeIndex

from grepgraph.serve import create_app
from tests.conftest import SAMPLE_REPO, hang_deadline, isolated_settings
from tests.ollama_server import OllamaTestServer
from tests.processes import answers_health, free_port
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

SERVE_TIMEOUT_S = 0.5
REQUESTS = 100
CLIENTS = 8
# How long to wait, after the last 504, for every thread that worked on a search to be idle or gone: generous
# for a busy machine, and still far below the 80 s a reply nobody cancelled would keep streaming.
SETTLE_S = 30.0
# A streamed reply of PIECES pieces, DELAY_S apart: 80 s, far past any timeout here (the reply is padded so
# that it has that many characters to split).
DELAY_S = 0.2
PIECES = 400
SLOW_REPLY = '{"terms": ["parse", "calls"]}'.ljust(PIECES)
# The LLM's own timeout is long: what must cut the call is the run's deadline.
LLM_TIMEOUT_S = 60.0
REWRITTEN = {"query": "why would the parser miss the calls made inside a file?", "rewrite": True, "limit": 5}
# Where a thread working on a search spends its time (an idle pool thread waits in concurrent.futures).
WORK_CODE = ("/graphs/", "/retrievers/", "/langgraph/", "/langchain_core/", "/langchain_ollama/", "/ollama/",
             "/httpx/", "/httpcore/")
TEST_SERVER_CODE = "tests/ollama_server.py"


def census() -> dict[str, int]:
    """Threads now: in all, working on a search, and test-server handlers still streaming a reply."""
    working = streaming = 0
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        stack = []
        while frame is not None:
            stack.append((frame.f_code.co_filename, frame.f_code.co_name))
            frame = frame.f_back
        if any(TEST_SERVER_CODE in name for name, _ in stack):
            streaming += any(function == "_answer_completion" for _, function in stack)
        elif any(part in name for name, _ in stack for part in WORK_CODE):
            working += 1
    return {"threads": threading.active_count(), "working": working, "streaming": streaming}


def settled(baseline: dict[str, int]) -> dict[str, int]:
    """The census once back to ``baseline`` (threads) with nothing working or streaming, or after ``SETTLE_S``."""
    def census_if_settled() -> dict[str, int] | None:
        now = census()
        done = now["threads"] <= baseline["threads"] and not now["working"] and not now["streaming"]
        return now if done else None

    with suppress(AssertionError):  # not settled: the caller's assertions say what is still running
        return wait_until(census_if_settled, timeout=SETTLE_S)
    return census()


@pytest.fixture(scope="module")
def lexical_index(tmp_path_factory):
    """A lexical-only index of the fixture repository (the LLM is what is slow here, not the search)."""
    with isolated_settings(tmp_path_factory):
        root = tmp_path_factory.mktemp("timeouts")
        repo = Path(shutil.copytree(SAMPLE_REPO, root / "repo"))
        CodeIndex(repo, root / "index").update(embed=False)
        yield repo, root / "index"
        forget_searchers()
        reset_llm_state()


@pytest.fixture
def slow_llm():
    with OllamaTestServer(mode="slow", delay_s=DELAY_S, pieces=PIECES,
                          responder=lambda request: SLOW_REPLY) as server:
        yield server


def serve(app) -> tuple[uvicorn.Server, threading.Thread, str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    wait_until(lambda: answers_health(url, thread), what="serve answering /health")
    return server, thread, url


def post_timed_out(url: str, count: int) -> list[int]:
    """``count`` forced-rewrite searches from ``CLIENTS`` clients at once: the status of each."""
    def one(_: int) -> int:
        return httpx.post(f"{url}/search/invoke", json={"input": REWRITTEN}, timeout=30).status_code

    with ThreadPoolExecutor(CLIENTS) as clients:
        return list(clients.map(one, range(count)))


def test_timed_out_requests_leave_no_thread_running(lexical_index, slow_llm):
    repo, index_dir = lexical_index
    settings = {"llm_base_url": slow_llm.base_url, "llm_timeout_s": LLM_TIMEOUT_S, "llm_retry_after_s": 0.0}
    app = create_app([str(repo)], index_dirs={str(repo): str(index_dir)}, settings=settings,
                     timeout_s=SERVE_TIMEOUT_S)
    with hang_deadline(240):
        server, serving, url = serve(app)
        try:
            # Warm-up: the pools (the loop's default executor, the LLM call loop) exist before the baseline.
            warm = post_timed_out(url, CLIENTS)
            assert set(warm) <= {200, 504} and 504 in warm, warm  # (a 200: see below)
            baseline = settled({"threads": 10**6})
            assert not baseline["working"] and not baseline["streaming"], baseline
            answers = post_timed_out(url, REQUESTS)
            peak = census()
            after = settled(baseline)
        finally:
            server.should_exit = True
            serving.join(timeout=10)
    print(f"\n{REQUESTS} timed-out requests: threads {baseline['threads']} before, "  # noqa: T201 - the figure
          f"{peak['threads']} at the last 504 ({peak['working']} working, {peak['streaming']} LLM replies "
          f"streaming), {after['threads']} once settled ({after['working']} working, "
          f"{after['streaming']} streaming); {len(slow_llm.requests_to('/api/chat'))} LLM requests sent")
    # A 504 each, except where a loaded machine let the LLM's connect probe (a quarter of a second) fail: such a
    # search goes on without the LLM and may finish in time (a 200, as good for what is checked here).
    assert set(answers) <= {200, 504} and answers.count(504) >= REQUESTS // 2, sorted(set(answers))
    assert after["working"] == 0 and after["streaming"] == 0, after
    assert after["threads"] <= baseline["threads"], (baseline, after)
    # The LLM calls were cut, not only runs that never got that far: how many runs reach the call within the
    # server's timeout (the others wait for a worker thread) depends on the machine's load, so ask for a few.
    assert len(slow_llm.requests_to("/api/chat")) >= CLIENTS


def test_a_run_past_its_deadline_stops_and_cancels_its_llm_call(lexical_index, slow_llm):
    repo, index_dir = lexical_index
    context = {"repo": str(repo), "index_dir": str(index_dir), "llm_base_url": slow_llm.base_url,
               "llm_timeout_s": LLM_TIMEOUT_S, "run_timeout_s": 0.5}
    with hang_deadline(60), pytest.raises(SearchDeadlineExceeded, match="deadline"):
        graph.invoke(REWRITTEN, context=context)
    assert settled({"threads": 10**6})["streaming"] == 0


def test_an_llm_stage_that_runs_out_of_time_keeps_the_answer(lexical_index, slow_llm):
    repo, index_dir = lexical_index
    base = {"repo": str(repo), "index_dir": str(index_dir), "llm_base_url": slow_llm.base_url,
            "llm_timeout_s": LLM_TIMEOUT_S}
    query = {"query": "how are call edges inserted into the graph database", "rerank": True, "rewrite": False,
             "limit": 5}
    alone = graph.invoke(query, context={**base, "llm_enabled": False})
    with hang_deadline(60):
        bounded = graph.invoke(query, context={**base, "run_timeout_s": 1.5})
    rerank = next(entry for entry in bounded["trace"] if entry["node"] == "rerank")
    assert rerank["llm"] == "timeout: the run's deadline came first"
    assert rerank["decision"] == "fallback: fused order kept"
    assert bounded["results"] == alone["results"]
