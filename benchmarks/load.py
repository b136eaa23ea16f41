"""Load test of ``grepgraph serve`` from a second process: concurrent clients, latency, memory, hostile input.

    python benchmarks/load.py                          # the fixture repository, indexed in a temp dir; 60 s
    python benchmarks/load.py --seconds 10 --clients 8
    python benchmarks/load.py --repo PATH [--index-dir DIR]    # an already indexed repository
    python benchmarks/load.py --json > load.json          # or: --save load.json (Markdown on stdout)
    python benchmarks/load.py --seconds 60 --reindex-every 3   # while the fixture is re-indexed every 3 s

Steps:

1. the repository: ``--repo`` must already have an index (``grepgraph index PATH``); by default
   ``tests/fixtures/sample_repo`` is copied into a temporary directory and indexed there by
   ``grepgraph index`` (MiniLM vectors, embedded Chroma);
2. ``grepgraph serve`` starts in its own process group on a free loopback port, with the LLM
   switched off (``GREPGRAPH_LLM_ENABLED=false``; ``--llm`` keeps it), and is ready once ``/health``
   says so; its log goes to the temporary directory;
3. warm-up: every query once, one at a time (the single-client latency, and the model loaded);
4. load: ``--clients`` threads, each with its own keep-alive ``httpx`` connection, post
   ``/search/invoke`` for ``--seconds`` with a rotating set of realistic queries (questions, code
   names, graph questions, an issue report); the server's RSS (``VmRSS`` of ``/proc/<pid>/status``)
   is sampled every second; with ``--reindex-every S`` (fixture only) a loop meanwhile switches a few
   files of the repository between two versions (``tests/concurrency.py``) and runs
   ``grepgraph index`` (vectors included) in a third process, pausing ``S`` seconds between runs;
5. hostile pass: traversal, absolute and unknown repositories, an oversized body (declared and
   chunked), malformed JSON, bad fields, a client that sends its body one byte a second and one that
   never finishes its headers; each reports the status and how long the answer took, and a normal
   search is timed while the slow clients hold their connections.

Output: Markdown tables (or ``--json``). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.concurrency import write_variant  # noqa: E402
from tests.processes import free_port, stop_process_group, wait_until_answering  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "sample_repo"

DEFAULT_CLIENTS = 8
DEFAULT_SECONDS = 60.0
REQUEST_TIMEOUT_S = 60.0
STARTUP_TIMEOUT_S = 180.0
RSS_SAMPLE_S = 1.0
RESULT_LIMIT = 10
# Hostile pass: the body that goes over the server's 1 MB limit, and how long slow clients keep trickling.
OVERSIZED_BYTES = 1_200_000
SLOW_CLIENT_S = 20.0
SLOW_BYTE_INTERVAL_S = 1.0
# A 4xx counts as "quick" under this many milliseconds.
QUICK_MS = 1000.0
REINDEX_TIMEOUT_S = 300.0

# Realistic queries against the fixture repository (a small Python/Go/TypeScript "graph store"), by kind.
QUERIES: list[tuple[str, str]] = [
    ("question", "how are call edges inserted into the graph database"),
    ("question", "remove every edge recorded for a file that was deleted"),
    ("question", "rank symbol names against a keyword query with tf-idf"),
    ("question", "read the settings file and fill in defaults"),
    ("question", "split snake_case names into words when tokenizing"),
    ("question", "dispatch an HTTP request to its route handler or answer 404"),
    ("question", "parse a python file and collect the functions it calls and the modules it imports"),
    ("question", "answer the search API endpoint with JSON results"),
    ("code", "store_parse_result"),
    ("code", "GraphStore.callers_of"),
    ("code", "handleSearch"),
    ("code", "Router.handle"),
    ("code", "PythonParser.parse"),
    ("code", "load_config"),
    ("graph", "who calls delete_file"),
    ("graph", "what does store_parse_result call"),
    ("graph", "subclasses of BaseParser"),
    ("graph", "what imports graphstore.store"),
    ("graph", "where is parse_file defined"),
    ("issue", "store_parse_result fails when a parsed file has no calls\n\nTraceback (most recent call last):\n"
              '  File "graphstore/parser.py", line 80, in parse_file\n    store.store_parse_result(result)\n'
              '  File "graphstore/store.py", line 30, in store_parse_result\n'
              "    written = self._insert_edges(\"INSERT INTO calls VALUES (?, ?, ?, ?)\", calls)\n"
              "sqlite3.ProgrammingError: Incorrect number of bindings supplied.\n\n"
              "Parsing an empty module and storing the result should write zero edges, not raise."),
]


def log(message: str) -> None:
    print(f"[load] {message}", file=sys.stderr, flush=True)


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MB (``VmRSS``), or ``None`` once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; ``nan`` for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def grepgraph_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "grepgraph.cli", *args]


# --------------------------------------------------------------------------- repository and server
def prepare_repository(args: argparse.Namespace, workdir: Path) -> tuple[Path, Path | None]:
    """The repository to serve and its index dir (``None``: the default), indexing the fixture if needed."""
    if args.repo:
        repo = Path(args.repo).expanduser().resolve()
        index_dir = Path(args.index_dir).expanduser().resolve() if args.index_dir else None
        extra = ["--index-dir", str(index_dir)] if index_dir else []
        check = grepgraph_command("status", str(repo), "--json", *extra)
        done = subprocess.run(check, capture_output=True, text=True, cwd=workdir)
        if done.returncode != 0:
            sys.exit(f"load.py: {repo} has no usable index: {done.stderr.strip()} (run: grepgraph index {repo})")
        return repo, index_dir
    repo = workdir / "sample_repo"
    shutil.copytree(FIXTURE, repo)
    log(f"indexing a copy of the fixture repository in {repo}")
    started = time.perf_counter()
    done = subprocess.run(grepgraph_command("index", str(repo), "--quiet"), capture_output=True, text=True,
                          cwd=workdir, env={**os.environ, "GREPGRAPH_EMBEDDING_CACHE": "off"})
    if done.returncode != 0:
        sys.exit(f"load.py: indexing failed: {done.stderr.strip()}")
    log(f"indexed in {time.perf_counter() - started:.1f}s")
    return repo, None


@dataclass
class Server:
    """A ``grepgraph serve`` child process in its own process group."""

    process: subprocess.Popen
    url: str
    log_path: Path
    rss_idle_mb: float | None = None

    def stop(self) -> None:
        stop_process_group(self.process, on_kill=lambda: log("the server did not stop within 15 s of SIGTERM;"
                                                            " killing it"))


def start_server(repo: Path, index_dir: Path | None, workdir: Path, llm: bool) -> Server:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("GREPGRAPH_")}
    env["GREPGRAPH_EMBEDDING_CACHE"] = "off"
    if not llm:
        env["GREPGRAPH_LLM_ENABLED"] = "false"
    if index_dir:
        env["GREPGRAPH_INDEX_DIR"] = str(index_dir)
    log_path = workdir / "serve.log"
    with open(log_path, "w") as log_file:
        process = subprocess.Popen(
            grepgraph_command("serve", "--repo", str(repo), "--host", "127.0.0.1", "--port", str(port)),
            cwd=workdir, env=env, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = Server(process, f"http://127.0.0.1:{port}", log_path)
    problem = wait_until_answering(process, f"{server.url}/health", STARTUP_TIMEOUT_S,
                                   ready=lambda health: health.status_code == 200 and health.json().get("ready"))
    if problem:
        server.stop()
        sys.exit(f"load.py: grepgraph serve {problem}:\n{log_path.read_text()[-3000:]}")
    server.rss_idle_mb = rss_mb(process.pid)
    return server


# --------------------------------------------------------------------------- load
@dataclass
class Sample:
    kind: str
    started: float
    ms: float
    status: int  # 0: no HTTP answer (transport error or timeout)
    error: str = ""


class BackgroundLoop:
    """A ``run`` loop on a daemon thread until ``stop`` sets the ``_stop`` event the subclass declares."""

    _stop: threading.Event

    def run(self) -> None:
        raise NotImplementedError

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()


@dataclass
class RssSampler(BackgroundLoop):
    pid: int
    samples: list[float] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self._stop.is_set():
            value = rss_mb(self.pid)
            if value is not None:
                self.samples.append(value)
            self._stop.wait(RSS_SAMPLE_S)


@dataclass
class ReindexLoop(BackgroundLoop):
    """Switches the repository's files between two versions and re-indexes it (the CLI) until stopped."""

    repo: Path
    index_dir: Path | None
    pause_s: float
    server_pid: int
    runs: list[dict] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        variant = 0
        extra = ["--index-dir", str(self.index_dir)] if self.index_dir else []
        env = {**os.environ, "GREPGRAPH_EMBEDDING_CACHE": "off"}
        while not self._stop.wait(self.pause_s):
            variant = 1 - variant
            write_variant(self.repo, variant)
            started = time.perf_counter()
            done = subprocess.run(grepgraph_command("index", str(self.repo), "--quiet", "--wait", *extra),
                                  capture_output=True, text=True, env=env, timeout=REINDEX_TIMEOUT_S)
            self.runs.append({"seconds": round(time.perf_counter() - started, 2), "exit": done.returncode,
                              "error": done.stderr.strip()[-300:] if done.returncode else "",
                              "server_rss_mb": rss_mb(self.server_pid)})

    def summary(self) -> dict:
        seconds = [run["seconds"] for run in self.runs]
        return {"every_s": self.pause_s, "runs": len(self.runs),
                "failed": sum(1 for run in self.runs if run["exit"]),
                "p50_s": round(percentile(seconds, 50), 2) if seconds else None,
                "server_rss_after_mb": [round(run["server_rss_mb"] or 0.0) for run in self.runs],
                "first_errors": [run["error"] for run in self.runs if run["exit"]][:3]}


