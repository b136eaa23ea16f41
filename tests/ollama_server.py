"""A small Ollama-protocol HTTP server for integration tests (stdlib only).

The real ``langchain_ollama.ChatOllama`` / ``OllamaEmbeddings`` clients talk to it exactly as they talk to
Ollama, so tests exercise the real HTTP client, the real NDJSON stream parsing and the real output parsers.

Usage::

    with OllamaTestServer(responder=lambda request: '{"terms": ["bm25"], "focus": "implementation"}') as server:
        llm = ChatOllama(model="qwen2.5:3b", base_url=server.base_url, client_kwargs={"timeout": 2})
        ...
        server.mode = "http_503"          # the next request fails
        assert server.requests[-1]["format"]["type"] == "object"

Endpoints:
    ``POST /api/chat`` and ``POST /api/generate``: a stream of newline-delimited JSON objects
    (``application/x-ndjson``, chunked), the last one with ``"done": true`` plus the usual count and duration
    fields; one JSON object when the request says ``"stream": false``. ``ChatOllama`` always streams.
    ``POST /api/embed``: ``{"model", "embeddings": [[...], ...]}``; vectors are hashed bags of lower-cased words,
    ``embedding_dim`` long (or the request's ``dimensions``) and L2-normalised, so texts sharing words are close.
    ``GET /api/tags`` lists ``models``; ``POST /api/show`` describes one of them (404 for any other name).
    ``GET /`` answers "Ollama is running" and ``GET /api/version`` a version: these two liveness endpoints
    ignore the mode (only a closed listener stops them), like a real server that is up but failing.
    Anything else is a 404 "404 page not found", as from Ollama.

The same server speaks the OpenAI-compatible protocol too (``GET /v1/models``, ``POST /v1/chat/completions``,
following the modes below; see ``tests/openai_protocol.py``), so ``ChatOpenAI`` meets it as it meets
llama.cpp's server or a hosted endpoint.

Every response closes its connection (``Connection: close``), so no pooled connection outlives a mode change.

Modes (``server.mode``; set it from the test thread between requests; unknown names raise ``ValueError``):
    ``"ok"``: the responder's text, split into ``pieces`` streamed chunks. If the chat request carries
        ``tools`` (``with_structured_output(method="function_calling")``), the reply is instead a
        ``message.tool_calls`` entry calling the first tool, with the responder's output parsed as its
        JSON-object arguments; the same holds in "slow", "think" and "wrong_model".
    ``"slow"``: like "ok", waiting ``delay_s`` before each streamed line (and before a non-streamed reply).
    ``"hang"``: reads the request, then sends nothing until ``stop()`` or ``hang_s`` elapses; then closes the
        connection without a response.
    ``"refuse"``: the listening socket is closed for real, so connections to ``base_url`` are refused.
        Setting any other mode re-opens the listener on the same port (SO_REUSEADDR; this works even while a
        hanging handler still holds an accepted connection, and raises ``OSError`` only if another process
        took the port meanwhile). Requests already being served are not interrupted. For a port that never
        had a listener, use ``closed_port()``.
    ``"http_500"`` / ``"http_503"``: that status with Ollama's ``{"error": "..."}`` body.
    ``"garbage"``: a well-formed 200 reply whose content is prose, not what was asked (not JSON even when
        ``format`` asked for JSON, and no tool call even when ``tools`` were offered); ``/api/embed`` answers
        200 with a non-JSON body.
    ``"invalid_json_stream"``: one good NDJSON line, then a truncated (malformed) JSON line, then the end of
        the stream; a non-streamed reply (``/api/embed`` too) is a truncated JSON body.
    ``"wrong_shape"``: a well-formed reply whose content is valid JSON of the wrong shape (``{"foo": 1}``),
        also as tool-call arguments; ``/api/embed`` answers ``{"foo": 1}`` instead of ``{"embeddings": ...}``.
    ``"wrong_shape_stream"``: the protocol itself has the wrong shape: every NDJSON line (or the single JSON
        reply) is ``{"foo": 1}`` instead of a chat/generate object.
    ``"think"``: the content is a ``<think>...</think>`` block followed by the responder's text, as models like
        qwen3 or deepseek-r1 answer when the request does not set ``think``; when the request sets ``think``
        truthy (``ChatOllama(reasoning=True)``), the reasoning goes to ``message.thinking`` (``thinking`` for
        generate) instead, as Ollama does.
    ``"reset"``: sends the status line and the first NDJSON line (half the body when not streamed), then
        resets the connection (SO_LINGER 0, close: a TCP RST).
    ``"wrong_model"``: a normal reply whose ``model`` field is ``wrong_model_name``, not the requested model.
    ``"http_401"`` / ``"http_404"`` / ``"http_429"``: that status (a bad key, an unknown model, a rate limit).
    ``"forward"``: chat requests go on to the real OpenAI-compatible server at ``forward_url`` (``/api/chat``
        translated, so the real ``ChatOllama`` client meets a real model); the reply keeps the asked model name.

Chat and generate follow every mode, embed every one but "think"; ``/api/tags`` and ``/api/show`` only
"hang", "http_500" and "http_503"; ``/`` and ``/api/version`` none. ``requests`` records every POST body in
arrival order (a body that is not JSON as ``{"_raw": text}``, answered 400), ``requests_to(path)`` those sent to
one path, and ``paths`` every ``"METHOD /path"``. A responder that raises makes the server answer 500 with the
exception in ``error``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests import openai_protocol
from tests.processes import free_port

MODES = frozenset(
    {
        "ok",
        "slow",
        "hang",
        "refuse",
        "http_500",
        "http_503",
        "garbage",
        "invalid_json_stream",
        "wrong_shape",
        "wrong_shape_stream",
        "think",
        "reset",
        "wrong_model",
        "http_401",
        "http_404",
        "http_429",
        "forward",
    }
)
DEFAULT_REPLY = "Hello from the Ollama test server."
DEFAULT_MODELS = ("qwen2.5:3b", "nomic-embed-text:latest")
GARBAGE_REPLY = "Sure! Here are a few ideas you could try when searching the code base. Good luck!"
WRONG_SHAPE_REPLY = '{"foo": 1}'
THINKING = "The user wants an answer. Let me think about it."
THINK_BLOCK = f"<think>\n{THINKING}\n</think>\n\n"
OLLAMA_VERSION = "0.13.0"
ERROR_MESSAGES = {
    401: "unauthorized",
    404: "model not found",
    429: "too many requests",
    500: "llama runner process has terminated: exit status 2",
    503: "server busy, please try again.  maximum pending requests exceeded",
}
NDJSON = "application/x-ndjson"
TOOL_CALL_MODES = frozenset({"ok", "slow", "think", "wrong_model", "wrong_shape"})

Responder = Callable[[dict[str, Any]], str]


def default_responder(request: dict[str, Any]) -> str:
    """The reply used when a test scripts none: a fixed sentence, whatever was asked."""
    return DEFAULT_REPLY


def closed_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` that nothing listens on, to point a client at."""
    return free_port(host)


