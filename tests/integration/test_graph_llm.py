"""The real graph and the real ``ChatOllama`` / ``ChatOpenAI`` clients against the protocol test server, mode by mode.

Whatever the server does — answer, stall, hang, fail, reset, talk nonsense or not listen at all —
a search must still come back with results, and its trace must say what happened to the LLM call.
(How long those searches take is measured by ``benchmarks/llm_paths.py``.)
"""

from __future__ import annotations

import json
import os

import pytest
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.llm import LLMGateway, reset_llm_state
from grepgraph.graphs.resources import forget_searchers

from tests.conftest import indexed_sample_repo
from tests.ollama_server import OllamaTestServer, closed_port
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

LLM_TIMEOUT_S = 1.0
REWRITE_TERMS = ["store_parse_result", "insert edges", "executemany"]
RERANK_ORDER = [3, 1]
QUESTION = "how are call edges saved into the database?"
RERANK_QUERY = "where are call edges written"

# The gateway bounds a call by llm_timeout_s of wall time and gives ChatOllama's HTTP client the same read
# timeout; on a busy machine the client's timeout can fire first, so a hang may also end as a ReadTimeout.
TIMED_OUT = (f"timeout after {LLM_TIMEOUT_S:g}s", "error: ReadTimeout")
# mode -> the start of the trace's ``llm`` outcome for (rewrite, rerank)
FAILURES = {
    "slow": (f"timeout after {LLM_TIMEOUT_S:g}s",) * 2,  # every line arrives in time: only the wall clock stops it
    "hang": (TIMED_OUT,) * 2,
    "http_500": ("error: ResponseError",) * 2,
    "http_503": ("error: ResponseError",) * 2,
    "garbage": ("invalid reply: no JSON object",) * 2,
    "invalid_json_stream": ("error:",) * 2,
    "wrong_shape": ("invalid reply: no usable terms", "invalid reply: no valid indices"),
    "wrong_shape_stream": ("error:",) * 2,
    "reset": ("error:",) * 2,
    "refuse": ("skipped: unreachable",) * 2,
    "http_401": ("error: ResponseError",) * 2,
    "http_404": ("error: ResponseError",) * 2,
    "http_429": ("error: ResponseError",) * 2,
}
# A server naming another model than llm_model (llama.cpp's names its model file) is still the one configured.
SUCCESSES = ("ok", "think", "wrong_model")
# The same faults met by the OpenAI-compatible client (its errors carry the HTTP status too). A slow reply is
# one JSON body there, sent after one pause that fits the timeout: "hang" covers the timeout.
OPENAI_FAILURES = {
    **{mode: expected for mode, expected in FAILURES.items() if mode != "slow"},
    "hang": (TIMED_OUT[:1] + ("error: APITimeoutError", "error: OpenAIAPITimeoutError"),) * 2,
    # langchain-openai re-raises the SDK's errors under its own names; the status is in the message.
    "http_401": ("error: OpenAIAuthenticationError",) * 2,
    "http_404": ("error: OpenAIModelNotFoundError",) * 2,
    "http_429": ("error: OpenAIRateLimitError",) * 2,
    "http_500": ("error: OpenAI",) * 2,
    "http_503": ("error: OpenAI",) * 2,
}
CASES = [*(("ollama", mode) for mode in (*SUCCESSES, *FAILURES)),
         *(("openai", mode) for mode in (*SUCCESSES, *OPENAI_FAILURES))]


def prompt_text(request: dict) -> str:
    return "\n".join(str(message.get("content", "")) for message in request.get("messages") or [])


def is_rerank_request(request: dict) -> bool:
    return "Candidates, numbered" in prompt_text(request)


