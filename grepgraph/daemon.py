"""The resident search service of one repository: a warm graph and searcher behind a Unix socket.

``grepgraph search`` starts it on demand (:mod:`grepgraph.service_client`), ``grepgraph daemon
start|stop|status`` manages it and ``grepgraph watch`` runs it in the foreground. It answers
searches with the same graph, settings and result schema as an in-process search, follows the
repository's files and re-indexes what changes (:mod:`grepgraph.watch`), and exits after
``service_idle_s`` without a request.

Start-up order matters for races: the service takes its lock first (a second service started at
the same moment exits at once), then removes a stale socket, loads the graph and the index, and
only then binds the socket: a socket that answers is a warm service.
"""

from __future__ import annotations

import argparse
import faulthandler
import fcntl
import json
import logging
import os
import signal
import socket
import socketserver
import struct
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import IO, Any

from grepgraph.logs import configure_logging
from grepgraph.retrievers.core.memory import limit_malloc_arenas
from grepgraph.retrievers.core.service_settings import ServiceSettings, resolve_service_settings
from grepgraph.retrievers.core.settings import CONFIG_ENV, env_name, environment, unset_variables
from grepgraph.retrievers.store.trust import own_index_dir
from grepgraph.service_client import (
    HEARTBEAT,
    HEARTBEAT_S,
    LOCK_NAME,
    MAX_REQUEST_BYTES,
    SOCKET_NAME,
    ServiceLost,
    ServiceUnavailable,
    code_version,
    request,
    service_dir,
    socket_address,
)

log = logging.getLogger("grepgraph.daemon")

# How often the idle timer looks at the clock.
IDLE_CHECK_S = 1.0
# A newer service waits this long for an older one (told to stop) to release the lock.
TAKEOVER_WAIT_S = 30.0
WARM_UP_QUERY = "warm up the search service"
# A client sends its request line at once: one that has not within this long (or stops reading the reply
# for this long) is dropped, so it can't hold a thread.
CLIENT_IO_S = 10.0
# Fields of a request and the types they must have.
REQUEST_FIELDS = {"op": str, "version": str, "input": dict, "context": dict, "env": dict}


class BadRequest(ValueError):
    """A request line the service can't read: too long, not JSON, not an object, or a field of the wrong type."""


def read_request_line(connection: socket.socket, within_s: float) -> bytes:
    """The request line (more than :data:`MAX_REQUEST_BYTES` when it is too long); ``TimeoutError`` past ``within_s``.

    The whole line within ``within_s``, not each read: a client trickling a byte at a time gets no longer.
    """
    deadline = time.monotonic() + within_s
    data = bytearray()
    while b"\n" not in data and len(data) <= MAX_REQUEST_BYTES:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no request line in time")
        connection.settimeout(left)
        part = connection.recv(1 << 16)
        if not part:
            break
        data += part
    connection.settimeout(CLIENT_IO_S)
    return bytes(data[: data.index(b"\n") + 1] if b"\n" in data else data)


def parse_request(line: bytes) -> dict:
    """One request line (at most :data:`MAX_REQUEST_BYTES`) as the request it holds; raises :class:`BadRequest`."""
    if len(line) > MAX_REQUEST_BYTES:
        raise BadRequest(f"the request is over {MAX_REQUEST_BYTES:,} bytes")
    try:
        payload = json.loads(line)
    except (ValueError, RecursionError) as error:  # RecursionError: thousands of nested brackets
        raise BadRequest(f"not a JSON request: {str(error)[:200]}") from None
    if not isinstance(payload, dict):
        raise BadRequest(f"the request must be a JSON object, got {type(payload).__name__}")
    for name, kind in REQUEST_FIELDS.items():
        if payload.get(name) is not None and not isinstance(payload[name], kind):
            raise BadRequest(f"the request's {name!r} must be a {kind.__name__}, got {type(payload[name]).__name__}")
    env = payload.get("env") or {}
    if not all(isinstance(value, str) for value in env.values()):
        raise BadRequest("the request's 'env' must map names to strings")
    if payload.get("op") == "search" and not isinstance(payload.get("input"), dict):
        raise BadRequest("a search request needs its 'input' object")
    return payload