def hashed_embedding(text: str, dimension: int) -> list[float]:
    """A deterministic unit vector for ``text``: signed feature hashing of its lower-cased words.

    Texts that share words get a positive cosine similarity; a text without words hashes as a whole.
    """
    vector = [0.0] * dimension
    for token in re.findall(r"\w+", text.lower()) or [text]:
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dimension
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0.0:  # the words cancelled out: fall back to one hashed axis
        vector[int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little") % dimension] = 1.0
        return vector
    return [value / norm for value in vector]


def split_pieces(text: str, count: int) -> list[str]:
    """Split ``text`` into at most ``count`` consecutive, non-empty pieces that join back to it."""
    if not text:
        return [""]
    size = max(1, math.ceil(len(text) / max(1, count)))
    return [text[start : start + size] for start in range(0, len(text), size)]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


class _Listener(ThreadingHTTPServer):
    """The socket server; it holds a reference to the :class:`OllamaTestServer` that owns it."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: OllamaTestServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: clients that time out or give up are part of what the tests do."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "OllamaTestServer"
    sys_version = ""
    timeout = 30
    server: _Listener

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Keep the test output clean."""

    # --- routing -------------------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        """Answer the liveness and listing endpoints."""
        owner = self.server.owner
        owner._record("GET", self.path, None)
        if self.path == "/":
            self._send_text(200, "Ollama is running")
        elif self.path == "/api/version":
            self._send_json(200, {"version": OLLAMA_VERSION})
        elif self.path == "/v1/models":
            if self._failed_before_reply(owner.mode, openai=True):
                return
            self._send_json(200, openai_protocol.models_list(owner.models))
        elif self.path == "/api/tags":
            if self._failed_before_reply(owner.mode):
                return
            self._send_json(200, {"models": [owner._model_entry(name) for name in owner.models]})
        else:
            self._send_text(404, "404 page not found")

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        """Parse and record the JSON body, then answer according to the mode of the moment."""
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            owner._record("POST", self.path, {"_raw": raw.decode(errors="replace")})
            self._send_json(400, {"error": "invalid character in request body"})
            return
        owner._record("POST", self.path, body)
        mode = owner.mode
        handlers = {
            "/api/chat": self._answer_completion,
            "/api/generate": self._answer_completion,
            "/api/embed": self._answer_embed,
            "/api/show": self._answer_show,
            "/v1/chat/completions": self._answer_openai_chat,
        }
        handler = handlers.get(self.path)
        if handler is None:
            self._send_text(404, "404 page not found")
            return
        if self._failed_before_reply(mode, openai=self.path.startswith("/v1/")):
            return
        if mode == "forward" and self.path == "/api/chat":
            self._forward_ollama_chat(body)
            return
        handler(body, mode)

    # --- endpoints -----------------------------------------------------------------------------------------

    def _failed_before_reply(self, mode: str, openai: bool = False) -> bool:
        """Handle the modes that fail before any reply is produced; True when the request is done."""
        owner = self.server.owner
        if mode == "hang":
            owner._stopping.wait(owner.hang_s)
            self.close_connection = True
            return True
        if mode.startswith("http_"):
            status = int(mode.removeprefix("http_"))
            body = openai_protocol.error_body(status) if openai else {"error": ERROR_MESSAGES[status]}
            self._send_json(status, body)
            return True
        return False

    def _answer_openai_chat(self, body: dict[str, Any], mode: str) -> None:
        """``/v1/chat/completions``: a ``chat.completion`` (or its SSE stream) following the mode."""
        owner = self.server.owner
        if mode == "forward":
            status, reply = openai_protocol.forward(owner.forward_url, body, owner.hang_s)
            self._send_json(status, reply)
            return
        try:
            content = owner.responder(body)
        except Exception as error:  # noqa: BLE001 - a scripted responder's bug, reported as a server error
            self._send_json(500, {"error": {"message": f"test server responder failed: {error!r}"}})
            return
        content = {"garbage": GARBAGE_REPLY, "wrong_shape": WRONG_SHAPE_REPLY,
                   "think": THINK_BLOCK + content}.get(mode, content)
        model = self._reply_model(body, mode)
        if body.get("stream"):
            events = openai_protocol.stream_events(model, split_pieces(content, owner.pieces), body)
            if mode == "wrong_shape_stream":
                events = [b'data: {"foo": 1}\n\n'] * len(events)
            self._start_response(200, "text/event-stream", chunked=True)
            for number, event in enumerate(events):
                if mode == "slow" and owner._stopping.wait(owner.delay_s):
                    self._reset()
                    return
                self._write_chunk(event[: len(event) // 2] if mode == "invalid_json_stream" and number else event)
                if mode == "reset" and number == 0:
                    self._reset()
                    return
            self._write_chunk(b"")
            return
        reply = {"foo": 1} if mode == "wrong_shape_stream" else openai_protocol.completion(model, content, body)
        self._send_single(reply, mode)

    def _forward_ollama_chat(self, body: dict[str, Any]) -> None:
        """``/api/chat`` answered by the real model at ``forward_url``, streamed back as Ollama does."""
        owner = self.server.owner
        status, reply = openai_protocol.forward(owner.forward_url, openai_protocol.ollama_to_openai(body),
                                                owner.hang_s)
        if status != 200:
            self._send_json(status, {"error": reply.get("error", {}).get("message", "forwarding failed")})
            return
        content, counts = openai_protocol.forwarded_content(reply)
        model = str(body.get("model", ""))
        parts = [self._part(model, True, piece=piece) for piece in split_pieces(content, owner.pieces)]
        final = self._part(model, True, piece="", done=True, body=body, eval_count=counts.get("completion_tokens", 1))
        final["prompt_eval_count"] = counts.get("prompt_tokens", final["prompt_eval_count"])
        if body.get("stream", True) is False:
            self._send_single(self._merge(parts, final, True), "ok")
        else:
            self._send_stream(parts, final, "ok")

    def _answer_completion(self, body: dict[str, Any], mode: str) -> None:
        owner = self.server.owner
        chat = self.path == "/api/chat"
        model = self._reply_model(body, mode)
        try:
            content = owner.responder(body)
            if mode == "wrong_shape":
                content = WRONG_SHAPE_REPLY
            wants_tool = chat and bool(body.get("tools")) and mode in TOOL_CALL_MODES
            tool_call = self._tool_call(body, content) if wants_tool else None
        except Exception as error:  # a scripted responder's bug: report it loudly, as Ollama reports errors
            self._send_json(500, {"error": f"test server responder failed: {error!r}"})
            return
        if tool_call:  # the answer travels in the tool call; the content is empty
            content = ""
        thinking = ""
        if mode == "garbage":
            content = GARBAGE_REPLY
        elif mode == "think":
            if body.get("think"):
                thinking = THINKING
            else:
                content = THINK_BLOCK + content

        pieces = split_pieces(content, owner.pieces) if content else []
        parts = [self._part(model, chat, piece=piece) for piece in pieces]
        if thinking:
            parts.insert(0, self._part(model, chat, piece="", thinking=thinking))
        if tool_call:
            parts.append(self._part(model, chat, piece="", tool_calls=[tool_call]))
        final = self._part(model, chat, piece="", done=True, body=body, eval_count=max(1, len(parts)))

        if mode == "wrong_shape_stream":
            parts, final = [{"foo": 1} for _ in parts], {"foo": 1}

        if body.get("stream", True) is False:
            self._send_single(self._merge(parts, final, chat), mode)
        else:
            self._send_stream(parts, final, mode)

    def _answer_embed(self, body: dict[str, Any], mode: str) -> None:
        owner = self.server.owner
        if mode == "garbage":
            self._send_text(200, GARBAGE_REPLY)
            return
        if mode in ("wrong_shape", "wrong_shape_stream"):
            self._send_json(200, {"foo": 1})
            return
        texts = body.get("input", "")
        texts = [texts] if isinstance(texts, str) else list(texts)
        dimension = int(body.get("dimensions") or owner.embedding_dim)
        reply = {
            "model": self._reply_model(body, mode),
            "embeddings": [hashed_embedding(text, dimension) for text in texts],
            "total_duration": 1_000_000,
            "load_duration": 100_000,
            "prompt_eval_count": sum(len(text.split()) for text in texts),
        }
        if mode in ("slow", "reset", "invalid_json_stream"):
            data = json.dumps(reply).encode()
            if mode == "slow":
                owner._stopping.wait(owner.delay_s)
            elif mode == "reset":
                self._start_response(200, "application/json", length=len(data))
                self.wfile.write(data[: len(data) // 2])
                self._reset()
                return
            else:
                data = data[: len(data) // 2]
            self._send_bytes(200, "application/json", data)
            return
        self._send_json(200, reply)

    def _answer_show(self, body: dict[str, Any], mode: str) -> None:
        owner = self.server.owner
        name = body.get("model") or body.get("name") or ""
        if name not in owner.models and f"{name}:latest" not in owner.models:
            self._send_json(404, {"error": f"model '{name}' not found"})
            return
        self._send_json(
            200,
            {
                "modelfile": f"FROM {name}\n",
                "parameters": "stop \"<|im_end|>\"",
                "template": "{{ .Prompt }}",
                "details": owner._model_entry(name)["details"],
                "model_info": {"general.architecture": "qwen2", "general.parameter_count": 3_000_000_000},
                "capabilities": ["embedding"] if "embed" in name else ["completion", "tools"],
                "modified_at": "2026-11-01T00:00:00Z",
            },
        )

    # --- reply pieces --------------------------------------------------------------------------------------

    def _reply_model(self, body: dict[str, Any], mode: str) -> str:
        asked = str(body.get("model", ""))
        if mode != "wrong_model":
            return asked
        wrong = self.server.owner.wrong_model_name
        return wrong if wrong != asked else f"{wrong}-other"

    def _tool_call(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        arguments = json.loads(content)
        if not isinstance(arguments, dict):
            raise ValueError(f"tool-call arguments must be a JSON object, got {content!r}")
        name = body["tools"][0].get("function", {}).get("name", "")
        return {"function": {"name": name, "arguments": arguments}}

    def _part(
        self,
        model: str,
        chat: bool,
        *,
        piece: str,
        thinking: str = "",
        tool_calls: list[dict[str, Any]] | None = None,
        done: bool = False,
        body: dict[str, Any] | None = None,
        eval_count: int = 0,
    ) -> dict[str, Any]:
        part: dict[str, Any] = {"model": model, "created_at": _now()}
        if chat:
            message: dict[str, Any] = {"role": "assistant", "content": piece}
            if thinking:
                message["thinking"] = thinking
            if tool_calls:
                message["tool_calls"] = tool_calls
            part["message"] = message
        else:
            part["response"] = piece
            if thinking:
                part["thinking"] = thinking
        part["done"] = done
        if done:
            prompt = json.dumps((body or {}).get("messages") or (body or {}).get("prompt") or "")
            part.update(
                done_reason="stop",
                total_duration=5_000_000,
                load_duration=1_000_000,
                prompt_eval_count=max(1, len(prompt.split())),
                prompt_eval_duration=1_000_000,
                eval_count=eval_count,
                eval_duration=3_000_000,
            )
            if not chat:
                part["context"] = [1, 2, 3]
        return part

    @staticmethod
    def _merge(parts: list[dict[str, Any]], final: dict[str, Any], chat: bool) -> dict[str, Any]:
        """Fold streamed parts into the single object a ``"stream": false`` request gets."""
        if "done" not in final:  # the wrong-shape protocol: nothing to merge
            return final
        merged = dict(final)
        if chat:
            message: dict[str, Any] = {"role": "assistant", "content": ""}
            for part in parts:
                piece = part["message"]
                message["content"] += piece.get("content", "")
                for key in ("thinking", "tool_calls"):
                    if key in piece:
                        message[key] = piece[key]
            merged["message"] = message
        else:
            merged["response"] = "".join(part.get("response", "") for part in parts)
            thinking = "".join(part.get("thinking", "") for part in parts)
            if thinking:
                merged["thinking"] = thinking
        return merged

    # --- writing -------------------------------------------------------------------------------------------

    def _send_stream(self, parts: list[dict[str, Any]], final: dict[str, Any], mode: str) -> None:
        owner = self.server.owner
        self._start_response(200, NDJSON, chunked=True)
        lines = [json.dumps(part) for part in parts]
        if mode == "invalid_json_stream":
            good = lines[:1] or [json.dumps(final)]
            lines = [*good, good[0][: len(good[0]) // 2]]
        else:
            lines.append(json.dumps(final))
        for index, line in enumerate(lines):
            if mode == "slow" and owner._stopping.wait(owner.delay_s):
                self._reset()
                return
            self._write_chunk((line + "\n").encode())
            if mode == "reset" and index == 0:
                self._reset()
                return
        self._write_chunk(b"")

    def _send_single(self, reply: dict[str, Any], mode: str) -> None:
        owner = self.server.owner
        data = json.dumps(reply).encode()
        if mode == "slow" and owner._stopping.wait(owner.delay_s):
            return
        if mode == "reset":
            self._start_response(200, "application/json", length=len(data))
            self.wfile.write(data[: len(data) // 2])
            self._reset()
            return
        if mode == "invalid_json_stream":
            data = data[: len(data) // 2]
        self._send_bytes(200, "application/json", data)

    def _start_response(self, status: int, content_type: str, *, length: int = 0, chunked: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _send_bytes(self, status: int, content_type: str, data: bytes) -> None:
        self._start_response(status, content_type, length=len(data))
        self.wfile.write(data)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        self._send_bytes(status, "application/json; charset=utf-8", json.dumps(payload).encode())

    def _send_text(self, status: int, text: str) -> None:
        self._send_bytes(status, "text/plain; charset=utf-8", text.encode())

    def _reset(self) -> None:
        """Abort the connection with a TCP RST instead of an orderly close."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()  # the makefile() reader holds a reference that would keep the socket open
        self.connection.close()
        self.close_connection = True


class OllamaTestServer:
    """An Ollama-protocol server on ``host`` (a free port by default), served from a daemon thread.

    Args:
        mode: The initial mode (see the module docstring).
        responder: ``(request_json) -> str``, the reply content for chat and generate requests.
        host: The address to listen on.
        port: The port; 0 picks a free one.
        delay_s: The pause before each streamed piece in "slow" mode.
        hang_s: How long "hang" waits before closing the connection (``stop()`` ends it sooner).
        pieces: How many streamed pieces a reply is split into.
        embedding_dim: The length of ``/api/embed`` vectors when the request does not ask for ``dimensions``.
        models: The model names ``/api/tags`` lists and ``/api/show`` knows.
        wrong_model_name: The ``model`` field sent back in "wrong_model" mode.
        forward_url: The real OpenAI-compatible server (``.../v1``) that "forward" mode passes chat requests to.
    """

    def __init__(
        self,
        *,
        mode: str = "ok",
        responder: Responder | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        delay_s: float = 0.2,
        hang_s: float = 30.0,
        pieces: int = 3,
        embedding_dim: int = 64,
        models: tuple[str, ...] | list[str] = DEFAULT_MODELS,
        wrong_model_name: str = "llama3.2:1b",
        forward_url: str = "",
    ) -> None:
        """Configure the server; ``start()`` (or ``with``) opens the listener."""
        _check_mode(mode)
        self.responder: Responder = responder or default_responder
        self.host = host
        self.delay_s = delay_s
        self.hang_s = hang_s
        self.pieces = pieces
        self.embedding_dim = embedding_dim
        self.models = list(models)
        self.wrong_model_name = wrong_model_name
        self.forward_url = forward_url
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._posts: list[tuple[str, dict[str, Any]]] = []
        self._mode = mode
        self._port = port
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._listener: _Listener | None = None
        self._thread: threading.Thread | None = None
        self._started = False

    # --- public API ----------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port, fixed by the first ``start()``."""
        if not self._port:
            raise RuntimeError("the server has not been started")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT``, what ``ChatOllama(base_url=...)`` takes."""
        return f"http://{self.host}:{self.port}"

    @property
    def mode(self) -> str:
        """The current mode; setting it to or from "refuse" closes or re-opens the listener."""
        with self._lock:
            return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        _check_mode(value)
        with self._lock:
            if self._started and value == "refuse":
                self._close_listener()
            elif self._started and self._listener is None:
                self._open_listener()  # may raise OSError: then the mode stays "refuse"
            self._mode = value

    @property
    def listening(self) -> bool:
        """Whether the listening socket is open."""
        with self._lock:
            return self._listener is not None

    def start(self) -> OllamaTestServer:
        """Open the listener (unless the mode is "refuse", which only reserves the port) and serve."""
        with self._lock:
            if self._started:
                return self
            self._stopping = threading.Event()
            self._open_listener()
            self._started = True
            if self._mode == "refuse":
                self._close_listener()
        return self

    def stop(self) -> None:
        """Release hanging handlers and close the listener; returns at once even if handlers hang."""
        with self._lock:
            self._stopping.set()
            self._close_listener()
            self._started = False

    def clear(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self.requests.clear()
            self.paths.clear()
            self._posts.clear()

    def requests_to(self, path: str) -> list[dict[str, Any]]:
        """The recorded bodies of the POST requests to ``path`` (e.g. ``"/api/chat"``)."""
        with self._lock:
            return [body for seen, body in self._posts if seen == path]

    def __enter__(self) -> OllamaTestServer:
        """Start the server."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        """Stop the server."""
        self.stop()

    # --- internals -----------------------------------------------------------------------------------------

    def _record(self, method: str, path: str, body: dict[str, Any] | None) -> None:
        with self._lock:
            self.paths.append(f"{method} {path}")
            if body is not None:
                self.requests.append(body)
                self._posts.append((path, body))

    def _model_entry(self, name: str) -> dict[str, Any]:
        return {
            "name": name,
            "model": name,
            "modified_at": "2026-11-01T00:00:00Z",
            "size": 1_900_000_000,
            "digest": hashlib.sha256(name.encode()).hexdigest(),
            "details": {
                "parent_model": "",
                "format": "gguf",
                "family": "bert" if "embed" in name else "qwen2",
                "families": ["bert" if "embed" in name else "qwen2"],
                "parameter_size": "137M" if "embed" in name else "3.1B",
                "quantization_level": "Q4_K_M",
            },
        }

    def _open_listener(self) -> None:
        try:
            listener = _Listener((self.host, self._port), self)
        except OSError as error:
            raise OSError(f"cannot re-open the test server on {self.host}:{self._port}: {error}") from error
        self._port = listener.server_address[1]
        thread = threading.Thread(
            target=listener.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"ollama-test-server-{self._port}",
            daemon=True,
        )
        thread.start()
        self._listener, self._thread = listener, thread

    def _close_listener(self) -> None:
        listener, thread = self._listener, self._thread
        self._listener = self._thread = None
        if listener is None:
            return
        listener.shutdown()  # stops serve_forever within one poll interval; handler threads run on
        listener.server_close()
        if thread is not None:
            thread.join(timeout=1.0)


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {sorted(MODES)}")


__all__ = [
    "DEFAULT_REPLY",
    "MODES",
    "OllamaTestServer",
    "closed_port",
    "default_responder",
    "hashed_embedding",
]
