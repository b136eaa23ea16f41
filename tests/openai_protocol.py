"""The OpenAI-compatible side of the protocol test server (``tests/ollama_server.py``), and its forwarding.

``POST /v1/chat/completions`` answers as llama.cpp's server, LM Studio, vLLM or a hosted endpoint do: one
``chat.completion`` object (``"stream": false``, what ``ChatOpenAI`` sends when a ``response_format`` is
given) or server-sent ``chat.completion.chunk`` events ending in ``data: [DONE]``; errors are
``{"error": {"message", "type", "code"}}`` with the HTTP status. ``GET /v1/models`` lists the models.

In ``"forward"`` mode the server passes chat requests on to a real OpenAI-compatible server
(``forward_url``, e.g. ``http://127.0.0.1:8080/v1``): ``/api/chat`` is translated (messages, ``format`` as a
JSON-schema ``response_format``, ``num_predict`` as ``max_tokens``) so the real ``ChatOllama`` client meets a
real model, and ``/v1/chat/completions`` is passed through.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

ERROR_TYPES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded", 500: "server_error",
               503: "server_error"}
ERROR_TEXTS = {401: "Incorrect API key provided.", 404: "The model does not exist or you do not have access to it.",
               429: "Rate limit reached for requests.", 500: "The server had an error while processing your request.",
               503: "The server is overloaded or not ready yet."}


def error_body(status: int) -> dict[str, Any]:
    """The error object an OpenAI-compatible server sends with ``status``."""
    return {"error": {"message": ERROR_TEXTS.get(status, "error"), "type": ERROR_TYPES.get(status, "error"),
                      "code": ERROR_TYPES.get(status, "error")}}


def usage(body: dict[str, Any], content: str) -> dict[str, int]:
    """Rough token counts (words) for the request's messages and the reply."""
    prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
    output = max(1, len(content.split()))
    return {"prompt_tokens": max(1, prompt), "completion_tokens": output, "total_tokens": max(1, prompt) + output}


def completion(model: str, content: str, body: dict[str, Any], counts: dict[str, int] | None = None) -> dict:
    """A ``chat.completion`` object carrying ``content``."""
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": counts or usage(body, content)}


def stream_events(model: str, pieces: list[str], body: dict[str, Any]) -> list[bytes]:
    """Server-sent events of a streamed completion: one chunk per piece, a final chunk, then ``[DONE]``."""
    def chunk(delta: dict, finish: str | None) -> bytes:
        data = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(data)}\n\n".encode()
    events = [chunk({"role": "assistant", "content": ""}, None)]
    events += [chunk({"content": piece}, None) for piece in pieces]
    events.append(chunk({}, "stop"))
    return [*events, b"data: [DONE]\n\n"]


def models_list(names: list[str]) -> dict[str, Any]:
    """``GET /v1/models``."""
    return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "test"}
                                       for name in names]}


def ollama_to_openai(body: dict[str, Any]) -> dict[str, Any]:
    """An Ollama ``/api/chat`` request as an OpenAI chat-completions request (not streamed)."""
    request: dict[str, Any] = {"model": body.get("model", ""), "stream": False,
                               "messages": [{"role": m.get("role", "user"), "content": m.get("content", "")}
                                            for m in body.get("messages") or []]}
    options = body.get("options") or {}
    if "temperature" in options:
        request["temperature"] = options["temperature"]
    if options.get("num_predict"):
        request["max_tokens"] = options["num_predict"]
    shape = body.get("format")
    if isinstance(shape, dict):
        request["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": shape}}
    elif shape == "json":
        request["response_format"] = {"type": "json_object"}
    return request


def forward(base_url: str, request: dict[str, Any], timeout_s: float) -> tuple[int, dict[str, Any]]:
    """POST ``request`` to ``<base_url>/chat/completions``; ``(status, reply)`` (an error body on failure)."""
    data = json.dumps({**request, "stream": False}).encode()
    call = urllib.request.Request(f"{base_url.rstrip('/')}/chat/completions", data=data,
                                  headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(call, timeout=timeout_s) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, error_body(error.code)
    except OSError:
        return 502, error_body(503)


def forwarded_content(reply: dict[str, Any]) -> tuple[str, dict[str, int]]:
    """The text and token counts of a real server's completion."""
    content = reply["choices"][0]["message"].get("content") or ""
    return content, dict(reply.get("usage") or {})
