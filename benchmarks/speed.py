"""Indexing and search speed on a large corpus (default: the Python standard library).

    python benchmarks/speed.py                       # stdlib, fresh temp dir, Markdown table
    python benchmarks/speed.py --json --save speed.json
    python benchmarks/speed.py --index-dir /tmp/gg-speed              # a given dir is kept ...
    python benchmarks/speed.py --index-dir /tmp/gg-speed --skip-full  # ... to re-measure steps 2-4 on it
    python benchmarks/speed.py --no-embed       # lexical-only indexing (when embedding would take too long)

Steps, all on a *copy* of the corpus (the original is only read):

1. full index from scratch (in a child process, so its peak RSS is its own): wall and
   per-phase seconds, files, chunks, chunks/s, and when lexical search became usable
   (start-up + scan + parse + store+bm25, before the embedding phase);
2. re-index with nothing changed (target <= 5 s);
3. re-index after appending a new function to one file (target <= 2 s), then search for it;
4. query latency over a fixed list of realistic queries (questions, code names, issue
   texts with tracebacks): 5 warm-up queries, then every query 3 times. ``Searcher.search``
   with default settings (the query embedded beside the lexical stage) and with the query embedded in turn first,
   as searches did before 2026-11-26 (in turn on each query, the order turning every round); its dense part
   alone; then, in a loop of their own, ``Searcher.lexical_scores`` on the
   same tokens for both BM25 engines (``bm25s`` in the main index, ``rank_bm25`` in a
   second, lexical-only index of the same copy), so the engines compare like for like.

``--index-dir`` is the benchmark's own directory: ``corpus/`` (the copy), ``index/`` and
``index-rank_bm25/``. By default it is a fresh temporary directory, removed at the end
unless ``--keep``. The machine-wide embedding cache is pointed at a file in that directory
(unless it is switched off), so a "from scratch" index really embeds everything and the
user's cache is neither read nor filled. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.core.index_settings import IndexSettings
from grepgraph.retrievers.lexical.tokenize import tokenize_query
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

TARGET_NO_CHANGE_S = 5.0
TARGET_ONE_FILE_S = 2.0
WARMUP_QUERIES = 5
RUNS_PER_QUERY = 3
# Every query is timed embedding the query beside the lexical stage (the default, `Searcher.search`'s row) and in
# turn before it (how every search ran before 2026-11-26).
SETUPS = (True, False)


def setup_name(overlap: bool) -> str:
    """A timed set-up's key in the report."""
    return "search" if overlap else "search_inline"

COPY_IGNORED = ("site-packages", "__pycache__", "*.pyc")
# The file the one-file-changed step appends to, when the corpus has it (else the first non-test .py).
PROBE_FILE_PREFERENCES = ("json/decoder.py",)
PROGRESS_EVERY_S = 15.0
# The indexer's machine-wide embedding cache (retrievers/dense/cache.py); "off" disables it.
EMBEDDING_CACHE_ENV = "GREPGRAPH_EMBEDDING_CACHE"

