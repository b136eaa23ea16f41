"""The service's wire protocol: bounded request lines, heartbeats, and a client that gives up on a silent service."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from grepgraph import service_client
from grepgraph.daemon import BadRequest, parse_request, read_request_line
from grepgraph.service_client import (
    HEARTBEAT,
    MAX_REQUEST_BYTES,
    ServiceLost,
    ServiceSilent,
    read_reply_line,
)


@pytest.mark.parametrize(("line", "message"), [
    (b"not json\n", "not a JSON request"),
    (b"[1, 2]\n", "must be a JSON object, got list"),
    (b'{"op": 3}\n', "'op' must be a str, got int"),
    (b'{"op": "search", "version": "v", "input": "query"}\n', "'input' must be a dict, got str"),
    (b'{"op": "search", "version": "v"}\n', "a search request needs its 'input' object"),
    (b'{"op": "search", "input": {}, "env": {"GREPGRAPH_X": 1}}\n', "'env' must map names to strings"),
    (b"[" * 100_000 + b"\n", "not a JSON request"),
    (b'"' + b"x" * MAX_REQUEST_BYTES + b'"\n', f"over {MAX_REQUEST_BYTES:,} bytes"),
])
def test_a_bad_request_line_is_refused_in_one_line(line: bytes, message: str):
    with pytest.raises(BadRequest) as caught:
        parse_request(line)
    assert message in str(caught.value)


def test_a_request_line_is_read_whole_and_parsed():
    request = {"op": "search", "version": "v", "input": {"query": "q"}, "context": {}, "env": {"GREPGRAPH_A": "1"}}
    assert parse_request(json.dumps(request).encode() + b"\n") == request


def test_a_client_that_trickles_its_request_is_cut_off():
    server, client = socket.socketpair()
    with server, client:
        client.sendall(b'{"op": ')  # and nothing more
        with pytest.raises(TimeoutError):
            read_request_line(server, 0.3)


def test_a_request_line_over_the_limit_is_not_read_to_its_end():
    server, client = socket.socketpair()
    with server, client:
        sender = threading.Thread(target=lambda: _send_quietly(client, b"x" * (MAX_REQUEST_BYTES * 2)), daemon=True)
        sender.start()
        line = read_request_line(server, 30)
        assert MAX_REQUEST_BYTES < len(line) <= MAX_REQUEST_BYTES + (1 << 16)
        with pytest.raises(BadRequest, match="over"):
            parse_request(line)


def _send_quietly(connection: socket.socket, data: bytes) -> None:
    try:
        connection.sendall(data)
    except OSError:
        pass  # the reader closed


def test_heartbeats_before_the_reply_are_skipped():
    server, client = socket.socketpair()
    with server, client:
        server.sendall(HEARTBEAT * 3)
        server.sendall(HEARTBEAT + b'{"ok": true}\n')
        assert read_reply_line(client) == b'{"ok": true}\n'


def test_a_reply_over_the_limit_is_a_lost_service():
    server, client = socket.socketpair()
    with server, client:
        threading.Thread(target=lambda: _send_quietly(server, b"x" * 300_000), daemon=True).start()
        with pytest.raises(ServiceLost, match="over 100,000 bytes"):
            read_reply_line(client, max_bytes=100_000)


@contextmanager
def fake_service(index_dir: Path, answer: Callable[[socket.socket], None]) -> Iterator[None]:
    """A listener on the index's service socket that treats each connection with ``answer``."""
    folder = service_client.service_dir(index_dir)
    folder.mkdir(parents=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(folder / service_client.SOCKET_NAME))
    listener.listen()
    stop = threading.Event()
    connections: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            connections.append(connection)
            threading.Thread(target=answer, args=(connection,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield
    finally:
        stop.set()
        listener.close()
        for connection in connections:
            connection.close()


def test_a_service_that_accepts_and_never_answers_is_silent(tmp_path: Path):
    with fake_service(tmp_path, lambda connection: None):
        with pytest.raises(ServiceSilent, match="sent nothing for 0.5 s"):
            service_client.request(tmp_path, "ping", timeout=0.5)


def test_a_long_search_that_sends_heartbeats_gets_its_answer(tmp_path: Path):
    def slow_but_alive(connection: socket.socket) -> None:
        read_request_line(connection, 5)
        for _ in range(8):  # longer in all than the client's silence limit, never silent for that long
            threading.Event().wait(0.1)
            connection.sendall(HEARTBEAT)
        connection.sendall(b'{"ok": true, "out": {"results": []}}\n')

    with fake_service(tmp_path, slow_but_alive):
        assert service_client.request(tmp_path, "search", timeout=0.5) == {"ok": True, "out": {"results": []}}


def test_a_reply_that_is_not_an_object_is_a_lost_service(tmp_path: Path):
    def garbled(connection: socket.socket) -> None:
        read_request_line(connection, 5)
        connection.sendall(b"[1]\n")

    with fake_service(tmp_path, garbled):
        with pytest.raises(ServiceLost, match="not a JSON object"):
            service_client.request(tmp_path, "ping")


def test_a_hung_service_is_not_waited_for_nor_replaced(tmp_path: Path):
    settings = service_client.resolve_service_settings(None)
    with fake_service(tmp_path, lambda connection: None):
        with pytest.raises(ServiceSilent):  # after its ping's few seconds, not the service_start_s a start gets
            service_client.ensure_service(tmp_path, tmp_path, settings)
    assert not (service_client.service_dir(tmp_path) / service_client.LOG_NAME).exists()  # none was started
