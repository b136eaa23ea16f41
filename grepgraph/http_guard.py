"""``Host`` and ``Origin`` checks for every HTTP surface (serve, MCP over HTTP, the Agent Server's app).

A server on loopback is still reachable from a browser: a web page can make a name it controls resolve
to 127.0.0.1 (DNS rebinding) and then read the answers, or post to the server from its own origin. So a
request is served only when

- its ``Host`` is a loopback name (``localhost``, ``127.0.0.1``, ``[::1]``) or one the operator allowed,
  with the port the server listens on — else ``421 Misdirected Request``;
- it has no ``Origin`` (not a browser, or same-origin), or a loopback or allowed origin — else ``403``.
"""

from __future__ import annotations

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
