"""Servers the tests and benchmarks start on loopback: a free port, waiting for them, stopping them."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from contextlib import suppress


def free_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` that nothing listens on right now (bound once to pick it, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def wait_until_answering(process: subprocess.Popen, url: str, timeout_s: float, interval_s: float = 0.2,
                         ready: Callable[..., bool] = lambda response: response.status_code == 200) -> str:
    """Poll ``url`` until ``ready(response)``: ``""`` then, else why not ("exited with 1", "did not answer ...")."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            return f"exited with {process.returncode}"
        with suppress(httpx.TransportError):
            if ready(httpx.get(url, timeout=2)):
                return ""
        if time.monotonic() > deadline:
            return f"did not answer {url} within {timeout_s:g} s"
        time.sleep(interval_s)


def stop_process_group(process: subprocess.Popen, on_kill: Callable[[], None] | None = None) -> None:
    """SIGTERM to a server's own process group (``start_new_session=True``), SIGKILL if it lingers 15 s."""
    if process.poll() is not None:
        return
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        if on_kill:
            on_kill()
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)