def acquire_lock(index_dir: Path, wait_s: float) -> IO[bytes] | None:
    """The service lock, held for the process's life (``None``: another live service of ours holds it).

    A holder of another version was told to stop by the client that started us: wait for it to go.
    A holder of our version (a client racing ours started it) serves; this process is not needed.
    """
    folder = service_dir(own_index_dir(index_dir))
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    handle = open(folder / LOCK_NAME, "ab")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError:
            if time.monotonic() >= deadline or _ours_answers(index_dir):
                handle.close()
                return None
            time.sleep(0.2)


def _ours_answers(index_dir: Path) -> bool:
    try:
        return request(index_dir, "ping").get("version") == code_version()
    except (ServiceUnavailable, ServiceLost, ValueError):
        return False


class SearchService:
    """Answers requests for one index; shared by the server's threads."""

    def __init__(self, repo: Path, index_dir: Path, settings: ServiceSettings, foreground: bool) -> None:
        """Load the graph (the heavy imports happen here) and note the settings this process runs with."""
        from grepgraph.graphs.context import Context

        self.repo, self.index_dir, self.settings = repo, index_dir, settings
        self.version = code_version()
        self.started_at = time.time()
        self.foreground = foreground
        self.searches = 0
        self.last_request = time.monotonic()
        self.active = 0
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        # Run settings from a client's environment apply to that client's searches only, as they would
        # in-process; the settings file a client names must be ours. Other variables (index settings, the
        # embedding cache) don't change a search: the watcher re-indexes with those it was started with.
        self.context_fields = list(Context.__dataclass_fields__)
        unset_variables(self.context_fields)
        self.config = environment().get(CONFIG_ENV)
        self.watcher: Any = None
        self._pending: tuple[Any, int] = (None, 0)

    # ---------------------------------------------------------------- start-up
    def warm_up(self) -> None:
        """Open the index and run one search, so the first client's search finds everything loaded."""
        from grepgraph.graphs.code_search import graph

        try:
            graph.invoke({"query": WARM_UP_QUERY, "limit": 1},
                         context={"repo": str(self.repo), "index_dir": str(self.index_dir), "llm_enabled": False})
        except Exception as error:  # no index yet (``grepgraph watch`` builds it): searches will say so
            log.info("warm-up search: %s", error)

    def make_watcher(self) -> None:
        """The watcher (not started yet); searches read through its index, so they share its Chroma client."""
        from grepgraph.graphs.resources import share_index
        from grepgraph.watch import watched_repository

        self.watcher = watched_repository(self.repo, self.index_dir, self.settings.watch_debounce_ms)
        share_index(self.watcher.index)

    def start_watching(self) -> None:
        """Follow the repository's files and re-index what changes."""
        if self.watcher is None:
            self.make_watcher()
        self.watcher.start()

    # ---------------------------------------------------------------- requests
    def handle(self, payload: dict) -> dict:
        """One request's reply."""
        op = payload.get("op")
        if op == "stop":
            self.stopping.set()
            return {"ok": True}
        if op == "status":  # any version may ask (status, daemon status)
            return {"ok": True, "version": self.version, "service": self.describe()}
        if payload.get("version") != self.version:
            # A client of other code wants to search: step aside so it starts a service of its own version,
            # unless a user runs this one in the foreground (grepgraph watch): that one stays.
            if not self.foreground:
                self.stopping.set()
            return {"error": "version", "version": self.version, "stays": self.foreground,
                    "detail": "the service runs another version of grepgraph"}
        if op == "ping":
            return {"ok": True, "version": self.version}
        if op == "catch_up":  # an index run left vectors (``index --vectors-later``): embed them
            if self.watcher is None:
                return {"error": "not watching", "detail": "the service does not watch this repository"}
            self.watcher.catch_up()
            return {"ok": True}
        if op == "search":  # only searches keep the service from exiting when idle (not status polls)
            self.begin()
            try:
                return self.search(payload)
            finally:
                self.end()
        return {"error": "usage", "kind": "user", "detail": f"unknown request {op!r}"}

    def describe(self) -> dict:
        """What ``grepgraph status`` shows about this service."""
        watch = self.watcher.state.to_dict() if self.watcher else {"watching": False}
        return {"pid": os.getpid(), "version": self.version, "started_at": self.started_at,
                "searches": self.searches, "idle_s": round(time.monotonic() - self.last_request, 1),
                "idle_exit_s": None if self.foreground else self.settings.service_idle_s, **watch}

    def search(self, payload: dict) -> dict:
        """Run the graph for a client, with the client's run settings."""
        from grepgraph.graphs.code_search import graph
        from grepgraph.graphs.nodes import InvalidSearchInput
        from grepgraph.retrievers.core.errors import IndexError_

        client = payload.get("env") or {}
        if client.get(CONFIG_ENV) != self.config:
            return {"error": "settings", "detail": f"the search service was started with another {CONFIG_ENV}"}
        context = {name: client[env_name(name)] for name in self.context_fields if env_name(name) in client}
        context.update(payload.get("context") or {})
        try:
            out = graph.invoke(payload["input"], context=context)
        except (InvalidSearchInput, IndexError_, ValueError) as error:
            return {"error": "refused", "kind": "user", "detail": str(error)}
        except Exception as error:
            log.error("search failed: %s", traceback.format_exc())
            return {"error": "failed", "kind": "internal", "detail": f"{error.__class__.__name__}: {error}"}
        self.searches += 1
        if payload["input"].get("mode", "auto") == "auto":
            out = {**out, "vectors_pending": self.pending_vectors()}
        return {"ok": True, "out": out}

    def pending_vectors(self) -> int:
        """Vectors not embedded yet (counted again only when the index or its vectors changed)."""
        from grepgraph.retrievers.store.index import CodeIndex, closing_connection

        from .status import pending_vectors

        index = CodeIndex(self.repo, self.index_dir)
        with closing_connection(index) as connection:
            stamp = tuple(connection.execute(
                "SELECT value FROM meta WHERE key IN ('bm25_generation', 'vectors_version') ORDER BY key"))
        if self._pending[0] != stamp:
            self._pending = (stamp, pending_vectors(index))
        return self._pending[1]

    def begin(self) -> None:  # noqa: D102
        with self._lock:
            self.active += 1
            self.last_request = time.monotonic()

    def end(self) -> None:  # noqa: D102
        with self._lock:
            self.active -= 1
            self.last_request = time.monotonic()

    def idle_for(self) -> float:
        """Seconds since the last request ended (0 while one runs)."""
        with self._lock:
            return 0.0 if self.active else time.monotonic() - self.last_request