# Realistic queries against the standard library, by kind. Issue texts name stdlib files the way
# a user's traceback does (absolute paths of *their* interpreter), so path mentions must match by suffix.
QUESTIONS = [
    "parse an email address header",
    "how does json decode a string",
    "split a URL into scheme, host and path",
    "read a CSV file with a header row into dictionaries",
    "compute the difference between two dates in days",
    "create a temporary directory that is removed automatically",
    "walk a directory tree recursively",
    "match a filename against a shell wildcard pattern",
    "compress a file with gzip",
    "run a subprocess and capture its output with a timeout",
    "parse command line arguments with subcommands",
    "submit callables to a thread pool and wait for the results",
    "escape special characters in HTML",
    "compute the SHA-256 hash of a file",
    "pretty print nested data structures",
    "deep copy an object that contains reference cycles",
    "merge several sorted iterables lazily",
    "read a config file with sections and options",
    "decode base64 data",
    "compare two sequences of lines and produce a unified diff",
    "log messages to a file that rotates when it gets too big",
    "cancel an asyncio task and wait for it to finish",
    "generate a secure random token for a password reset link",
    "parse an ISO 8601 timestamp with a timezone offset",
    "how does the import system find a module spec on sys.path",
    "detect the encoding declaration of a Python source file",
]
CODE_NAMES = [
    "HTTPConnection.request",
    "urlsplit",
    "JSONDecoder.raw_decode",
    "OrderedDict.move_to_end",
    "Path.glob",
    "Popen.communicate",
    "shutil.copytree",
    "functools.lru_cache",
    "ThreadPoolExecutor",
    "asyncio.gather",
    "ArgumentParser.add_subparsers",
    "RotatingFileHandler.doRollover",
    "email.utils.parseaddr",
    "datetime.fromisoformat",
    "TarFile.extractall",
    "ZipFile.writestr",
    "SequenceMatcher.get_matching_blocks",
    "heapq.nlargest",
    "textwrap.dedent",
    "inspect.signature",
    "ast.literal_eval",
    "dataclasses.asdict",
    "contextlib.ExitStack",
    "typing.get_type_hints",
]
ISSUES = [
    """json.loads raises JSONDecodeError on an empty HTTP response body instead of a clearer error

I fetch an API and call json.loads on the body. When the server returns 204 the body is empty:

Traceback (most recent call last):
  File "/home/me/app/client.py", line 42, in fetch
    return json.loads(body)
  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode
    obj, end = self.raw_decode(s, idx=_w(s, 0).end())
  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode
    raise JSONDecodeError("Expecting value", s, err.value) from None
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)

Could the message mention that the document is empty?""",
    """http.client RemoteDisconnected when the server closes a keep-alive connection

After a few minutes idle, the next request on a reused HTTPConnection fails:

Traceback (most recent call last):
  File "sync.py", line 88, in push
    resp = conn.getresponse()
  File "/usr/lib/python3.11/http/client.py", line 1375, in getresponse
    response.begin()
  File "/usr/lib/python3.11/http/client.py", line 318, in begin
    version, status, reason = self._read_status()
  File "/usr/lib/python3.11/http/client.py", line 287, in _read_status
    raise RemoteDisconnected("Remote end closed connection without"
http.client.RemoteDisconnected: Remote end closed connection without response

Should the client retry idempotent requests automatically, like urllib3 does?""",
    """urlopen with a timeout raises URLError wrapping socket.timeout, hard to tell apart from DNS errors

  File "/usr/lib/python3.11/urllib/request.py", line 216, in urlopen
    return opener.open(url, data, timeout)
  File "/usr/lib/python3.11/urllib/request.py", line 519, in open
    response = self._open(req, data)
  File "/usr/lib/python3.11/urllib/request.py", line 1351, in do_open
    raise URLError(err)
urllib.error.URLError: <urlopen error timed out>

I would expect TimeoutError to propagate, or at least the reason attribute to be the original exception.""",
    """RuntimeError: Event loop is closed printed at interpreter exit on Windows

Running a small aiohttp script with asyncio.run prints this after the program finishes:

Exception ignored in: <function _ProactorBasePipeTransport.__del__ at 0x000001>
Traceback (most recent call last):
  File "C:\\Python311\\Lib\\asyncio\\proactor_events.py", line 116, in __del__
    self.close()
  File "C:\\Python311\\Lib\\asyncio\\proactor_events.py", line 108, in close
    self._loop.call_soon(self._call_connection_lost, None)
  File "C:\\Python311\\Lib\\asyncio\\base_events.py", line 761, in call_soon
    self._check_closed()
  File "C:\\Python311\\Lib\\asyncio\\base_events.py", line 519, in _check_closed
    raise RuntimeError('Event loop is closed')
RuntimeError: Event loop is closed""",
    """shutil.copytree fails with FileExistsError even though the destination is empty

copytree(src, dst) raises when dst exists. I know about dirs_exist_ok=True but the error message
doesn't mention it:

  File "/usr/lib/python3.11/shutil.py", line 561, in copytree
    return _copytree(entries=entries, src=src, dst=dst, symlinks=symlinks,
  File "/usr/lib/python3.11/shutil.py", line 459, in _copytree
    os.makedirs(dst, exist_ok=dirs_exist_ok)
  File "/usr/lib/python3.11/os.py", line 225, in makedirs
    mkdir(name, mode)
FileExistsError: [Errno 17] File exists: 'backup'""",
    """csv reader: _csv.Error: field larger than field limit (131072) on a file exported from Excel

A cell contains a long JSON blob. Reading the file with csv.DictReader fails:

Traceback (most recent call last):
  File "load.py", line 12, in <module>
    for row in csv.DictReader(f):
  File "/usr/lib/python3.11/csv.py", line 110, in __next__
    self.fieldnames
  File "/usr/lib/python3.11/csv.py", line 97, in fieldnames
    self._fieldnames = next(self.reader)
_csv.Error: field larger than field limit (131072)

Is csv.field_size_limit the only way around this, and why is the default so small?""",
    """RotatingFileHandler.doRollover raises PermissionError on Windows when two processes log to the same file

--- Logging error ---
Traceback (most recent call last):
  File "C:\\Python311\\Lib\\logging\\handlers.py", line 74, in emit
    self.doRollover()
  File "C:\\Python311\\Lib\\logging\\handlers.py", line 179, in doRollover
    self.rotate(self.baseFilename, dfn)
  File "C:\\Python311\\Lib\\logging\\handlers.py", line 115, in rotate
    os.rename(source, dest)
PermissionError: [WinError 32] The process cannot access the file because it is being used by another process""",
    """multiprocessing Pool.map fails with "Can't pickle local object" for a lambda defined inside a function

  File "/usr/lib/python3.11/multiprocessing/pool.py", line 367, in map
    return self._map_async(func, iterable, mapstar, chunksize).get()
  File "/usr/lib/python3.11/multiprocessing/pool.py", line 774, in get
    raise self._value
  File "/usr/lib/python3.11/multiprocessing/pool.py", line 540, in _handle_tasks
    put(task)
  File "/usr/lib/python3.11/multiprocessing/connection.py", line 205, in send
    self._send_bytes(_ForkingPickler.dumps(obj))
  File "/usr/lib/python3.11/multiprocessing/reduction.py", line 51, in dumps
    cls(buf, protocol).dump(obj)
AttributeError: Can't pickle local object 'main.<locals>.<lambda>'

The error should suggest using a module-level function or functools.partial.""",
    """argparse treats a negative number argument as an option: "expected one argument"

parser.add_argument("--offset") then `prog --offset -5` gives

usage: prog [-h] [--offset OFFSET]
prog: error: argument --offset: expected one argument

  File "/usr/lib/python3.11/argparse.py", line 1902, in parse_known_args
    namespace, args = self._parse_known_args(args, namespace)
  File "/usr/lib/python3.11/argparse.py", line 2087, in _parse_known_args
    start_index = consume_optional(start_index)
  File "/usr/lib/python3.11/argparse.py", line 2027, in consume_optional
    arg_count = match_argument(action, selected_patterns)
  File "/usr/lib/python3.11/argparse.py", line 2187, in _match_argument
    raise ArgumentError(action, msg)

It works when the parser has no option that looks like a negative number.""",
    """email.headerregistry raises HeaderParseError for an address with an unquoted comma in the display name

msg = email.message_from_string(raw, policy=email.policy.default); msg["To"].addresses

  File "/usr/lib/python3.11/email/headerregistry.py", line 332, in parse
    address_list, value = parser.get_address_list(value)
  File "/usr/lib/python3.11/email/_header_value_parser.py", line 1985, in get_address_list
    token, value = get_address(value)
  File "/usr/lib/python3.11/email/_header_value_parser.py", line 1962, in get_address
    token, value = get_mailbox(value)
  File "/usr/lib/python3.11/email/_header_value_parser.py", line 1789, in get_mailbox
    token, value = get_name_addr(value)
email.errors.HeaderParseError: expected ':' but found '@example.com'""",
    """tarfile.extractall: DeprecationWarning about the filter argument, and how do I keep symlinks safe?

Python 3.11.4+ warns when calling TarFile.extractall without filter=. With filter="data" an archive
containing an absolute symlink fails:

  File "/usr/lib/python3.11/tarfile.py", line 2263, in extractall
    tarinfo = filter_function(member, path)
  File "/usr/lib/python3.11/tarfile.py", line 810, in data_filter
    new_attrs = _get_filtered_attrs(member, dest_path, True)
  File "/usr/lib/python3.11/tarfile.py", line 790, in _get_filtered_attrs
    raise AbsoluteLinkError(member)
tarfile.AbsoluteLinkError: 'lib/libfoo.so' is a symlink to an absolute path""",
]
QUERY_KINDS = {"question": QUESTIONS, "code name": CODE_NAMES, "issue text": ISSUES}


