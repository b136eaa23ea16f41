"""Request limits every HTTP surface shares: body size and time, an answer's deadline (ASGI, no server)."""

from __future__ import annotations

import asyncio
import json

from grepgraph.http_guard import BodySizeLimit, RequestDeadline


async def echo(scope: dict, receive, send) -> None:
    """An app that answers with the body it read."""
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def slow(seconds: float, stream: bool = False):
    async def app(scope: dict, receive, send) -> None:
        if stream:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"event: ping\n\n", "more_body": True})
        await asyncio.sleep(seconds)
        if not stream:
            await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})
    return app


def call(app, method: str = "POST", chunks: list[bytes] | None = None, headers: list | None = None,
         pause_s: float = 0.0) -> tuple[int | None, bytes]:
    """Run one request through ``app``; its status and body (status None: no answer)."""
    chunks = [b"{}"] if chunks is None else chunks
    sent: list[dict] = []

    async def receive() -> dict:
        if not chunks:
            await asyncio.sleep(3600)
        await asyncio.sleep(pause_s)
        body = chunks.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(chunks)}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/mcp", "headers": headers or []}
    asyncio.run(app(scope, receive, send))
    status = next((m["status"] for m in sent if m["type"] == "http.response.start"), None)
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_a_body_within_the_limits_reaches_the_app():
    assert call(BodySizeLimit(echo, max_bytes=10), chunks=[b"12345", b"6789"]) == (200, b"123456789")


def test_a_body_over_the_limit_is_refused_declared_or_not():
    status, body = call(BodySizeLimit(echo, max_bytes=10), chunks=[b"12345678", b"12345678"])
    assert status == 413 and "larger than 10 bytes" in json.loads(body)["detail"]
    declared = [(b"content-length", b"11")]
    assert call(BodySizeLimit(echo, max_bytes=10), headers=declared)[0] == 413


def test_a_trickled_body_is_cut_off():
    status, body = call(BodySizeLimit(echo, body_timeout_s=0.2), chunks=[b"1", b"2", b"3"], pause_s=0.15)
    assert status == 408 and "not received within 0.2s" in json.loads(body)["detail"]


def test_an_answer_past_the_deadline_is_a_504():
    status, body = call(RequestDeadline(slow(30), timeout_s=0.2))
    assert status == 504 and "longer than 0.2s" in json.loads(body)["detail"]
    assert call(RequestDeadline(slow(0), timeout_s=5)) == (200, b"done")


def test_a_stream_past_the_deadline_ends_without_its_answer():
    assert call(RequestDeadline(slow(30, stream=True), timeout_s=0.2)) == (200, b"event: ping\n\n")


def test_only_posts_have_a_deadline():
    assert call(RequestDeadline(slow(0.3), timeout_s=0.1), method="GET") == (200, b"done")
