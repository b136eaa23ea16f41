"""MCP over HTTP with its request limits, on a real uvicorn: a tool call past the deadline errs, the session goes on."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

pytest.importorskip("mcp")
uvicorn = pytest.importorskip("uvicorn")

from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

from grepgraph.http_guard import HostPolicy, header_deadline_protocol  # noqa: E402
from grepgraph.mcp_server import http_app  # noqa: E402
from tests.waiting import wait_until  # noqa: E402


@contextmanager
def serving(server: MCPServer, timeout_s: float) -> Iterator[str]:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    config = uvicorn.Config(http_app(server, "127.0.0.1", HostPolicy(), timeout_s), host="127.0.0.1", port=port,
                            log_level="warning", http=header_deadline_protocol())
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    wait_until(lambda: running.started, what="uvicorn's start")
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        running.should_exit = True
        thread.join(timeout=30)


def tools() -> MCPServer:
    server = MCPServer("limits")
    release = threading.Event()

    @server.tool()
    def stuck() -> str:
        release.wait(60)  # a search that does not end
        return "late"

    @server.tool()
    def quick() -> str:
        return "quick"

    server.release = release  # type: ignore[attr-defined]
    return server


def test_a_tool_call_past_the_deadline_errs_and_the_session_goes_on():
    server = tools()

    async def session_calls(url: str) -> tuple[str, list[str]]:
        async with streamable_http_client(url) as (read, write, *_), ClientSession(read, write) as session:
            await session.initialize()
            try:
                await session.call_tool("stuck", {})
                stuck = "answered"
            except Exception as error:  # the SDK's error for a stream that ended without its answer
                stuck = type(error).__name__
            quick = await session.call_tool("quick", {})
            return stuck, [content.text for content in quick.content]

    with serving(server, timeout_s=1.0) as url:
        try:
            stuck, quick = asyncio.run(session_calls(url))
        finally:
            server.release.set()  # type: ignore[attr-defined]
    assert stuck == "MCPError"
    assert quick == ["quick"]


def test_a_body_over_the_limit_and_headers_never_finished_are_refused():
    with serving(tools(), timeout_s=5.0) as url:
        big = httpx.post(url, content=b"x" * 2_000_000, headers={"content-type": "application/json"}, timeout=30)
        assert big.status_code == 413
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port)) as connection:
            connection.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
            connection.settimeout(60)
            answer = connection.recv(1024)  # the server's 408, well before this timeout
        assert answer.startswith(b"HTTP/1.1 408"), answer


def test_a_search_past_the_servers_run_timeout_is_a_tool_error(tmp_path_factory):
    from grepgraph.retrievers.store.index import CodeIndex
    from mcp.server.mcpserver.exceptions import ToolError

    from grepgraph.mcp_server import create_server
    from tests.conftest import isolated_settings

    repo = tmp_path_factory.mktemp("repo")
    (repo / "main.py").write_text("def main():\n    return 0\n")
    with isolated_settings(tmp_path_factory):
        CodeIndex(repo).update(embed=False)
        server = create_server([str(repo)], run_timeout_s=1e-6)  # past before the first node runs
        with pytest.raises(ToolError, match="deadline"):
            asyncio.run(server.call_tool("search_code", {"query": "main", "rerank": False, "rewrite": False}))
        answer = asyncio.run(create_server([str(repo)]).call_tool("search_code", {"query": "main"}))
        assert "main.py" in str(answer)