# ------------------------------------------------------------------------------------------ helpers
_START = time.perf_counter()


def log(message: str) -> None:
    """One progress line on stderr, stamped with seconds since the benchmark started."""
    print(f"[{time.perf_counter() - _START:7.1f}s] {message}", file=sys.stderr, flush=True)


def stdlib_dir() -> Path:
    """The standard library of this interpreter (the walker leaves its site-packages out)."""
    return Path(sysconfig.get_paths()["stdlib"])


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def latency_stats(samples_ms: list[float]) -> dict:
    """p50 / p95 / mean / max of a list of millisecond timings."""
    return {"n": len(samples_ms), "p50_ms": round(statistics.median(samples_ms), 2),
            "p95_ms": round(percentile(samples_ms, 95), 2), "mean_ms": round(statistics.fmean(samples_ms), 2),
            "max_ms": round(max(samples_ms), 2)}


def select_queries(count: int | None) -> list[tuple[str, str]]:
    """``(kind, query)`` pairs taken round-robin from the kinds, so any prefix is a mix."""
    pools = [[(kind, q) for q in queries] for kind, queries in QUERY_KINDS.items()]
    mixed = [pool[i] for i in range(max(map(len, pools))) for pool in pools if i < len(pool)]
    return mixed[:count] if count else mixed


