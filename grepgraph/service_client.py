"""Talk to a repository's resident search service (``grepgraph.daemon``), starting it when needed.

This module is what a command-line search imports on its fast path, so it imports nothing heavy:
no LangGraph, Chroma, numpy or onnxruntime, only the standard library and the settings modules of
:mod:`retrievers.core`.

The service of an index lives in ``<index_dir>/service/`` (a directory only its owner can enter):
``service.sock`` (the Unix socket, mode 0600), ``service.lock`` (held by the live service for its
whole life, so a second one never starts) and ``service.log``. One request is one JSON line, one
reply is one JSON line, after a blank line every second while the request runs (a heartbeat): a client
that hears nothing for a few seconds takes the service for hung and searches in its own process. Every
request carries the client's version: a service from another version stops and is replaced. A socket
file nobody answers on (a service killed with ``kill -9``) is stale: the next service removes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from grepgraph.retrievers import __version__
from grepgraph.retrievers.core.index_settings import INDEX_DIRNAME
from grepgraph.retrievers.core.service_settings import ServiceSettings, resolve_service_settings
from grepgraph.retrievers.core.settings import environment
from grepgraph.retrievers.store.trust import cache_index_dir, index_location, own_index_dir, verdict

SERVICE_DIRNAME = "service"
SOCKET_NAME = "service.sock"
LOCK_NAME = "service.lock"
LOG_NAME = "service.log"
# Bumped when the request or reply shape changes (2: heartbeats before the reply).
PROTOCOL = 2
# AF_UNIX paths are limited to 108 bytes on Linux; longer ones are reached through /proc/self/fd.
MAX_SOCKET_PATH = 100
# How often a client polls for a service it started.
START_POLL_S = 0.05
# A quick question (ping, status, stop) gets this long; a search as long as it takes while the service's
# heartbeats come (every HEARTBEAT_S), and SEARCH_SILENCE_S without a byte ends it.
QUICK_TIMEOUT_S = 5.0
HEARTBEAT_S = 1.0
HEARTBEAT = b"\n"
SEARCH_SILENCE_S = 5.0
# The longest request line a service reads (a query is at most 100,000 characters) and reply a client reads.
MAX_REQUEST_BYTES = 4 << 20
MAX_REPLY_BYTES = 256 << 20
# The code a service runs: every module of these packages, sub-packages included, and the prompts (code_version).
PACKAGES = ("grepgraph", "grepgraph.graphs", "grepgraph.retrievers", "grepgraph.prompts")
CODE_SUFFIXES = (".py", ".md")


class ServiceUnavailable(Exception):
    """No service answers (none runs, the socket is stale, or this system can't host one)."""


class ServiceLost(Exception):
    """The service stopped answering in the middle of a request (it died or was killed)."""


class ServiceSilent(ServiceLost):
    """The service accepted the request and then sent nothing for the time allowed (it hangs)."""


class ServiceRefused(Exception):
    """The service answered with an error the user can act on (a bad query, no index)."""


@functools.cache
def code_version() -> str:
    """The version a service must match: the release, the protocol and the installed code's files.

    The files' sizes and modification times are part of it, so an upgraded (or, in a checkout, edited)
    grepgraph replaces a service still running the old code. Computed once: a process speaks for the
    code it loaded.
    """
    return f"{__version__}/p{PROTOCOL}/{code_fingerprint(package_directory(name) for name in PACKAGES)}"


def code_fingerprint(roots: Iterable[Path]) -> str:
    """A CRC of the path, size and modification time of every module and prompt under ``roots``, recursively.

    Sizes and times, not contents: about 120 stats, a few milliseconds of a search's fast path. A folder reached twice
    (installed, the sub-packages lie inside ``grepgraph/``) counts once.
    """
    files = set()
    for root in roots:
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = [name for name in subfolders if name != "__pycache__"]
            for name in names:
                if name.endswith(CODE_SUFFIXES):
                    with contextlib.suppress(OSError):
                        info = os.stat(os.path.join(folder, name))
                        files.add(f"{os.path.join(folder, name)}:{info.st_mtime_ns}:{info.st_size}")
    return f"{zlib.crc32(chr(0).join(sorted(files)).encode()):08x}"


def package_directory(name: str) -> Path:
    """Where a package's files are (installed or in a checkout), found without importing the package."""
    spec = importlib.util.find_spec(name)
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else Path(__file__).resolve().parent


def service_dir(index_dir: Path) -> Path:
    """Where an index's service keeps its socket, lock and log."""
    return index_dir / SERVICE_DIRNAME


def locate_index(start: Path, index_dir: str | Path | None = None) -> tuple[Path, Path]:
    """``(repository, index directory)`` for a search started in ``start``.

    With no ``index_dir``, the nearest directory from ``start`` upwards that holds an index wins, so
    a search from a subdirectory uses the enclosing repository's index instead of asking for a new one.
    """
    start = start.resolve()
    if index_dir:
        return start, Path(index_dir).expanduser().resolve()
    for candidate in (start, *start.parents):
        for index_dir in (candidate / INDEX_DIRNAME, cache_index_dir(candidate)):
            if (index_dir / "index.sqlite").is_file() and verdict(index_dir).trusted:
                return candidate, index_dir
    return start, index_location(start)


def client_environment() -> dict[str, str]:
    """The ``GREPGRAPH_*`` variables of this process (the service applies them to this client's searches)."""
    return dict(environment())


def cannot_host_reason(index_dir: Path) -> str:
    """Why no service can run for this index here (empty: one can)."""
    if os.name != "posix" or not hasattr(socket, "AF_UNIX"):
        return "this system has no Unix sockets"
    folder = service_dir(index_dir)
    if folder.is_dir():
        return "" if os.access(folder, os.W_OK | os.X_OK) else f"{folder} is not writable"
    return "" if os.access(index_dir, os.W_OK | os.X_OK) else f"{index_dir} is not writable"


@contextlib.contextmanager
def socket_address(index_dir: Path) -> Iterator[str]:
    """The socket's path, short enough for ``AF_UNIX`` (through ``/proc/self/fd`` when it is not)."""
    folder = service_dir(index_dir)
    path = str(folder / SOCKET_NAME)
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        yield path
        return
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{descriptor}/{SOCKET_NAME}"
    finally:
        os.close(descriptor)


def call(index_dir: Path, payload: dict, timeout: float | None = QUICK_TIMEOUT_S) -> dict:
    """Send one request and return the reply.

    Args:
        index_dir: The index whose service is asked.
        payload: The request.
        timeout: The longest wait for each byte (heartbeats count); ``None``: no limit.

    Raises:
        ServiceUnavailable: Nothing listens on the socket (no service, or a stale socket file).
        ServiceLost: The service closed the connection before replying, or sent a reply too large to read.
        ServiceSilent: It sent nothing for ``timeout`` seconds.
    """
    socket_file = service_dir(index_dir) / SOCKET_NAME
    try:
        owner = socket_file.stat().st_uid
    except OSError:
        raise ServiceUnavailable("no service is running") from None
    if owner != os.getuid():
        raise ServiceUnavailable(f"{socket_file} belongs to another user")
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(timeout)
    try:
        with socket_address(index_dir) as address:
            try:
                connection.connect(address)
            except (FileNotFoundError, ConnectionRefusedError) as error:
                raise ServiceUnavailable(f"no service answers ({error.strerror})") from None
        connection.sendall(json.dumps(payload).encode() + b"\n")
        reply = read_reply_line(connection)
    except TimeoutError:
        raise ServiceSilent(f"the search service sent nothing for {timeout:g} s") from None
    except (ConnectionResetError, BrokenPipeError) as error:
        raise ServiceLost(f"the search service stopped answering ({error.__class__.__name__})") from None
    finally:
        connection.close()
    if not reply:
        raise ServiceLost("the search service closed the connection without answering")
    try:
        answer = json.loads(reply)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ServiceLost("the search service's reply is not a JSON object")
    return answer


def read_reply_line(connection: socket.socket, max_bytes: int = MAX_REPLY_BYTES) -> bytes:
    """The reply line, after the heartbeats before it (empty: the service closed the connection first).

    Each read waits as long as the connection's timeout; a reply over ``max_bytes`` is :class:`ServiceLost`.
    """
    data = bytearray()
    while True:
        part = connection.recv(1 << 16)
        if not part:
            return bytes(data)
        if not data:
            part = part.lstrip(HEARTBEAT)  # heartbeats come before the reply only
        end = part.find(b"\n")
        if end >= 0:
            return bytes(data + part[: end + 1])
        data += part
        if len(data) > max_bytes:
            raise ServiceLost(f"the search service's reply is over {max_bytes:,} bytes")


def request(index_dir: Path, op: str, timeout: float | None = QUICK_TIMEOUT_S, **fields: Any) -> dict:
    """One request of kind ``op`` with this client's version."""
    return call(index_dir, {"op": op, "version": code_version(), **fields}, timeout)


def service_state(index_dir: Path) -> dict:
    """What the service of this index says about itself, without starting one (``{"running": False}``: none)."""
    try:
        reply = request(index_dir, "status")
    except (ServiceUnavailable, ServiceLost, ValueError):
        return {"running": False}
    return {"running": True, **reply.get("service", {})}


def stop_service(index_dir: Path, timeout_s: float = 30.0) -> bool:
    """Ask the service to stop and wait until it has (its lock is free); whether one was running."""
    try:
        call(index_dir, {"op": "stop"})
    except (ServiceUnavailable, ServiceLost):
        return False
    wait_until_gone(index_dir, timeout_s)
    return True


def wait_until_gone(index_dir: Path, timeout_s: float) -> bool:
    """Wait until no process holds the service lock (the old service has exited)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not lock_is_held(index_dir):
            return True
        time.sleep(START_POLL_S)
    return False


def lock_is_held(index_dir: Path) -> bool:
    """Whether a live service holds the lock of this index."""
    try:
        handle = open(service_dir(index_dir) / LOCK_NAME, "rb")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


def start_service(repo: Path, index_dir: Path) -> subprocess.Popen:
    """Start a detached service for this index (it exits at once if another one holds the lock)."""
    folder = service_dir(own_index_dir(index_dir))
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    log = os.open(folder / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        # cwd is the service's own directory: ``python -m`` puts the cwd first on sys.path, and a
        # repository's json.py or typing.py must not stand in for the standard library's.
        return subprocess.Popen(
            [sys.executable, "-m", "grepgraph.daemon", "--repo", str(repo), "--index-dir", str(index_dir)],
            cwd=folder, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    finally:
        os.close(log)


def ensure_service(repo: Path, index_dir: Path, settings: ServiceSettings) -> None:
    """Make sure a service of this client's version answers for the index, starting one if needed.

    Raises:
        ServiceUnavailable: None could be started (the reason says why).
        ServiceSilent: One runs and does not answer (it hangs).
    """
    try:
        reply = request(index_dir, "ping")
    except ServiceSilent:
        raise  # one runs and hangs: a second can't take its lock, and waiting for it would wait for nothing
    except (ServiceUnavailable, ServiceLost):
        reply = None
    if reply is not None and reply.get("version") == code_version() and not reply.get("error"):
        return
    if reply is not None and reply.get("stays"):
        raise ServiceUnavailable("a `grepgraph watch` running other grepgraph code serves this index (restart it)")
    if reply is not None:  # another version: it stops itself on seeing ours
        wait_until_gone(index_dir, settings.service_start_s)
    reason = cannot_host_reason(index_dir)
    if reason:
        raise ServiceUnavailable(reason)
    process = start_service(repo, index_dir)
    deadline = time.monotonic() + settings.service_start_s
    while time.monotonic() < deadline:
        with contextlib.suppress(ServiceUnavailable, ServiceLost, ValueError):
            reply = request(index_dir, "ping")
            if reply.get("version") == code_version():
                return
            if reply.get("error") == "version":
                raise ServiceUnavailable("the search service started with other code than this command's "
                                         "(grepgraph changed meanwhile)")
        if process.poll() not in (None, 0):  # 0: another client's service won the race; wait for it
            raise ServiceUnavailable(f"the search service failed to start (see {service_dir(index_dir) / LOG_NAME})")
        time.sleep(START_POLL_S)
    raise ServiceUnavailable(f"the search service did not answer within {settings.service_start_s:g} s")


def search(repo: Path, index_dir: Path, graph_input: dict, context: dict,
           settings: ServiceSettings | None = None) -> dict:
    """Run a search in the service (started if needed) and return the graph's output.

    Raises:
        ServiceUnavailable: No service could answer; search in-process instead.
        ServiceLost: It died or went silent (:class:`ServiceSilent`) during the search; search in-process instead.
        ServiceRefused: The query or the index is wrong (a one-line message for the user).
    """
    settings = settings or resolve_service_settings(repo)
    for _ in range(2):
        ensure_service(repo, index_dir, settings)
        reply = request(index_dir, "search", timeout=SEARCH_SILENCE_S, input=graph_input, context=context,
                        env=client_environment())
        if reply.get("error") == "version":
            continue  # replaced between the ping and the search: start ours
        if reply.get("error") == "settings":
            raise ServiceUnavailable(reply["detail"])
        if reply.get("error"):
            raise (ServiceRefused if reply.get("kind") == "user" else ServiceUnavailable)(reply["detail"])
        return reply["out"]
    raise ServiceUnavailable("the search service kept changing version")