def search_once(client: httpx.Client, url: str, kind: str, query: str) -> Sample:
    started = time.perf_counter()
    try:
        response = client.post(f"{url}/search/invoke", json={"input": {"query": query, "limit": RESULT_LIMIT}})
        status, error = response.status_code, "" if response.status_code == 200 else response.text[:200]
        if status == 200 and not isinstance(response.json().get("output", {}).get("results"), list):
            error = "200 without results"
    except httpx.HTTPError as exc:
        status, error = 0, f"{type(exc).__name__}: {exc}"[:200]
    return Sample(kind, started, (time.perf_counter() - started) * 1000, status, error)


def warm_up(url: str, queries: list[tuple[str, str]]) -> list[Sample]:
    with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
        return [search_once(client, url, kind, query) for kind, query in queries]


def run_load(url: str, queries: list[tuple[str, str]], clients: int, seconds: float) -> tuple[list[Sample], float]:
    """``clients`` threads searching until ``seconds`` have passed; returns the samples and the wall time."""
    samples: list[Sample] = []
    lock = threading.Lock()
    begin = time.perf_counter()
    deadline = begin + seconds

    def client_loop(number: int) -> None:
        with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
            turn = number  # clients start at different queries and step through all of them
            while time.perf_counter() < deadline:
                kind, query = queries[turn % len(queries)]
                sample = search_once(client, url, kind, query)
                with lock:
                    samples.append(sample)
                turn += 1

    threads = [threading.Thread(target=client_loop, args=(n,), daemon=True) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return samples, time.perf_counter() - begin


def summarise(samples: list[Sample], wall_s: float) -> dict:
    latencies = [s.ms for s in samples]
    errors = [s for s in samples if s.status != 200 or s.error]
    by_kind = {}
    for kind in dict.fromkeys(s.kind for s in samples):
        values = [s.ms for s in samples if s.kind == kind]
        by_kind[kind] = {"requests": len(values), "p50_ms": round(percentile(values, 50), 1),
                         "p95_ms": round(percentile(values, 95), 1)}
    statuses: dict[str, int] = {}
    for sample in samples:
        statuses[str(sample.status)] = statuses.get(str(sample.status), 0) + 1
    return {
        "requests": len(samples),
        "wall_s": round(wall_s, 2),
        "throughput_rps": round(len(samples) / wall_s, 2) if wall_s else 0.0,
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
        "max_ms": round(max(latencies), 1) if latencies else float("nan"),
        "mean_ms": round(statistics.fmean(latencies), 1) if latencies else float("nan"),
        "errors": len(errors),
        "server_errors": sum(1 for sample in samples if sample.status >= 500),
        "statuses": statuses,
        "first_errors": sorted({e.error or str(e.status) for e in errors})[:5],
        "by_kind": by_kind,
    }


# --------------------------------------------------------------------------- hostile pass
def timed(call) -> tuple[int, float, str]:
    started = time.perf_counter()
    try:
        response = call()
        status, body = response.status_code, response.text
    except httpx.HTTPError as exc:
        status, body = 0, f"{type(exc).__name__}: {exc}"
    return status, (time.perf_counter() - started) * 1000, body


def hostile_requests(url: str, repo: Path) -> list[dict]:
    """Requests a server must refuse with a 4xx, quickly: ``[{case, expected, status, ms, detail}]``."""
    invoke = f"{url}/search/invoke"
    json_headers = {"content-type": "application/json"}
    oversized = json.dumps({"input": {"query": "x" * OVERSIZED_BYTES}}).encode()

    def chunked_oversized():
        for start in range(0, len(oversized), 65536):
            yield oversized[start : start + 65536]

    cases: list[tuple[str, str, object]] = [
        ("repo: path traversal `../sample_repo`", "422",
         lambda c: c.post(invoke, json={"input": {"query": "load_config", "repo": f"../{repo.name}"}})),
        ("repo: traversal via a served path `<repo>/../<repo>`", "422",
         lambda c: c.post(invoke, json={"input": {"query": "load_config", "repo": f"{repo}/../{repo.name}"}})),
        ("repo: absolute path `/etc`", "422",
         lambda c: c.post(invoke, json={"input": {"query": "load_config", "repo": "/etc"}})),
        ("repo: unknown name `nope`", "422",
         lambda c: c.post(invoke, json={"input": {"query": "load_config", "repo": "nope"}})),
        ("repo: NUL byte", "422",
         lambda c: c.post(invoke, json={"input": {"query": "load_config", "repo": "/tmp/\u0000x"}})),
        ("URL: playground `..%2f` traversal", "404",
         lambda c: c.get(f"{url}/search/playground/..%2f..%2f..%2f..%2fetc%2fpasswd")),
        (f"body: {len(oversized) / 1e6:.1f} MB with Content-Length", "413",
         lambda c: c.post(invoke, content=oversized, headers=json_headers)),
        (f"body: {len(oversized) / 1e6:.1f} MB chunked (no Content-Length)", "413",
         lambda c: c.post(invoke, content=chunked_oversized(), headers=json_headers)),
        ("body: malformed JSON", "4xx",
         lambda c: c.post(invoke, content=b'{"input": {"query": "load_config"', headers=json_headers)),
        ("body: not JSON at all", "4xx",
         lambda c: c.post(invoke, content=b"\xff\xfe garbage", headers=json_headers)),
        ("body: JSON array instead of object", "4xx",
         lambda c: c.post(invoke, content=b"[1, 2, 3]", headers=json_headers)),
        ("input: empty query", "422", lambda c: c.post(invoke, json={"input": {"query": "   "}})),
        ("input: limit 100000", "422", lambda c: c.post(invoke, json={"input": {"query": "x", "limit": 100000}})),
        ("input: unknown field", "422",
         lambda c: c.post(invoke, json={"input": {"query": "x", "index_dir": "/etc"}})),
        ("input: query is a number", "422", lambda c: c.post(invoke, json={"input": {"query": 42}})),
    ]
    rows = []
    with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
        for name, expected, call in cases:
            status, ms, body = timed(lambda call=call: call(client))
            leaked = "root:" in body  # /etc/passwd content
            rows.append({"case": name, "expected": expected, "status": status, "ms": round(ms, 1),
                         "ok": _status_ok(status, expected) and ms < QUICK_MS and not leaked,
                         "detail": body.replace("\n", " ")[:120]})
    # httpx refuses to send a broken Content-Length: a raw request does.
    status, ms, body = raw_request(url, b"POST /search/invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                                        b"\r\nContent-Length: abc\r\n\r\n{}")
    rows.append({"case": "header: invalid Content-Length `abc`", "expected": "400", "status": status,
                 "ms": round(ms, 1), "ok": status == 400 and ms < QUICK_MS, "detail": body[:120]})
    return rows


def raw_request(url: str, data: bytes) -> tuple[int, float, str]:
    """Send raw bytes, read until the server closes or 5 s pass: (status, ms, first line of the body or head)."""
    host, port = url.removeprefix("http://").split(":")
    started = time.perf_counter()
    answer = b""
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(data)
        with suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
                if b"\r\n\r\n" in answer:
                    break
    ms = (time.perf_counter() - started) * 1000
    head, _, rest = answer.partition(b"\r\n\r\n")
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    status = int(line.split()[1]) if line.startswith("HTTP/") and len(line.split()) > 1 else 0
    return status, ms, (rest or head).decode("latin-1", "replace").replace("\r\n", " ")


def _status_ok(status: int, expected: str) -> bool:
    return 400 <= status < 500 if expected == "4xx" else str(status) == expected


def _raw_answer(sock: socket.socket) -> tuple[str, bool]:
    """What the server sent on a raw connection so far: (status line or "", closed)."""
    data = b""
    closed = False
    while select.select([sock], [], [], 0)[0]:
        chunk = sock.recv(65536)
        if not chunk:
            closed = True
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode("latin-1"), closed


def slow_client(url: str, mode: str, seconds: float, interval: float) -> dict:
    """A client that trickles its request (``body`` or ``headers``) one piece per ``interval`` for ``seconds``.

    Returns what the server did: answered (status line and when), closed the connection (when),
    or nothing until the client gave up.
    """
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps({"input": {"query": "store_parse_result", "limit": 3}}).encode()
    head = (f"POST /search/invoke HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    if mode == "body":
        pieces = [bytes([b]) for b in body]
    else:  # a request whose headers never end: one more header line each interval
        first = f"POST /search/invoke HTTP/1.1\r\nHost: {host}:{port}\r\n".encode()
        pieces = [first] + [f"X-Slow-{n}: {n}\r\n".encode() for n in range(int(seconds / interval) + 2)]
    started = time.perf_counter()
    outcome, status_line = "no answer, connection still open", ""
    sent = 0
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        if mode == "body":
            sock.sendall(head)
        for piece in pieces:
            if time.perf_counter() - started > seconds:
                break
            try:
                sock.sendall(piece)
            except OSError as exc:
                outcome = f"send failed: {exc}"
                break
            sent += len(piece)
            time.sleep(interval)
            status_line, closed = _raw_answer(sock)
            if status_line or closed:
                outcome = f"answered {status_line}" if status_line else "connection closed by the server"
                break
    elapsed = (time.perf_counter() - started) * 1000
    status = int(status_line.split()[1]) if status_line.startswith("HTTP/") else 0
    return {"case": f"slow client: {'body one byte' if mode == 'body' else 'headers one line'} per "
                    f"{interval:g}s for up to {seconds:g}s",
            "expected": "408" if mode == "body" else "408 or close", "status": status, "ms": round(elapsed, 1),
            "ok": bool(status and 400 <= status < 500) or outcome.startswith("connection closed"),
            "detail": f"{outcome}; {sent} bytes sent"}


def hostile_slow(url: str, seconds: float) -> tuple[list[dict], dict]:
    """Both slow clients at once, and a normal search timed while they hold their connections."""
    results: dict[str, dict] = {}
    threads = [threading.Thread(target=lambda m=mode: results.__setitem__(m, slow_client(url, m, seconds,
                                                                                         SLOW_BYTE_INTERVAL_S)))
               for mode in ("body", "headers")]
    for thread in threads:
        thread.start()
    time.sleep(min(3.0, seconds / 2))
    with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
        during = search_once(client, url, "code", "store_parse_result")
    for thread in threads:
        thread.join()
    normal = {"case": "normal search while the slow clients are connected", "expected": "200",
              "status": during.status, "ms": round(during.ms, 1), "ok": during.status == 200 and not during.error,
              "detail": during.error[:120]}
    return [results["body"], results["headers"]], normal


# --------------------------------------------------------------------------- report
def markdown(report: dict) -> str:
    load, rss = report["load"], report["rss_mb"]
    lines = [
        f"### grepgraph serve under load: {report['clients']} clients, {report['seconds']:g} s "
        f"({report['repo_label']})",
        "",
        "| requests | throughput (req/s) | p50 ms | p95 ms | p99 ms | max ms | errors (non-200) "
        "| RSS start MB | RSS end MB | RSS max MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {load['requests']} | {load['throughput_rps']:.2f} | {load['p50_ms']:.0f} | {load['p95_ms']:.0f} "
        f"| {load['p99_ms']:.0f} | {load['max_ms']:.0f} | {load['errors']} | {rss['start']:.0f} | {rss['end']:.0f} "
        f"| {rss['max']:.0f} |",
        "",
        f"Server RSS idle after start-up: {rss['idle']:.0f} MB; after warm-up: {rss['start']:.0f} MB. "
        f"Warm-up (1 client, each query once): p50 {report['warmup']['p50_ms']:.0f} ms, "
        f"max {report['warmup']['max_ms']:.0f} ms. Statuses under load: {load['statuses']} "
        f"({load['server_errors']} 5xx).",
        "",
        "| query kind | requests | p50 ms | p95 ms |",
        "|---|---:|---:|---:|",
    ]
    for kind, values in load["by_kind"].items():
        lines.append(f"| {kind} | {values['requests']} | {values['p50_ms']:.0f} | {values['p95_ms']:.0f} |")
    reindex = report.get("reindex")
    if reindex:
        lines += ["", f"Re-index loop (a few files switched, then `grepgraph index`, a pause of "
                      f"{reindex['every_s']:g} s): {reindex['runs']} runs, {reindex['failed']} failed, "
                      f"p50 {reindex['p50_s']} s per run; server RSS after each run (MB): "
                      + ", ".join(str(value) for value in reindex["server_rss_after_mb"])]
    if load["first_errors"]:
        lines += ["", "Errors: " + "; ".join(load["first_errors"])]
    lines += ["", "#### Hostile requests", "", "| case | expected | status | ms | ok | detail |",
              "|---|---|---:|---:|---|---|"]
    for row in report["hostile"]:
        detail = row["detail"].replace("|", "\\|")
        lines.append(f"| {row['case']} | {row['expected']} | {row['status'] or '-'} | {row['ms']:.0f} "
                     f"| {'yes' if row['ok'] else '**no**'} | {detail} |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict:
    queries = QUERIES
    if args.queries:
        queries = [("file", line.strip()) for line in Path(args.queries).read_text().splitlines() if line.strip()]
    workdir = Path(tempfile.mkdtemp(prefix="grepgraph-load-"))
    server = None
    try:
        repo, index_dir = prepare_repository(args, workdir)
        log("starting grepgraph serve")
        server = start_server(repo, index_dir, workdir, args.llm)
        log(f"serving {repo} at {server.url} (pid {server.process.pid}, RSS {server.rss_idle_mb:.0f} MB); warm-up")
        warm = warm_up(server.url, queries)
        rss_start = rss_mb(server.process.pid)
        sampler = RssSampler(server.process.pid)
        sampler_thread = sampler.start()
        reindexer = ReindexLoop(repo, index_dir, args.reindex_every, server.process.pid) if args.reindex_every else None
        reindex_thread = reindexer.start() if reindexer else None
        log(f"load: {args.clients} clients for {args.seconds:g}s"
            + (f", re-indexing every {args.reindex_every:g}s" if reindexer else ""))
        samples, wall = run_load(server.url, queries, args.clients, args.seconds)
        sampler.stop()
        sampler_thread.join()
        if reindexer and reindex_thread:
            reindexer.stop()
            reindex_thread.join()
        rss_end = rss_mb(server.process.pid)
        log("hostile pass")
        hostile = hostile_requests(server.url, repo)
        slow_rows, during = hostile_slow(server.url, args.slow_seconds)
        hostile += slow_rows + [during]
        alive = server.process.poll() is None and httpx.get(f"{server.url}/health", timeout=10).status_code == 200
        return {
            "repo": str(repo),
            "repo_label": "fixture sample_repo, indexed in a temp dir" if not args.repo else repo.name,
            "clients": args.clients,
            "seconds": args.seconds,
            "queries": len(queries),
            "llm": args.llm,
            "cpus": os.cpu_count(),
            "warmup": summarise(warm, sum(s.ms for s in warm) / 1000),
            "load": summarise(samples, wall),
            "rss_mb": {"idle": round(server.rss_idle_mb or 0.0, 1), "start": round(rss_start or 0.0, 1),
                       "end": round(rss_end or 0.0, 1),
                       "max": round(max(sampler.samples + [rss_start or 0.0, rss_end or 0.0]), 1),
                       "samples": len(sampler.samples)},
            "hostile": hostile,
            "server_alive_after": alive,
            **({"reindex": reindexer.summary()} if reindexer else {}),
        }
    finally:
        if server is not None:
            server.stop()
        if args.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", help="an already indexed repository (default: a temp copy of the fixture)")
    parser.add_argument("--index-dir", help="its index, if not in REPO/.grepgraph")
    parser.add_argument("--clients", type=int, default=DEFAULT_CLIENTS, help="concurrent clients (threads)")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, help="length of the load phase")
    parser.add_argument("--slow-seconds", type=float, default=SLOW_CLIENT_S,
                        help="how long the slow clients keep trickling")
    parser.add_argument("--queries", help="a file of queries, one per line (default: the built-in set)")
    parser.add_argument("--llm", action="store_true", help="leave the server's LLM setting alone")
    parser.add_argument("--reindex-every", type=float, default=0.0, metavar="S",
                        help="meanwhile change a few files and re-index, pausing S seconds between runs "
                             "(the built-in fixture only)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (index, serve.log)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument("--save", type=Path, help="also write the JSON report to this file")
    args = parser.parse_args()
    if args.clients < 1 or args.seconds <= 0:
        parser.error("--clients must be >= 1 and --seconds > 0")
    if args.reindex_every and (args.repo or args.reindex_every < 0):
        parser.error("--reindex-every rewrites files of the built-in fixture: not with --repo, and S > 0")
    report = run(args)
    if args.save:
        args.save.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2) if args.json else markdown(report))


if __name__ == "__main__":
    main()