def is_inside(path: Path, parent: Path) -> bool:
    """Whether ``path`` is ``parent`` or below it (both resolved)."""
    return path.resolve().is_relative_to(parent.resolve())


class Progress:
    """A throttled indexing progress callback: phase changes, then a line every few seconds with a rate."""

    def __init__(self, label: str, every: float = PROGRESS_EVERY_S) -> None:
        self.label, self.every = label, every
        self.phase, self.phase_started, self.last = "", 0.0, 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if phase != self.phase:
            self.phase, self.phase_started, self.last = phase, now, now
            log(f"[{self.label}] {phase}: {total} to do")
            return
        if now - self.last < self.every and done < total:
            return
        self.last = now
        rate = done / max(now - self.phase_started, 1e-9)
        left = f", ~{(total - done) / rate:.0f}s left" if rate and done < total else ""
        log(f"[{self.label}] {phase}: {done}/{total} ({rate:.0f}/s{left})")


# ------------------------------------------------------------------------------------------ indexing
def child_index(argv: list[str]) -> None:
    """Entry point of the indexing child process: one ``CodeIndex.update``, result as JSON to a file."""
    parser = argparse.ArgumentParser(prog="speed.py --child-index")
    parser.add_argument("repo", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--backend", default="bm25s")
    parser.add_argument("--no-embed", action="store_true")
    parser.add_argument("--label", default="index")
    parser.add_argument("--launched", type=float, required=True, help="time.time() when the parent started us")
    parser.add_argument("--log-origin", type=float, default=0.0, help="the parent's log clock at that moment")
    args = parser.parse_args(argv)
    global _START
    _START = time.perf_counter() - args.log_origin - (time.time() - args.launched)  # one clock in the log
    index = CodeIndex(args.repo, args.index_dir, settings=IndexSettings(bm25_backend=args.backend))
    startup = time.time() - args.launched
    summary = index.update(progress=Progress(args.label), embed=not args.no_embed)
    args.result.write_text(json.dumps({"startup_s": round(startup, 3), "summary": summary.to_dict()}))


def run_index(repo: Path, index_dir: Path, label: str, backend: str = "bm25s", embed: bool = True) -> dict:
    """Index ``repo`` in a child process; its summary, wall seconds and peak RSS."""
    result_file = index_dir.parent / f".{index_dir.name}-{label.replace(' ', '-')}.json"
    result_file.unlink(missing_ok=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--child-index", str(repo), str(index_dir),
               "--result", str(result_file), "--backend", backend, "--label", label, "--launched", str(time.time()),
               "--log-origin", str(time.perf_counter() - _START)]
    if not embed:
        command.append("--no-embed")
    log(f"[{label}] indexing {repo} -> {index_dir} ({backend}{'' if embed else ', no vectors'})")
    started = time.perf_counter()
    process = subprocess.Popen(command)
    # wait4 reports this child's own peak RSS (RUSAGE_CHILDREN would be the maximum over all children so far).
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"indexing child for {label!r} failed with exit code {process.returncode}")
    data = json.loads(result_file.read_text())
    result_file.unlink()
    summary = data["summary"]
    log(f"[{label}] done in {wall:.1f}s (update {summary['seconds']}s, phases {summary['phases']})")
    return {"step": label, "wall_s": round(wall, 3), "startup_s": data["startup_s"],
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), **summary}