class _Handler(socketserver.StreamRequestHandler):
    server: _Server
    timeout = CLIENT_IO_S  # each write of the reply (a client that stopped reading)
    wbufsize = 0  # unbuffered: a heartbeat reaches the client when written

    def handle(self) -> None:
        if not self.server.same_user(self.request):
            return
        try:
            line = read_request_line(self.connection, CLIENT_IO_S)
        except OSError:  # no full line within CLIENT_IO_S: a client that hung or never meant to ask
            return
        if not line:
            return
        service = self.server.service
        try:
            payload = parse_request(line)
        except BadRequest as error:
            reply = {"error": "usage", "kind": "user", "detail": str(error)}
        else:
            with _Heartbeat(self.wfile):
                reply = service.handle(payload)
        try:
            self.wfile.write(json.dumps(reply, default=str).encode() + b"\n")
        except OSError:  # the client left (it searches in its own process) or stopped reading
            pass
        if service.stopping.is_set():
            self.server.stop_soon()


class _Heartbeat:
    """A blank line to the client every :data:`HEARTBEAT_S` while its request runs.

    The client waits a few seconds for a byte, not for the whole search: silence means the service hangs (or a
    call holds the GIL), and the client then searches in its own process. A long search still gets its answer.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()
        self._thread.join()

    def _beat(self) -> None:
        while not self._done.wait(HEARTBEAT_S):
            try:
                self._stream.write(HEARTBEAT)
            except OSError:
                return


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, address: str, service: SearchService) -> None:
        self.service = service
        previous = os.umask(0o177)  # the socket is created owner-only, not chmod-ed after a window
        try:
            super().__init__(address, _Handler)
        finally:
            os.umask(previous)
        self._stopping = False

    @staticmethod
    def same_user(connection: socket.socket) -> bool:
        """Only the owner's processes may search (the directory's mode says so too; this is a second lock)."""
        if not hasattr(socket, "SO_PEERCRED"):
            return True
        credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _, uid, _ = struct.unpack("3i", credentials)
        return uid == os.getuid()

    def stop_soon(self) -> None:
        if not self._stopping:
            self._stopping = True
            threading.Thread(target=self.shutdown, daemon=True).start()


def _stop_when_idle(server: _Server, service: SearchService) -> None:
    idle_s = service.settings.service_idle_s
    while not service.stopping.wait(IDLE_CHECK_S):
        if service.idle_for() >= idle_s:
            log.info("idle for %.0f s: exiting", idle_s)
            service.stopping.set()
    server.stop_soon()


def serve(repo: Path, index_dir: Path, foreground: bool = False, watch: bool | None = None) -> int:
    """Run the service until stopped, idle or replaced; returns the exit status."""
    limit_malloc_arenas()
    folder = service_dir(index_dir)
    lock = acquire_lock(index_dir, TAKEOVER_WAIT_S)
    if lock is None:
        log.info("another search service holds %s", folder / LOCK_NAME)
        return 0
    settings = resolve_service_settings(repo)
    socket_file = folder / SOCKET_NAME
    socket_file.unlink(missing_ok=True)  # we hold the lock: any socket file left is stale
    service = SearchService(repo, index_dir, settings, foreground)
    watching = settings.watch if watch is None else watch
    if watching:
        service.make_watcher()  # before the warm-up search opens the searcher
    service.warm_up()
    if watching:
        service.start_watching()
    with socket_address(index_dir) as address:
        server = _Server(address, service)
    bound = socket_file.stat().st_ino
    if not foreground:
        threading.Thread(target=_stop_when_idle, args=(server, service), daemon=True).start()
    log.info("search service for %s ready (pid %d, version %s)", repo, os.getpid(), service.version)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        service.stopping.set()
        _remove_socket(socket_file, bound)
        server.server_close()
        if service.watcher:
            service.watcher.stop()
        lock.close()
    log.info("search service for %s stopped", repo)
    return 0


def _remove_socket(socket_file: Path, inode: int) -> None:
    """Remove our socket file (not one a newer service bound in its place)."""
    try:
        if socket_file.stat().st_ino == inode:
            socket_file.unlink()
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    """``python -m grepgraph.daemon --repo R --index-dir D``: run one repository's service."""
    parser = argparse.ArgumentParser(prog="grepgraph-daemon")
    parser.add_argument("--repo", required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--foreground", action="store_true", help="no idle exit")
    args = parser.parse_args(argv)
    configure_logging(1)  # stderr is the service's log file
    faulthandler.register(signal.SIGUSR1)  # kill -USR1 <pid>: every thread's stack into the log
    return serve(Path(args.repo).resolve(), Path(args.index_dir).resolve(), foreground=args.foreground)


if __name__ == "__main__":
    sys.exit(main())
