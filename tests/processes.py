"""Servers the tests and benchmarks start: a free loopback port, waiting for them, stopping them.

Search services (``python -m grepgraph.daemon``) start detached (their own session, no parent to end with), so
they are found by their command line: :func:`search_services` lists those of the indexes under a directory.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path


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


def answers_health(url: str, server_thread: threading.Thread) -> bool:
    """Whether the server at ``url``, run by ``server_thread`` in this process, answers ``/health`` (a poll)."""
    import httpx

    assert server_thread.is_alive(), f"the server of {url} stopped"
    with suppress(httpx.TransportError):
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    return False


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


def search_services(under: Path) -> dict[int, Path]:
    """Running search services whose index directory lies under ``under``: pid -> index directory (Linux)."""
    under = under.resolve()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = [os.fsdecode(part) for part in (entry / "cmdline").read_bytes().split(b"\0")]
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if "grepgraph.daemon" not in argv or "--index-dir" not in argv[:-1]:
            continue
        index_dir = Path(argv[argv.index("--index-dir") + 1])
        if index_dir.is_relative_to(under):
            found[int(entry.name)] = index_dir
    return found


def stop_search_services(under: Path, timeout_s: float = 30.0) -> dict[int, Path]:
    """Stop every search service of an index under ``under`` (asked first, killed if it stays); what ran."""
    from grepgraph import service_client
    from tests.waiting import wait_until

    running = search_services(under)
    for index_dir in set(running.values()):
        with suppress(OSError, ValueError):  # a service that can't be asked is killed below
            service_client.stop_service(index_dir, timeout_s)
    with suppress(AssertionError):
        wait_until(lambda: not search_services(under), timeout=timeout_s, interval=0.1)
    for pid in search_services(under):
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return running
