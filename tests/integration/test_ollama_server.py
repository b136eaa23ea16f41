"""The Ollama test server, driven by the real ``langchain_ollama`` clients.

Each failure test pins the exception ``ChatOllama`` (langchain-ollama 1.1.0, ollama 0.6.3, httpx 0.28) raises,
because the graph's error handling is written against exactly these types.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator

import httpx
import pytest
from langchain_core.exceptions import OutputParserException
from langchain_ollama import ChatOllama, OllamaEmbeddings
from ollama import ResponseError
from pydantic import BaseModel, ValidationError

from tests.ollama_server import DEFAULT_REPLY, OllamaTestServer, closed_port
from tests.waiting import wait_until

TIMEOUT_S = 2.0
MODEL = "qwen2.5:3b"
REWRITE = {"terms": ["bm25", "inverted index"], "focus": "implementation"}


class Rewrite(BaseModel):
    """What a query-rewrite call is asked to return."""

    terms: list[str]
    focus: str


def scripted(request: dict) -> str:
    """Answer structured requests (a ``format`` or ``tools``) with the rewrite JSON, anything else in prose."""
    if request.get("format") or request.get("tools"):
        return json.dumps(REWRITE)
    return DEFAULT_REPLY


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OllamaTestServer]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    with OllamaTestServer(responder=scripted, delay_s=0.1, hang_s=10.0) as running:
        yield running


@pytest.fixture
def llm(server: OllamaTestServer) -> ChatOllama:
    # client_kwargs go to ollama.Client and from there to httpx.Client: "timeout" is httpx's timeout.
    return ChatOllama(model=MODEL, base_url=server.base_url, client_kwargs={"timeout": TIMEOUT_S})


# --- answers ---------------------------------------------------------------------------------------------------


def test_ok_streams_the_responder_text(server: OllamaTestServer, llm: ChatOllama) -> None:
    reply = llm.invoke("hi")

    assert reply.content == DEFAULT_REPLY
    assert reply.response_metadata["model"] == MODEL
    assert reply.response_metadata["done_reason"] == "stop"
    sent = server.requests_to("/api/chat")[-1]
    assert sent["model"] == MODEL
    assert sent["stream"] is True
    assert sent["messages"][-1] == {"role": "user", "content": "hi"}


def test_structured_output_sends_the_json_schema_and_parses_the_reply(
    server: OllamaTestServer, llm: ChatOllama
) -> None:
    parsed = llm.with_structured_output(Rewrite).invoke("find the bm25 code")

    assert parsed == Rewrite(**REWRITE)
    schema = server.requests[-1]["format"]
    assert isinstance(schema, dict)
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"terms", "focus"}


def test_json_mode_sends_format_json(server: OllamaTestServer) -> None:
    json_llm = ChatOllama(model=MODEL, base_url=server.base_url, format="json", client_kwargs={"timeout": TIMEOUT_S})

    assert json.loads(json_llm.invoke("rewrite").content) == REWRITE
    assert server.requests[-1]["format"] == "json"


def test_function_calling_gets_a_tool_call(server: OllamaTestServer, llm: ChatOllama) -> None:
    parsed = llm.with_structured_output(Rewrite, method="function_calling").invoke("rewrite")

    assert parsed == Rewrite(**REWRITE)
    assert server.requests[-1]["tools"][0]["function"]["name"] == "Rewrite"


def test_slow_still_answers(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "slow"  # how slow is what the graph's tests meet (tests/integration/test_graph_llm.py)

    assert "".join(chunk.content for chunk in llm.stream("hi")) == DEFAULT_REPLY


def test_think_keeps_the_think_block_in_the_content(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "think"

    content = llm.invoke("hi").content
    assert content.startswith("<think>")
    assert content.endswith("</think>\n\n" + DEFAULT_REPLY)  # stripping the block is the app's job
    # ...and with the block in front, the json_schema parser cannot read the JSON behind it.
    with pytest.raises(OutputParserException):
        llm.with_structured_output(Rewrite).invoke("rewrite")


def test_think_requested_goes_to_reasoning_content(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "think"

    reply = llm.invoke("hi", reasoning=True)
    assert reply.content == DEFAULT_REPLY
    assert reply.additional_kwargs["reasoning_content"]


def test_wrong_model_is_reported_in_the_metadata(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "wrong_model"

    reply = llm.invoke("hi")
    assert reply.content == DEFAULT_REPLY
    assert reply.response_metadata["model"] == server.wrong_model_name != MODEL


# --- failures: the exception types the graph must handle ----------------------------------------------------------


def test_hang_times_out(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "hang"

    with pytest.raises(httpx.ReadTimeout):
        llm.invoke("hi")


def test_refuse_closes_the_listener_and_ok_reopens_it(server: OllamaTestServer, llm: ChatOllama) -> None:
    port = server.port
    server.mode = "refuse"
    assert not server.listening

    # The streaming chat path does not wrap httpx's error (only non-streamed calls turn it into ConnectionError).
    with pytest.raises(httpx.ConnectError):
        llm.invoke("hi")

    server.mode = "ok"
    assert server.port == port
    assert llm.invoke("hi").content == DEFAULT_REPLY


def test_closed_port_refuses_connections() -> None:
    nobody = ChatOllama(model=MODEL, base_url=f"http://127.0.0.1:{closed_port()}", client_kwargs={"timeout": 2})

    with pytest.raises(httpx.ConnectError):
        nobody.invoke("hi")


@pytest.mark.parametrize("status", [500, 503])
def test_http_errors_raise_ollama_response_error(server: OllamaTestServer, llm: ChatOllama, status: int) -> None:
    server.mode = f"http_{status}"

    with pytest.raises(ResponseError) as caught:  # ollama.ResponseError, a plain Exception subclass
        llm.invoke("hi")
    assert caught.value.status_code == status
    assert caught.value.error  # Ollama's "error" field, unwrapped


def test_garbage_fails_structured_output(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "garbage"

    with pytest.raises(OutputParserException):  # a ValueError subclass
        llm.with_structured_output(Rewrite).invoke("rewrite")

    raw = llm.with_structured_output(Rewrite, include_raw=True).invoke("rewrite")
    assert raw["parsed"] is None
    assert isinstance(raw["parsing_error"], OutputParserException)
    assert "Sure!" in raw["raw"].content

    # A prose answer to a function-calling request carries no tool call: the parser returns None, no error.
    assert llm.with_structured_output(Rewrite, method="function_calling").invoke("rewrite") is None


def test_wrong_shape_content_fails_structured_output(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "wrong_shape"

    assert llm.invoke("hi").content == '{"foo": 1}'
    with pytest.raises(OutputParserException):
        llm.with_structured_output(Rewrite).invoke("rewrite")
    with pytest.raises(ValidationError):  # function calling validates the tool arguments with pydantic directly
        llm.with_structured_output(Rewrite, method="function_calling").invoke("rewrite")


def test_wrong_shape_stream_raises_pydantic_validation_error(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "wrong_shape_stream"

    with pytest.raises(ValidationError):  # ollama's ChatResponse model rejects {"foo": 1}
        llm.invoke("hi")


def test_invalid_json_stream_raises_json_decode_error(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "invalid_json_stream"

    with pytest.raises(json.JSONDecodeError):  # raised by ollama's stream reader; a ValueError subclass
        llm.invoke("hi")


def test_reset_raises_read_error(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "reset"

    with pytest.raises(httpx.ReadError):  # "[Errno 104] Connection reset by peer"
        llm.invoke("hi")
    server.mode = "ok"
    assert llm.invoke("hi").content == DEFAULT_REPLY


# --- the server itself --------------------------------------------------------------------------------------------


def test_stop_returns_quickly_while_a_handler_hangs(server: OllamaTestServer, llm: ChatOllama) -> None:
    server.mode = "hang"
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            llm.invoke("hi")
        except BaseException as error:  # noqa: BLE001 - recorded for the assertion below
            outcome.append(error)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    wait_until(lambda: server.requests, interval=0.01, what="the hanging request")

    server.stop()
    caller.join(timeout=TIMEOUT_S)
    # Released at once, not after its 10 s hang: before the client's timeout (it would raise ReadTimeout), the
    # handler closes the connection without a response.
    assert outcome and isinstance(outcome[0], httpx.RemoteProtocolError)


def test_embeddings_are_deterministic_unit_vectors(server: OllamaTestServer) -> None:
    embedder = OllamaEmbeddings(model="nomic-embed-text", base_url=server.base_url, client_kwargs={"timeout": 2})
    texts = ["def bm25_score(query)", "bm25 score of a query", "render the html template"]

    vectors = embedder.embed_documents(texts)
    assert vectors == embedder.embed_documents(texts)
    assert {len(vector) for vector in vectors} == {server.embedding_dim}
    assert all(math.isclose(math.fsum(value * value for value in vector), 1.0) for vector in vectors)

    def cosine(a: list[float], b: list[float]) -> float:
        return math.fsum(x * y for x, y in zip(a, b))

    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    assert server.requests_to("/api/embed")[-1]["input"] == texts


def test_plain_endpoints_answer(server: OllamaTestServer) -> None:
    with httpx.Client(base_url=server.base_url, timeout=2, trust_env=False) as client:
        assert client.get("/").text == "Ollama is running"
        assert "version" in client.get("/api/version").json()
        assert MODEL in [model["model"] for model in client.get("/api/tags").json()["models"]]
        assert "completion" in client.post("/api/show", json={"model": MODEL}).json()["capabilities"]
        answer = client.post("/api/generate", json={"model": MODEL, "prompt": "hi", "stream": False}).json()
    assert answer["response"] == DEFAULT_REPLY
    assert answer["done"] is True
    # validate_model_on_init reads /api/tags
    ChatOllama(model=MODEL, base_url=server.base_url, validate_model_on_init=True)


def test_unknown_mode_is_rejected(server: OllamaTestServer) -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        server.mode = "flaky"
    assert server.mode == "ok"