def copy_corpus(source: Path, destination: Path) -> float:
    """Copy the corpus (without site-packages and caches); seconds taken."""
    started = time.perf_counter()
    log(f"copying {source} -> {destination}")
    shutil.copytree(source, destination, symlinks=True, ignore=shutil.ignore_patterns(*COPY_IGNORED))
    return round(time.perf_counter() - started, 3)


def probe_file(corpus: Path) -> Path:
    """A non-test Python file of the corpus to change in step 3."""
    for relative in PROBE_FILE_PREFERENCES:
        if (corpus / relative).is_file():
            return corpus / relative
    for path in sorted(corpus.rglob("*.py")):
        parts = path.relative_to(corpus).parts
        if not any(p in ("test", "tests") or p.startswith("test_") for p in parts):
            return path
    raise SystemExit(f"no Python file to change under {corpus}")


def append_probe(path: Path) -> str:
    """Append a new, uniquely named function to ``path``; its name."""
    name = f"grepgraph_speed_probe_{time.time_ns():x}"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f'\n\ndef {name}(value):\n    """Speed benchmark probe: return the value doubled."""\n'
                     "    return value * 2\n")
    return name


def indexed_repo(index_dir: Path) -> Path:
    """The repository an existing index was built from (its ``meta.repo``)."""
    connection = sqlite3.connect(f"file:{index_dir / 'index.sqlite'}?mode=ro", uri=True)
    try:
        row = connection.execute("SELECT value FROM meta WHERE key = 'repo'").fetchone()
    finally:
        connection.close()
    if not row:
        raise SystemExit(f"{index_dir} holds no committed index")
    return Path(row[0])


# ------------------------------------------------------------------------------------------ search
def time_ms(function, *args, **kwargs) -> tuple[float, object]:
    """Milliseconds one call took, and its result."""
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return (time.perf_counter() - started) * 1000, result


