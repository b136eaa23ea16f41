"""``Host`` and ``Origin`` checks, and limits on what a request may take, for every HTTP surface.

Serve, MCP over HTTP and the Agent Server's app share them.

A server on loopback is still reachable from a browser: a web page can make a name it controls resolve
to 127.0.0.1 (DNS rebinding) and then read the answers, or post to the server from its own origin. So a
request is served only when

- its ``Host`` is a loopback name (``localhost``, ``127.0.0.1``, ``[::1]``) or one the operator allowed,
  with the port the server listens on — else ``421 Misdirected Request``;
- it has no ``Origin`` (not a browser, or same-origin), or a loopback or allowed origin — else ``403``.

And no request holds a connection or a handler for long (uvicorn waits for a slow client as long as it
likes): its headers must arrive within :data:`HEADER_TIMEOUT_S` (:func:`header_deadline_protocol`), its
body within :data:`BODY_TIMEOUT_S` and :data:`MAX_BODY_BYTES` (:class:`BodySizeLimit`), and where a server
sets one, its answer within a deadline (:class:`RequestDeadline`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from grepgraph.retrievers.core.settings import environment

# Where a deployment without a command line (the Agent Server) lists more names: comma-separated.
ALLOWED_HOSTS_VARIABLE = "GREPGRAPH_ALLOWED_HOSTS"
ALLOWED_ORIGINS_VARIABLE = "GREPGRAPH_ALLOWED_ORIGINS"
MAX_BODY_BYTES = 1_000_000
# The whole body must arrive in this time (a client trickling a byte a second would hold a handler).
BODY_TIMEOUT_S = 15.0
# And the request line and headers in this time.
HEADER_TIMEOUT_S = 10.0


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) stays on this machine."""
    host = host.strip().lower().removeprefix("[").removesuffix("]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None] | None:
    """``Host`` header value -> ``(lower-case name, port or None)``; ``None`` when it is malformed."""
    try:
        parts = urlsplit(f"//{value.strip()}")
        port = parts.port
    except ValueError:
        return None
    name = parts.hostname
    if not name or parts.username is not None or parts.path or parts.query or parts.fragment:
        return None
    return name.lower(), port


@dataclass(frozen=True)
class HostPolicy:
    """The ``Host`` names and browser origins a server answers, beyond loopback."""

    hosts: frozenset[str] = frozenset()
    origins: frozenset[str] = frozenset()

    @classmethod
    def allowing(cls, hosts: Iterable[str] = (), origins: Iterable[str] = ()) -> HostPolicy:
        """A policy from operator lists: host names (``name`` or ``name:port``) and origins (``https://x``)."""
        return cls(frozenset(h.strip().lower() for h in hosts if h.strip()),
                   frozenset(o.strip().lower().rstrip("/") for o in origins if o.strip()))

    @classmethod
    def from_environment(cls, origins: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> HostPolicy:
        """``$GREPGRAPH_ALLOWED_HOSTS`` and ``$GREPGRAPH_ALLOWED_ORIGINS`` (comma-separated), plus ``origins``."""
        environ = environment() if environ is None else environ
        return cls.allowing(environ.get(ALLOWED_HOSTS_VARIABLE, "").split(","),
                            [*origins, *environ.get(ALLOWED_ORIGINS_VARIABLE, "").split(",")])

    def host_problem(self, host: str | None, server_port: int | None) -> str:
        """Why a request's ``Host`` is refused (empty when it is fine)."""
        if not host:
            return "the request has no Host header"
        parsed = split_host(host)
        if parsed is None:
            return f"malformed Host header {host[:100]!r}"
        name, port = parsed
        if host.strip().lower() in self.hosts:
            return ""
        if server_port is not None and (port or 80) != server_port:
            return f"Host {host[:100]!r} names port {port or 80}, this server listens on {server_port}"
        if is_loopback(name) or name in self.hosts or f"[{name}]" in self.hosts:
            return ""
        return (f"Host {host[:100]!r} is not this server's name (DNS rebinding protection); "
                f"allow it with --allow-host (Agent Server: ${ALLOWED_HOSTS_VARIABLE})")

    def origin_problem(self, origin: str | None) -> str:
        """Why a request's ``Origin`` is refused (empty when absent, loopback or allowed)."""
        if origin is None:
            return ""
        value = origin.strip().lower().rstrip("/")
        if value in self.origins:
            return ""
        try:
            parts = urlsplit(value)
            _ = parts.port  # raises on a malformed port
        except ValueError:
            parts = None
        if parts is not None and parts.scheme in ("http", "https") and parts.hostname and is_loopback(parts.hostname):
            return ""
        return f"Origin {origin[:100]!r} may not call this server (only loopback pages and allowed origins)"


class HostGuard:
    """ASGI middleware applying a :class:`HostPolicy` to every HTTP and WebSocket request."""

    def __init__(self, app: Any, policy: HostPolicy | None = None) -> None:
        self.app = app
        self.policy = policy or HostPolicy()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        """Answer 421 / 403 for a refused ``Host`` / ``Origin``; pass everything else through unchanged."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for key, value in scope.get("headers") or []:
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        server = scope.get("server")
        port = server[1] if server and len(server) > 1 and isinstance(server[1], int) else None
        problem = self.policy.host_problem(headers.get("host"), port)
        status = 421
        if not problem:
            problem, status = self.policy.origin_problem(headers.get("origin")), 403
        if not problem:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"detail": problem}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


async def reject(send: Any, status: int, message: str) -> None:
    """Answer ``status`` with ``{"detail": message}`` and close the connection."""
    body = json.dumps({"detail": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """ASGI middleware: a 413 for bodies over ``max_bytes`` (declared or, if chunked, as read), a 408 for slow ones."""

    def __init__(self, app: Any, max_bytes: int = MAX_BODY_BYTES, body_timeout_s: float = BODY_TIMEOUT_S) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        """Reject oversized or slow bodies; pass everything else through unchanged."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.max_bytes
            except ValueError:
                await reject(send, 400, "invalid Content-Length header")
                return
            if too_big:
                await reject(send, 413, f"request body is larger than {self.max_bytes:,} bytes")
                return
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        # Read the body (at most max_bytes + 1, declared or chunked) within the time limit, then replay it.
        try:
            body = await asyncio.wait_for(self._read_body(receive), self.body_timeout_s)
        except asyncio.TimeoutError:
            await reject(send, 408, f"request body not received within {self.body_timeout_s:g}s")
            return
        if body is None:  # the client went away
            return
        if len(body) > self.max_bytes:
            await reject(send, 413, f"request body is larger than {self.max_bytes:,} bytes")
            return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read_body(self, receive: Any) -> bytes | None:
        """The request body, cut just past ``max_bytes``; ``None`` if the client disconnected."""
        chunks, size, more = [], 0, True
        while more and size <= self.max_bytes:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        return b"".join(chunks)


class RequestDeadline:
    """ASGI middleware: a POST is answered within ``timeout_s``, else a 504 (or its stream ends) and it is cancelled.

    Only POSTs: an MCP client's GET is a stream of notifications that stays open by design.
    """

    def __init__(self, app: Any, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        """Run the request with a deadline; past it, a 504 (or, once the answer has started, its end)."""
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        started = finished = False

        async def sending(message: dict) -> None:
            nonlocal started, finished
            started = started or message["type"] == "http.response.start"
            finished = finished or (message["type"] == "http.response.body" and not message.get("more_body"))
            await send(message)

        try:
            await asyncio.wait_for(self.app(scope, receive, sending), self.timeout_s)
        except asyncio.TimeoutError:
            if not started:
                await reject(send, 504, f"the request took longer than {self.timeout_s:g}s and was stopped")
            elif not finished:  # a stream (an MCP answer as server-sent events): it ends without its answer
                await send({"type": "http.response.body", "body": b"", "more_body": False})


def header_deadline_protocol(timeout_s: float = HEADER_TIMEOUT_S) -> type:
    """The h11 protocol of uvicorn with a deadline for the request line and headers.

    uvicorn waits forever for a client that never finishes its headers (its keep-alive timer
    starts only after a response). This answers such a connection 408 and closes it.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadlineProtocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._header_deadline: asyncio.TimerHandle | None = asyncio.get_running_loop().call_later(
                timeout_s, self._headers_too_slow)

        def _headers_too_slow(self) -> None:
            self._header_deadline = None
            if self.cycle is None and not self.transport.is_closing():
                self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n"
                                     b"connection: close\r\n\r\n")
                self.transport.close()

        def _cancel_deadline(self) -> None:
            if self._header_deadline is not None:
                self._header_deadline.cancel()
                self._header_deadline = None

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None:  # a request's headers arrived
                self._cancel_deadline()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_deadline()
            super().connection_lost(exc)

    return HeaderDeadlineProtocol