def responder(request: dict) -> str:
    """Rerank JSON for rerank prompts, rewrite JSON for everything else."""
    if is_rerank_request(request):
        return json.dumps({"ranking": RERANK_ORDER})
    return json.dumps({"terms": REWRITE_TERMS, "focus": "implementation"})


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory) -> dict[str, str]:
    """The fixture repository copied and indexed (real MiniLM vectors, embedded Chroma), once per session."""
    context = indexed_sample_repo(tmp_path_factory)
    # Open the searcher and load the query embedder once, so timed searches measure the LLM path.
    forget_searchers()
    graph.invoke({"query": "warm up", "rewrite": False, "rerank": False}, context=context)
    import langchain_ollama  # noqa: F401 - imported once here, not inside a timed 1 s call
    import langchain_openai  # noqa: F401

    yield context
    forget_searchers()


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No outside settings; reachability and cached rewrites are module-wide, so reset them."""
    for name in list(os.environ):
        if name.startswith("GREPGRAPH_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    reset_llm_state()
    yield
    reset_llm_state()


@pytest.fixture
def server():
    with OllamaTestServer(responder=responder, delay_s=0.5, hang_s=10.0) as running:
        yield running


def llm_context(index: dict, base_url: str, retry_after_s: float = 0.5, provider: str = "ollama") -> dict:
    url = f"{base_url}/v1" if provider == "openai" else base_url
    return {**index, "llm_base_url": url, "llm_timeout_s": LLM_TIMEOUT_S, "llm_retry_after_s": retry_after_s,
            "llm_provider": provider}


def expected(provider: str, mode: str) -> tuple:
    return (OPENAI_FAILURES if provider == "openai" else FAILURES)[mode]


def search(query: dict, context: dict) -> dict:
    return graph.invoke(query, context=context)


def trace_entry(output: dict, node: str) -> dict:
    (entry,) = [entry for entry in output["trace"] if entry["node"] == node]
    return entry


# --------------------------------------------------------------------------- every mode, each LLM stage
@pytest.mark.parametrize(("provider", "mode"), CASES)
def test_rewrite_in_every_mode(sample_index, server, provider, mode):
    server.mode = mode
    output = search({"query": QUESTION, "rewrite": True, "rerank": False},
                    llm_context(sample_index, server.base_url, provider=provider))
    assert output["results"], mode
    entry = trace_entry(output, "rewrite")
    if mode in SUCCESSES:
        assert (entry["decision"], entry["llm"], entry["terms"]) == ("rewritten", "ok", REWRITE_TERMS)
    else:
        assert entry["decision"] == "fallback: original query only"
        assert entry["llm"].startswith(expected(provider, mode)[0]), entry["llm"]
    if mode.startswith("http_"):
        assert mode.removeprefix("http_") in entry["llm"]


@pytest.mark.parametrize(("provider", "mode"), CASES)
def test_rerank_in_every_mode(sample_index, server, provider, mode):
    server.mode = mode
    output = search({"query": RERANK_QUERY, "rewrite": False, "rerank": True},
                    llm_context(sample_index, server.base_url, provider=provider))
    assert output["results"], mode
    entry = trace_entry(output, "rerank")
    if mode in SUCCESSES:
        assert (entry["decision"], entry["llm"], entry["ranked"]) == ("reranked", "ok", len(RERANK_ORDER))
    else:
        assert entry["decision"] == "fallback: fused order kept"
        assert entry["llm"].startswith(expected(provider, mode)[1]), entry["llm"]


# --------------------------------------------------------------------------- the requests themselves
def test_rewrite_and_rerank_send_the_right_requests(sample_index, server):
    output = search({"query": QUESTION, "rewrite": True, "rerank": True}, llm_context(sample_index, server.base_url))
    assert trace_entry(output, "rewrite")["terms"] == REWRITE_TERMS
    assert trace_entry(output, "rerank")["decision"] == "reranked"
    assert output["results"]

    rewrite_request, rerank_request = server.requests_to("/api/chat")
    assert not is_rerank_request(rewrite_request) and is_rerank_request(rerank_request)
    for request in (rewrite_request, rerank_request):
        assert request["model"] == "qwen2.5-coder:1.5b"
        assert request["format"]["type"] == "object"  # the stage's JSON schema constrains the output
        assert QUESTION in prompt_text(request)
    assert rewrite_request["format"]["required"] == ["terms"] and rerank_request["format"]["required"] == ["ranking"]
    assert "store_parse_result" in prompt_text(rewrite_request)  # the symbol hints
    assert "[1] " in prompt_text(rerank_request) and "graphstore/" in prompt_text(rerank_request)


def test_the_rewrite_is_sent_once_per_question(sample_index, server):
    context = llm_context(sample_index, server.base_url)
    search({"query": QUESTION, "rewrite": True, "rerank": False}, context)
    output = search({"query": QUESTION, "rewrite": True, "rerank": False}, context)
    assert trace_entry(output, "rewrite")["decision"] == "cached"
    assert len(server.requests_to("/api/chat")) == 1


# --------------------------------------------------------------------------- an unreachable server
def test_a_closed_port_is_probed_once_then_skipped(sample_index):
    context = llm_context(sample_index, f"http://127.0.0.1:{closed_port()}", retry_after_s=30.0)
    first = search({"query": QUESTION, "rewrite": True, "rerank": True}, context)
    assert trace_entry(first, "rewrite")["llm"].startswith("skipped: unreachable (http://127.0.0.1:")
    assert trace_entry(first, "rerank")["llm"] == "skipped: unreachable (cached)"
    assert first["results"]

    second = search({"query": "where are call edges written?", "rewrite": True, "rerank": True}, context)
    assert trace_entry(second, "rewrite")["llm"] == "skipped: unreachable (cached)"
    assert trace_entry(second, "rerank")["llm"] == "skipped: unreachable (cached)"
    assert second["results"]


def test_the_llm_is_tried_again_after_retry_after(sample_index, server):
    context = llm_context(sample_index, server.base_url, retry_after_s=0.5)
    server.mode = "refuse"
    output = search({"query": QUESTION, "rewrite": True, "rerank": False}, context)
    assert trace_entry(output, "rewrite")["llm"].startswith("skipped: unreachable")
    server.mode = "ok"
    # Skipped while the "unreachable" mark is younger than retry_after_s, then tried again.
    wait_until(lambda: trace_entry(search({"query": QUESTION, "rewrite": True, "rerank": False}, context),
                                   "rewrite")["decision"] == "rewritten", interval=0.1, what="a rewrite")


def test_a_client_side_read_timeout_marks_the_llm_down(monkeypatch, server):
    import langchain_ollama

    real_chat_ollama = langchain_ollama.ChatOllama

    def chat_ollama_with_a_short_read_timeout(**settings):
        # What a busy machine does: the HTTP client's read timeout wins the race against the wall clock.
        return real_chat_ollama(**{**settings, "client_kwargs": {"timeout": 0.2}})

    monkeypatch.setattr(langchain_ollama, "ChatOllama", chat_ollama_with_a_short_read_timeout)
    server.mode = "hang"
    gateway = LLMGateway(server.base_url, "qwen2.5:3b", timeout_s=LLM_TIMEOUT_S, retry_after_s=30.0)
    reply = gateway.call_json([("human", "anything")])
    assert reply.value is None
    assert gateway.available() == (False, "unreachable (cached)")


# --------------------------------------------------------------------------- the OpenAI-compatible provider
def test_the_openai_provider_sends_a_schema_and_the_key_but_never_shows_it(sample_index, server, monkeypatch):
    secret = "sk-test-do-not-show-0123456789"
    monkeypatch.setenv("GREPGRAPH_LLM_API_KEY", secret)
    context = llm_context(sample_index, server.base_url, provider="openai")
    output = search({"query": QUESTION, "rewrite": True, "rerank": True}, context)
    assert trace_entry(output, "rewrite")["terms"] == REWRITE_TERMS
    assert trace_entry(output, "rerank")["decision"] == "reranked"
    assert trace_entry(output, "rewrite")["llm_tokens"]["prompt"] > 0  # the server's usage reaches the trace
    rewrite_request, rerank_request = server.requests_to("/v1/chat/completions")
    assert rewrite_request["response_format"]["json_schema"]["schema"]["required"] == ["terms"]
    assert rerank_request["response_format"]["type"] == "json_schema"
    assert rewrite_request["messages"][0]["role"] == "system" and QUESTION in prompt_text(rewrite_request)
    assert secret not in json.dumps(output, default=str)

    server.mode = "http_401"  # a bad key: the error is traced, the key is not
    output = search({"query": "how is a symbol looked up by name?", "rewrite": True, "rerank": False}, context)
    assert trace_entry(output, "rewrite")["llm"].startswith("error: OpenAIAuthenticationError: Error code: 401")
    assert secret not in json.dumps(output, default=str)


def test_an_unknown_provider_is_refused_with_its_name(sample_index):
    with pytest.raises(ValueError, match="llm_provider"):
        graph.invoke({"query": QUESTION}, context={**sample_index, "llm_provider": "nonsense"})