def measure_search(main: Searcher, rank: Searcher, queries: list[tuple[str, str]]) -> dict:
    """Warm up, then time every query ``RUNS_PER_QUERY`` times in each configuration."""
    for _, query in queries[:WARMUP_QUERIES]:
        main.search(query, 10)
        tokens = tokenize_query(query)
        main.lexical_scores(tokens)
        rank.lexical_scores(tokens)
    samples: dict[str, list[float]] = {"dense": [], "bm25s": [], "rank_bm25": [],
                                       **{setup_name(overlap): [] for overlap in SETUPS}}
    by_kind: dict[str, list[float]] = {kind: [] for kind in QUERY_KINDS}
    per_query: dict[str, list[float]] = {query: [] for _, query in queries}
    overlaps = []
    for round_number in range(RUNS_PER_QUERY):
        log(f"latency round {round_number + 1}/{RUNS_PER_QUERY} over {len(queries)} queries")
        # Each set-up in turn on the same query, so a noisy moment costs all alike; the order turns every round
        # (the first to run after the previous query pays for what that one left cold).
        turned = SETUPS[round_number % len(SETUPS):] + SETUPS[:round_number % len(SETUPS)]
        for kind, query in queries:
            for overlap in turned:
                main.embeds_alongside = overlap
                elapsed, _ = time_ms(main.search, query, 10)
                main.embeds_alongside = True
                samples[setup_name(overlap)].append(elapsed)
                if overlap:
                    by_kind[kind].append(elapsed)
                    per_query[query].append(elapsed)
            samples["dense"].append(time_ms(main.dense_scores, query[:2000])[0])
    # The BM25 engines apart from the searches: rank_bm25 scores every document in Python (100 ms to 1 s a
    # query), which would leave the next search's caches cold.
    for round_number in range(RUNS_PER_QUERY):
        for _, query in queries:
            tokens = tokenize_query(query)
            # Cold: a snapshot remembers the BM25 scores of its last few token lists only, and this query's
            # were last scored a whole round of queries ago.
            elapsed, (bm25s_top, _) = time_ms(main.lexical_scores, tokens)
            samples["bm25s"].append(elapsed)
            elapsed, (rank_top, _) = time_ms(rank.lexical_scores, tokens)
            samples["rank_bm25"].append(elapsed)
            if round_number == 0:
                first = [set(sorted(top, key=lambda c, t=top: -t[c])[:10]) for top in (bm25s_top, rank_top)]
                overlaps.append(len(first[0] & first[1]) / max(len(first[0]), 1))
    stats = {name: latency_stats(values) for name, values in samples.items()}
    slowest = sorted(per_query.items(), key=lambda item: -statistics.median(item[1]))[:3]
    return {
        **stats,
        "search_by_kind": {kind: latency_stats(values) for kind, values in by_kind.items() if values},
        "rank_bm25_over_bm25s": {q: round(stats["rank_bm25"][q] / max(stats["bm25s"][q], 1e-9), 1)
                                 for q in ("p50_ms", "p95_ms")},
        "alongside_over_inline": {q: round(stats["search"][q] / max(stats["search_inline"][q], 1e-9), 2)
                                  for q in ("p50_ms", "p95_ms")},
        "bm25_top10_overlap": round(statistics.fmean(overlaps), 3),
        "slowest_search_queries": [{"query": q.splitlines()[0][:80], "p50_ms": round(statistics.median(v), 1)}
                                   for q, v in slowest],
        "queries": len(queries), "runs_per_query": RUNS_PER_QUERY, "warmup": WARMUP_QUERIES,
    }


def open_searcher(index: CodeIndex) -> tuple[Searcher, float]:
    """A searcher on ``index`` and the seconds opening it took."""
    started = time.perf_counter()
    searcher = Searcher(index)
    return searcher, round(time.perf_counter() - started, 3)


def probe_rank(searcher: Searcher, name: str) -> tuple[int | None, float]:
    """Rank (1-based) of the probe function when searching its name, and the query's milliseconds."""
    elapsed, (hits, _) = time_ms(searcher.search, name, 10)
    rank = next((i + 1 for i, hit in enumerate(hits) if hit.symbol.rsplit(".", 1)[-1] == name), None)
    return rank, round(elapsed, 1)


# ------------------------------------------------------------------------------------------ report
def target_mark(seconds: float, target: float | None) -> str:
    """``<= 5 s: yes`` style verdict."""
    if target is None:
        return ""
    return f"≤ {target:g} s: {'yes' if seconds <= target else 'NO'}"


