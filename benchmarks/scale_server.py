"""Indexing and search against a Chroma *server* as the corpus grows (1x, 3x the standard library).

    python benchmarks/scale_server.py                          # /tmp/gg-scale, scales 1,3, Markdown table
    python benchmarks/scale_server.py --scales 1 --json
    python benchmarks/scale_server.py --work-dir /tmp/gg-scale --save scale.json

One ``chroma run`` server is started on a free loopback port (data in ``WORK/chroma-data``, wiped
at start, server log in ``WORK/chroma.log``) and stopped at the end (its whole process group). For
each scale N:

1. ``WORK/corpus-xN/copy1 .. copyN``: N copies of this interpreter's standard library (without
   site-packages and caches); existing copy directories are reused as they are;
2. a from-scratch index of that corpus into ``WORK/index-xN`` (wiped first) with vectors in the
   server, in a child process (wall seconds, phases, chunks, files, vectors embedded, its peak
   RSS, and when lexical search became usable); the child's embedding cache is a fresh file
   ``WORK/embedding-cache-xN.sqlite``, so nothing is served from an earlier run or scale and the
   user's own cache is neither read nor filled;
3. the server's RSS (VmRSS of the server and its descendants) before and after indexing;
4. query latency of ``Searcher.search(query, 10)`` against the server (the queries of
   ``benchmarks/speed.py``: 5 warm-up, then every query twice; p50/p95);
5. on-disk size (allocated blocks) of the Chroma data dir (cumulative: earlier scales' collections
   stay in the server) and of the index dir.

Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from benchmarks import speed  # noqa: E402
from benchmarks.speed import (  # noqa: E402
    COPY_IGNORED,
    EMBEDDING_CACHE_ENV,
    Progress,
    latency_stats,
    log,
    select_queries,
    stdlib_dir,
)
from tests.processes import free_port, stop_process_group, wait_until_answering  # noqa: E402

CHROMA = Path(sys.executable).with_name("chroma")
STARTUP_TIMEOUT_S = 60
WARMUP_QUERIES = 5
RUNS_PER_QUERY = 2


# ------------------------------------------------------------------------------------------ server
def start_server(data_dir: Path, log_path: Path) -> tuple[subprocess.Popen, str]:
    """``chroma run`` in its own process group; the process and its URL once the heartbeat answers."""
    if not CHROMA.is_file():
        raise SystemExit(f"no chroma CLI next to {sys.executable}")
    port = free_port()
    with open(log_path, "w") as handle:
        process = subprocess.Popen(
            [str(CHROMA), "run", "--path", str(data_dir), "--host", "127.0.0.1", "--port", str(port)],
            stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    problem = wait_until_answering(process, f"{url}/api/v2/heartbeat", STARTUP_TIMEOUT_S)
    if problem:
        stop_process_group(process)
        raise SystemExit(f"chroma run {problem}: {log_path.read_text()[-2000:]}")
    log(f"chroma server pid {process.pid} at {url}, data in {data_dir}")
    return process, url


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc/*/stat parent ids)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the command name may contain spaces
        children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    return tree


def tree_rss_mb(pid: int) -> dict:
    """Summed VmRSS of ``pid`` and its descendants, in MB, and how many processes that is."""
    total_kb, count = 0, 0
    for member in process_tree(pid):
        with suppress(OSError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
                    count += 1
                    break
    return {"rss_mb": round(total_kb / 1024, 1), "processes": count}


# ------------------------------------------------------------------------------------------ helpers
def disk_mb(path: Path) -> float:
    """Allocated size of everything under ``path`` (like ``du``), in MB."""
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            with suppress(OSError):
                total += os.lstat(os.path.join(directory, name)).st_blocks * 512
    return round(total / 2**20, 1)


def build_corpus(source: Path, corpus: Path, scale: int) -> dict:
    """``corpus/copy1 .. copyN`` copies of ``source``; existing copies are reused."""
    corpus.mkdir(parents=True, exist_ok=True)
    started, copied = time.perf_counter(), 0
    for number in range(1, scale + 1):
        target = corpus / f"copy{number}"
        if target.is_dir():
            continue
        log(f"copying {source} -> {target}")
        partial = corpus / f".copy{number}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(source, partial, symlinks=True, ignore=shutil.ignore_patterns(*COPY_IGNORED))
        partial.rename(target)  # a copy interrupted half-way is never mistaken for a complete one
        copied += 1
    return {"copies_made": copied, "copy_s": round(time.perf_counter() - started, 3)}


def child_index(argv: list[str]) -> None:
    """Entry point of the indexing child: one ``CodeIndex.update`` into the server, result as JSON."""
    parser = argparse.ArgumentParser(prog="scale_server.py --child-index")
    parser.add_argument("repo", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--chroma-url", required=True)
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--label", default="index")
    parser.add_argument("--launched", type=float, required=True, help="time.time() when the parent started us")
    parser.add_argument("--log-origin", type=float, default=0.0, help="the parent's log clock at that moment")
    args = parser.parse_args(argv)
    # One clock in the log: speed.log stamps lines with seconds since speed._START.
    speed._START = time.perf_counter() - args.log_origin - (time.time() - args.launched)
    index = CodeIndex(args.repo, args.index_dir, chroma_url=args.chroma_url)
    startup = time.time() - args.launched
    summary = index.update(progress=Progress(args.label))
    args.result.write_text(json.dumps({"startup_s": round(startup, 3), "summary": summary.to_dict()}))


def run_index(repo: Path, index_dir: Path, url: str, label: str, cache: Path) -> dict:
    """Index ``repo`` in a child process; its summary, wall seconds and peak RSS."""
    result_file = index_dir.parent / f".{index_dir.name}-result.json"
    result_file.unlink(missing_ok=True)
    env = dict(os.environ)
    env[EMBEDDING_CACHE_ENV] = str(cache)
    for name in ("GREPGRAPH_CHROMA_URL", "GREPGRAPH_REPO", "GREPGRAPH_INDEX_DIR", "GREPGRAPH_CONFIG"):
        env.pop(name, None)
    command = [sys.executable, str(Path(__file__).resolve()), "--child-index", str(repo), str(index_dir),
               "--chroma-url", url, "--result", str(result_file), "--label", label, "--launched", str(time.time()),
               "--log-origin", str(time.perf_counter() - speed._START)]
    log(f"[{label}] indexing {repo} -> {index_dir} (vectors in {url})")
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env)
    _, status, usage = os.wait4(process.pid, 0)  # this child's own peak RSS
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"indexing child for {label!r} failed with exit code {process.returncode}")
    data = json.loads(result_file.read_text())
    result_file.unlink()
    summary = data["summary"]
    lexical = data["startup_s"] + sum(v for name, v in summary["phases"].items() if name != "embed")
    log(f"[{label}] done in {wall:.1f}s (phases {summary['phases']}, {summary['vectors_embedded']} vectors)")
    return {"wall_s": round(wall, 3), "startup_s": data["startup_s"], "lexical_ready_s": round(lexical, 3),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), **summary}


def measure_search(searcher: Searcher, queries: list[tuple[str, str]]) -> dict:
    """5 warm-up queries, then every query ``RUNS_PER_QUERY`` times; latency stats in ms."""
    for _, query in queries[:WARMUP_QUERIES]:
        searcher.search(query, 10)
    samples: list[float] = []
    by_kind: dict[str, list[float]] = {}
    for round_number in range(RUNS_PER_QUERY):
        log(f"latency round {round_number + 1}/{RUNS_PER_QUERY} over {len(queries)} queries")
        for kind, query in queries:
            started = time.perf_counter()
            searcher.search(query, 10)
            elapsed = (time.perf_counter() - started) * 1000
            samples.append(elapsed)
            by_kind.setdefault(kind, []).append(elapsed)
    return {**latency_stats(samples), "by_kind": {kind: latency_stats(v) for kind, v in by_kind.items()},
            "queries": len(queries), "runs_per_query": RUNS_PER_QUERY, "warmup": WARMUP_QUERIES}


# ------------------------------------------------------------------------------------------ main
def run_scale(scale: int, work: Path, source: Path, process: subprocess.Popen, url: str, data_dir: Path) -> dict:
    """Steps 1-5 for one scale."""
    corpus, index_dir = work / f"corpus-x{scale}", work / f"index-x{scale}"
    cache = work / f"embedding-cache-x{scale}.sqlite"
    row: dict = {"scale": scale, "corpus": str(corpus), "index_dir": str(index_dir), "embedding_cache": str(cache)}
    row.update(build_corpus(source, corpus, scale))
    shutil.rmtree(index_dir, ignore_errors=True)
    for path in (cache, *cache.parent.glob(cache.name + "-*")):  # sqlite -wal/-shm too
        path.unlink(missing_ok=True)
    row["server_before"] = tree_rss_mb(process.pid)
    row["chroma_data_mb_before"] = disk_mb(data_dir)
    row["index"] = run_index(corpus, index_dir, url, f"x{scale}", cache)
    row["server_after_index"] = tree_rss_mb(process.pid)
    searcher = Searcher(CodeIndex(corpus, index_dir, chroma_url=url))
    try:
        started = time.perf_counter()
        searcher.search("warm up: open the searcher", 10)
        row["first_search_s"] = round(time.perf_counter() - started, 3)
        row["search"] = measure_search(searcher, select_queries(None))
    finally:
        searcher.close()
    row["server_after_search"] = tree_rss_mb(process.pid)
    row["chroma_data_mb"] = disk_mb(data_dir)
    row["index_dir_mb"] = disk_mb(index_dir)
    log(f"x{scale}: server RSS {row['server_before']['rss_mb']} -> {row['server_after_search']['rss_mb']} MB, "
        f"search p50 {row['search']['p50_ms']} ms, p95 {row['search']['p95_ms']} ms")
    return row


def run(args: argparse.Namespace) -> dict:
    """Every scale against one server; the report as a dict."""
    work = args.work_dir.resolve()
    source = stdlib_dir().resolve()
    if speed.is_inside(work, source) or speed.is_inside(source, work):
        raise SystemExit(f"--work-dir {work} must be outside the corpus {source}")
    work.mkdir(parents=True, exist_ok=True)
    data_dir = work / "chroma-data"
    shutil.rmtree(data_dir, ignore_errors=True)
    report: dict = {"corpus": str(source), "work_dir": str(work), "chroma_data": str(data_dir), "rows": [],
                    "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                "loadavg_start": " ".join(f"{x:.1f}" for x in os.getloadavg())}}
    process, url = start_server(data_dir, work / "chroma.log")
    report["chroma_url"] = url
    try:
        report["server_idle"] = tree_rss_mb(process.pid)
        for scale in args.scales:
            report["rows"].append(run_scale(scale, work, source, process, url, data_dir))
            if args.save:  # partial results survive a later scale failing
                args.save.write_text(json.dumps(report, indent=2))
    finally:
        report["machine"]["loadavg_end"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
        stop_process_group(process)
        log("chroma server stopped")
    return report


def print_table(report: dict) -> None:
    """The report as a Markdown table."""
    machine = report["machine"]
    print(f"## grepgraph with a Chroma server — {report['corpus']} × scale")
    print()
    print(f"Server `chroma run` at {report['chroma_url']} (idle RSS {report['server_idle']['rss_mb']} MB); "
          f"Python {machine['python']}, {machine['cpus']} CPUs, load average {machine['loadavg_start']} at start, "
          f"{machine['loadavg_end']} at end.")
    print()
    print("| scale | chunks | files | vectors | index wall s | lexical-usable s | indexer peak RSS MB "
          "| Chroma server RSS MB after | Chroma data MB | index dir MB | search p50 / p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in report["rows"]:
        index = row["index"]
        print(f"| {row['scale']}x | {index['chunks']} | {index['files']} | {index['vectors_embedded']} "
              f"| {index['wall_s']:.1f} | {index['lexical_ready_s']:.1f} | {index['peak_rss_mb']:.0f} "
              f"| {row['server_after_index']['rss_mb']:.0f} (before {row['server_before']['rss_mb']:.0f}) "
              f"| {row['chroma_data_mb']:.0f} | {row['index_dir_mb']:.0f} "
              f"| {row['search']['p50_ms']:.0f} / {row['search']['p95_ms']:.0f} |")
    print()
    for row in report["rows"]:
        phases = ", ".join(f"{name} {value:g}" for name, value in row["index"]["phases"].items())
        kinds = "; ".join(f"{kind} {s['p50_ms']:.0f}/{s['p95_ms']:.0f}" for kind, s in row["search"]["by_kind"].items())
        print(f"- {row['scale']}x: phases s: {phases}; pending vectors {row['index']['vectors_pending']}; "
              f"server RSS after the queries {row['server_after_search']['rss_mb']:.0f} MB; "
              f"first search {row['first_search_s']} s; p50/p95 ms by kind: {kinds}.")
    print()
    print(f"Chroma data MB is cumulative (earlier scales' collections stay on the server). Latency: "
          f"{WARMUP_QUERIES} warm-up queries, then each query × {RUNS_PER_QUERY}.")


def main() -> None:  # noqa: D103
    if sys.argv[1:2] == ["--child-index"]:
        child_index(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/gg-scale"),
                        help="corpus copies, indexes, Chroma data and caches (default: /tmp/gg-scale)")
    parser.add_argument("--scales", default="1,3", help="comma-separated copy counts (default: 1,3)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    parser.add_argument("--save", type=Path, help="also write the JSON report to this file")
    args = parser.parse_args()
    try:
        args.scales = [int(s) for s in args.scales.split(",") if s.strip()]
    except ValueError:
        parser.error("--scales takes comma-separated integers, e.g. 1,3")
    if not args.scales or min(args.scales) < 1:
        parser.error("--scales must name at least one positive integer")
    report = run(args)
    if args.save:
        args.save.write_text(json.dumps(report, indent=2))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
