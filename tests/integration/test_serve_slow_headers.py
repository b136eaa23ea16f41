import socket
import threading
import time

import pytest
import uvicorn
from fastapi import FastAPI

from grepgraph.http_guard import header_deadline_protocol
from tests.processes import free_port
from tests.waiting import wait_until


@pytest.fixture()
def server():
    app = FastAPI()

    @app.get("/ok")
    def ok() -> dict:
        return {"ok": True}

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            http=header_deadline_protocol(1.0))
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    wait_until(lambda: instance.started, what="uvicorn's start")
    yield port
    instance.should_exit = True
    thread.join(5)


def test_a_client_that_never_finishes_its_headers_gets_408(server):
    with socket.create_connection(("127.0.0.1", server), timeout=5) as client:
        client.sendall(b"GET /ok HTTP/1.1\r\nHost: x\r\n")  # no blank line: the headers never end
        reply = client.recv(1024)  # from the server's 1 s header deadline, well before this socket's 5 s timeout
        assert reply.startswith(b"HTTP/1.1 408")


def test_a_normal_request_is_not_cut_off(server):
    with socket.create_connection(("127.0.0.1", server), timeout=5) as client:
        client.sendall(b"GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        reply = b""
        while chunk := client.recv(1024):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 200") and b'"ok":true' in reply
    time.sleep(1.5)  # not a wait but the case: outlive the header deadline, nothing fires on a finished connection