def print_tables(report: dict) -> None:
    """The report as Markdown tables."""
    machine = report["machine"]
    print(f"## grepgraph speed — {report['corpus']}")
    print()
    copied = "reused" if report["copy_seconds"] is None else f"{report['copy_seconds']} s to copy"
    print(f"Copy: `{report['copy']}` ({copied}). Python {machine['python']}, "
          f"{machine['cpus']} CPUs, load average {machine['loadavg_start']} at start, {machine['loadavg_end']} at end.")
    print()
    print("| step | wall s | update s | phases s | files | changed | chunks | chunks/s | vectors embedded "
          "| peak RSS MB | target (update s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in report["indexing"]:
        if row.get("not_run"):
            print(f"| {row['step']} | skipped (--skip-full) |  |  |  |  |  |  |  |  |  |")
            continue
        phases = ", ".join(f"{name} {value:g}" for name, value in row["phases"].items())
        verdict = target_mark(row["seconds"], row.get("target_s"))
        if row.get("rebuilt"):
            # An index written by another format or settings is rebuilt, whatever changed on disk.
            verdict = "REBUILT: the index format/settings changed, not comparable"
        rate = round(row["chunks_added"] / row["seconds"]) if row["seconds"] else ""
        print(f"| {row['step']} | {row['wall_s']:.1f} | {row['seconds']:.2f} | {phases} | {row['files']} "
              f"| {row['files_changed']} | {row['chunks']} | {rate} | {row['vectors_embedded']} "
              f"| {row['peak_rss_mb']:.0f} | {verdict} |")
    full = next((r for r in report["indexing"] if r["step"].startswith("full index") and not r.get("not_run")), None)
    if full:
        print()
        print(f"Lexical search usable after {full['lexical_ready_s']:.1f} s of the full index "
              f"(start-up {full['startup_s']:.1f} s + scan + parse + store+bm25)"
              + (f"; vectors complete at {full['wall_s']:.1f} s." if "embed" in full["phases"] else "."))
    vectors = report["vectors"]
    pending = sum(vectors["pending"].values())
    if not report["embed"] or pending:
        print()
        print(f"**Indexing steps ran {'without' if not report['embed'] else 'with'} the embedding phase; "
              f"{pending} of {vectors['chunks'] * len(vectors['views'])} vectors ({vectors['chunks']} chunks × "
              f"{'+'.join(vectors['views'])}) are missing, so search latency is measured on a partial vector "
              "collection.**")
    probe = report["probe"]
    print()
    print(f"One-file change: appended `{probe['name']}` to `{probe['file']}`; a fresh searcher opened in "
          f"{probe['open_s']} s and ranked it #{probe['rank']} in {probe['first_search_ms']} ms (cold first query).")
    search = report["search"]
    print()
    print(f"Query latency: {search['queries']} queries × {search['runs_per_query']} runs after "
          f"{search['warmup']} warm-up queries. Searchers opened in {report['open_s']['bm25s']} s (bm25s) and "
          f"{report['open_s']['rank_bm25']} s (rank_bm25).")
    print()
    print("| what is timed | n | p50 ms | p95 ms | mean ms | max ms |")
    print("|---|---|---|---|---|---|")
    rows = [("`Searcher.search` (default, learned blend: BM25 + vectors + symbols + mentions)", search["search"])]
    rows += [(f"  … {kind} queries", stats) for kind, stats in search["search_by_kind"].items()]
    if "search_inline" in search:
        rows.append(("`Searcher.search`, query embedded in turn (as before)", search["search_inline"]))
    rows += [("`dense_scores` alone (query embedding + Chroma, embedded views)", search["dense"]),
             ("`lexical_scores`, bm25s", search["bm25s"]),
             ("`lexical_scores`, rank_bm25 (same tokens)", search["rank_bm25"])]
    for name, stats in rows:
        print(f"| {name} | {stats['n']} | {stats['p50_ms']} | {stats['p95_ms']} | {stats['mean_ms']} "
              f"| {stats['max_ms']} |")
    ratio = search["rank_bm25_over_bm25s"]
    print(f"| rank_bm25 / bm25s | | {ratio['p50_ms']}× | {ratio['p95_ms']}× | | |")
    if "alongside_over_inline" in search:
        ratio = search["alongside_over_inline"]
        print(f"| default / query embedded in turn | | {ratio['p50_ms']}× | {ratio['p95_ms']}× | | |")
    print()
    print(f"BM25 engines' top-10 overlap (same tokens): {search['bm25_top10_overlap']:.0%}. Slowest searches: "
          + "; ".join(f"{q['query']!r} {q['p50_ms']} ms" for q in search["slowest_search_queries"]) + ".")


# ------------------------------------------------------------------------------------------ main
def run(args: argparse.Namespace) -> dict:
    """Steps 1-4; the report as a dict."""
    source = (args.corpus or stdlib_dir()).resolve()
    created = args.index_dir is None
    bench_dir = Path(tempfile.mkdtemp(prefix="grepgraph-speed-")) if created else args.index_dir.resolve()
    if is_inside(bench_dir, source) or is_inside(source, bench_dir):
        raise SystemExit(f"--index-dir {bench_dir} must be outside the corpus {source} (the corpus is never written)")
    main_dir, rank_dir = bench_dir / "index", bench_dir / "index-rank_bm25"
    if os.environ.get(EMBEDDING_CACHE_ENV, "").lower() not in ("off", "0", "false", "none"):
        os.environ[EMBEDDING_CACHE_ENV] = str(bench_dir / "embedding-cache.sqlite")  # inherited by the children
    embed = not args.no_embed
    suffix = "" if embed else " (no vectors)"
    report: dict = {"corpus": str(source), "bench_dir": str(bench_dir), "indexing": [], "embed": embed,
                    "embedding_cache": os.environ[EMBEDDING_CACHE_ENV], "machine": {
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "loadavg_start": " ".join(f"{x:.1f}" for x in os.getloadavg())}}
    try:
        if args.skip_full:
            copy = indexed_repo(main_dir)
            if not copy.is_dir() or not is_inside(copy, bench_dir):
                raise SystemExit(f"the index in {main_dir} was built from {copy}, not a copy inside {bench_dir}")
            report["copy_seconds"] = None
            report["indexing"].append({"step": "full index", "not_run": True})
        else:
            if bench_dir.exists() and any(bench_dir.iterdir()) and not created:
                raise SystemExit(f"--index-dir {bench_dir} is not empty; give a fresh one, or --skip-full to reuse it")
            copy = bench_dir / "corpus"
            report["copy_seconds"] = copy_corpus(source, copy)
            full = run_index(copy, main_dir, "full index" + suffix, embed=embed)
            before_vectors = sum(v for name, v in full["phases"].items() if name != "embed")
            full["lexical_ready_s"] = round(full["startup_s"] + before_vectors, 3)
            report["indexing"].append(full)
        report["copy"] = str(copy)

        report["indexing"].append({**run_index(copy, main_dir, "re-index, nothing changed" + suffix, embed=embed),
                                   "target_s": TARGET_NO_CHANGE_S})
        changed = probe_file(copy)
        name = append_probe(changed)
        report["indexing"].append({**run_index(copy, main_dir, "re-index, one file changed" + suffix, embed=embed),
                                   "target_s": TARGET_ONE_FILE_S})
        report["indexing"].append(run_index(copy, rank_dir, "rank_bm25 index, no vectors", backend="rank_bm25",
                                            embed=False))

        main_index = CodeIndex(copy, main_dir)
        status = main_index.status()
        report["vectors"] = {"chunks": status["chunks"], "views": status["views"],
                             "pending": status["vectors_pending"]}
        main, main_open = open_searcher(main_index)
        rank_index = CodeIndex(copy, rank_dir, settings=IndexSettings(bm25_backend="rank_bm25"))
        rank, rank_open = open_searcher(rank_index)
        report["open_s"] = {"bm25s": main_open, "rank_bm25": rank_open}
        position, first_ms = probe_rank(main, name)
        report["probe"] = {"name": name, "file": str(changed.relative_to(copy)), "rank": position,
                           "first_search_ms": first_ms, "open_s": main_open}
        log(f"probe {name}: rank {position}, first search {first_ms} ms")
        report["search"] = measure_search(main, rank, select_queries(args.queries))
        main.close()
        rank.close()
    finally:
        report["machine"]["loadavg_end"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
        if created and not args.keep:
            shutil.rmtree(bench_dir, ignore_errors=True)
        else:
            log(f"kept {bench_dir} (reuse with --index-dir {bench_dir} --skip-full)")
    return report


def main() -> None:  # noqa: D103
    if sys.argv[1:2] == ["--child-index"]:
        child_index(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="corpus to copy and index (default: this Python's stdlib)")
    parser.add_argument("--index-dir", type=Path,
                        help="benchmark directory for the copy and the indexes (default: a fresh temp dir)")
    parser.add_argument("--skip-full", action="store_true",
                        help="reuse the copy and index already in --index-dir; measure steps 2-4 only")
    parser.add_argument("--queries", type=int,
                        help=f"use the first N queries, a mix of kinds (default: all {len(select_queries(None))})")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--no-embed", action="store_true",
                        help="index without the embedding phase (lexical only; search uses whatever vectors exist)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of tables")
    parser.add_argument("--save", type=Path, help="also write the JSON report to this file")
    args = parser.parse_args()
    if args.skip_full and args.index_dir is None:
        parser.error("--skip-full needs the --index-dir of an earlier run")
    report = run(args)
    if args.save:
        args.save.write_text(json.dumps(report, indent=2))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_tables(report)


if __name__ == "__main__":
    main()
