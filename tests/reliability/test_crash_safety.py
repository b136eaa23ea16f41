"""``kill -9`` the indexer at random points, run two indexers at once, search while re-indexing.

The crash trials index a repository big enough to take a few seconds (the sample repository plus copies of its
``graphstore/`` package) in a child process that is killed after a seeded random delay (a third of them drawn
below the measured time to the commit, so that the short pre-commit phases are hit too). Before each trial the
repository moves to a new version: every Python file gets a new first line (so every file is re-read, re-parsed
and re-committed) and ``rev/markers.py`` defines functions named after the version (so there are new vectors to
embed). After each kill a fresh ``Searcher`` must open a complete index — exactly the previous committed version
or the new one, never a mix — and return results; at the end ``update()`` completes and matches a clean build.
The child uses ``views="card"`` and a small ``EMBED_BATCH`` so that kills land between and inside vector batches
without the embedding dominating the run time.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.core.errors import IndexBusy
from grepgraph.retrievers.core.index_settings import DEFAULT_EMBEDDING_MODEL, IndexSettings
from grepgraph.retrievers.dense import sync as vector_sync
from grepgraph.retrievers.dense.embeddings import embedder_for
from grepgraph.retrievers.dense.minilm import MiniLMEmbedder
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.source.scan import file_hash
from grepgraph.retrievers.store.index import CodeIndex
from grepgraph.retrievers.store.segments import load_segments

from tests.conftest import isolated_settings
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
SAMPLE_REPO = PROJECT / "tests" / "fixtures" / "sample_repo"
GREPGRAPH = PROJECT / ".venv" / "bin" / "grepgraph"
SETTINGS = IndexSettings(views="card")
COPIES = 4
SEED = 20261122
KILLS = 20
MAX_TRIALS = 40
MAX_DELAY_S = 1.3
# The other kills aim anywhere in a run: below the time a whole run took on the runs so far (a faster machine
# finishes sooner, and a delay past its end kills nothing).
LATE_SHARE = 0.9
# A third of the kills aim before the commit (scan, parse, BM25 build, the open transaction), which takes a few
# tenths of a second: their delay is drawn below the commit time measured on the runs so far.
PRE_COMMIT_SHARE = 1 / 3
COMMIT_LINE = "PHASE bm25 1/1"
MARKER_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
                "kilo", "lima", "mike", "november", "oscar", "papa")
QUESTION = "how are call edges inserted into the database"
MARKER = re.compile(r"^marker_v(\d+)_")

CHILD = r"""
import sys, time
repo, mode, views = sys.argv[1], sys.argv[2], sys.argv[3]
from grepgraph.retrievers.dense import sync as vector_sync
from grepgraph.retrievers.store.index import CodeIndex, IndexSettings
vector_sync.EMBED_BATCH = 4  # many small vector batches, so a kill lands between (or inside) them
embedder = None
if mode != "hold":
    from grepgraph.retrievers.core.index_settings import DEFAULT_EMBEDDING_MODEL
    from grepgraph.retrievers.dense.embeddings import embedder_for
    import grepgraph.retrievers.dense.vectors, chromadb  # imported before the clock starts, like the model
    embedder = embedder_for(DEFAULT_EMBEDDING_MODEL)
    embedder.embed(["warm up"])
print("READY", flush=True)
if sys.stdin.readline().strip() != "GO":
    sys.exit(0)

def progress(phase, done, total):
    print(f"PHASE {phase} {done}/{total}", flush=True)
    if mode == "hold" and (phase, done) == ("scan", 0):
        print("HOLDING", flush=True)  # the lock is held until the test says go on
        sys.stdin.readline()

index = CodeIndex(repo, settings=IndexSettings(views=views), embedder=embedder)
index.update(progress=progress, rebuild=mode == "rebuild", embed=mode != "hold")
print("DONE", flush=True)
"""


class Indexer:
    """An indexer process: started at once, it imports and loads the model, then waits for ``go()``."""

    def __init__(self, repo: Path, log: Path, mode: str = "run", views: str = "card") -> None:
        with log.open("a") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(repo), mode, views], cwd=PROJECT,
                env={**os.environ, "PYTHONPATH": str(PROJECT)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=stderr, text=True,
            )
        self.lines: list[str] = []
        self.times: list[float] = []  # when each line arrived
        self.went_at = 0.0
        self.ready = threading.Event()
        self.holding = threading.Event()
        self.exited = threading.Event()
        self.watchdog = threading.Timer(180, self.process.kill)  # never outlive the test
        self.watchdog.start()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.times.append(time.monotonic())
            self.lines.append(line.strip())
            if line.startswith("READY"):
                self.ready.set()
            elif line.startswith("HOLDING"):
                self.holding.set()
        self.exited.set()

    def go(self) -> None:
        self.went_at = time.monotonic()
        self.process.stdin.write("GO\n")
        self.process.stdin.flush()

    def seconds_to(self, line: str) -> float | None:
        """How long after ``go()`` the indexer reported ``line`` (None if it did not)."""
        return next((at - self.went_at for at, seen in zip(self.times, self.lines) if seen == line), None)

    @property
    def phase(self) -> str:
        """The last thing the indexer reported."""
        return next((line for line in reversed(self.lines) if line.startswith(("PHASE", "DONE"))), "GO")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        self.exited.wait(10)

    def close(self) -> None:
        self.watchdog.cancel()
        if self.process.poll() is None:
            try:
                self.process.stdin.close()  # a waiting indexer exits on EOF
                self.process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass


@pytest.fixture(scope="module")
def isolated_module(tmp_path_factory):
    with isolated_settings(tmp_path_factory):
        yield


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return embedder_for(DEFAULT_EMBEDDING_MODEL)


def rows(index: CodeIndex, sql: str, params: tuple = ()) -> list[tuple]:
    connection = sqlite3.connect(f"file:{index.db_path}?mode=ro", uri=True, timeout=30)
    try:
        return connection.execute(sql, params).fetchall()
    finally:
        connection.close()


# --------------------------------------------------------------------------- kill -9 at random points
def grow(repo: Path) -> None:
    shutil.copytree(SAMPLE_REPO, repo)
    for copy in range(1, COPIES + 1):
        shutil.copytree(SAMPLE_REPO / "graphstore", repo / "copies" / str(copy) / "graphstore")
    (repo / "rev").mkdir()


def write_version(repo: Path, version: int) -> dict[str, str]:
    """Move the repository to ``version``; returns the content hash of every file, by repository path."""
    for path in repo.rglob("*.py"):
        if ".grepgraph" in path.parts or path.parent.name == "rev":
            continue
        lines = path.read_text().splitlines(keepends=True)
        if lines and lines[0].startswith("# revision"):
            lines = lines[1:]
        path.write_text(f"# revision {version:04d}\n" + "".join(lines))
    functions = "\n\n".join(
        f'def marker_v{version}_{word}(value):\n    """Marker {word} of revision {version}."""\n'
        f"    return value + {version}\n" for word in MARKER_WORDS)
    (repo / "rev" / "markers.py").write_text(f'"""Markers of one revision."""\n\n\n{functions}')
    return {path.relative_to(repo).as_posix(): file_hash(path.read_bytes())
            for path in repo.rglob("*") if path.is_file() and ".grepgraph" not in path.parts}


@dataclass
class Trial:
    number: int
    delay_s: float
    killed: bool
    phase: str
    committed: int
    outcome: str
    pending: int


def committed_version(index: CodeIndex, versions: dict[int, dict[str, str]], indexed_paths: set[str]) -> int:
    """The one version the committed index holds; fails on a mix of versions or a half-written index."""
    found = {int(MARKER.match(symbol).group(1))
             for (symbol,) in rows(index, "SELECT symbol FROM chunks WHERE path = 'rev/markers.py'")
             if MARKER.match(symbol)}
    assert len(found) == 1, f"markers of several versions (or none) are indexed: {sorted(found)}"
    (version,) = found
    hashes = dict(rows(index, "SELECT path, hash FROM files"))
    assert set(hashes) == indexed_paths, set(hashes) ^ indexed_paths
    stale = sorted(path for path, digest in hashes.items() if versions[version][path] != digest)
    assert not stale, f"version {version} is committed, but these files are of another version: {stale[:5]}"
    counts = dict(rows(index, "SELECT path, chunks FROM files"))
    per_path = dict(rows(index, "SELECT path, COUNT(*) FROM chunks GROUP BY path"))
    assert {p: c for p, c in counts.items() if c} == per_path, "the files and chunks tables disagree"
    return version


def check_searchable(index: CodeIndex, version: int, expected_chunks: int) -> None:
    """A fresh searcher opens the committed index and finds what it holds, lexically and by meaning."""
    index.reopen_vectors()  # a new reader, as in a new process: nothing cached from before the crash
    searcher = Searcher(index)
    try:
        assert searcher.chunk_count == expected_chunks
        with searcher.connection_lock():
            live = {row[0] for row in searcher.connection.execute("SELECT id FROM chunks")}
            generation = index.bm25_generation_dir(searcher.connection)
        segment_ids = set(np.concatenate([ids for ids, _ in load_segments(generation)]).tolist())
        assert live <= segment_ids, f"{len(live - segment_ids)} chunks are missing from BM25 {generation.name}"
        # Vectors may be partly written (by design: the next run completes them), so the ranking of a question
        # can differ from a finished index's; that it answers does not. Names are found either way.
        hits, _ = searcher.search(QUESTION, limit=5)
        assert len(hits) == 5
        for name in ("GraphStore.store_parse_result", f"marker_v{version}_charlie"):
            hits, _ = searcher.search(name, limit=3, dense=False)
            assert hits and hits[0].symbol == name, [(h.path, h.symbol) for h in hits]
    finally:
        searcher.close()


def test_kill_9_at_random_points_leaves_a_complete_index(isolated_module, tmp_path, embedder):
    repo = tmp_path / "repo"
    log = tmp_path / "indexers.log"
    grow(repo)
    versions = {0: write_version(repo, 0)}
    index = CodeIndex(repo, settings=SETTINGS, embedder=embedder)
    index.update()  # version 0, complete: every run below re-parses everything and embeds the new markers
    indexed_paths = {path for (path,) in rows(index, "SELECT path FROM files")}
    expected_chunks = rows(index, "SELECT COUNT(*) FROM chunks")[0][0]
    last_committed = committed_version(index, versions, indexed_paths)

    rng = random.Random(SEED)
    trials: list[Trial] = []
    commit_times: list[float] = []
    run_times: list[float] = []  # go() to DONE, of the runs that finished
    waiting = Indexer(repo, log)
    try:
        while sum(trial.killed for trial in trials) < KILLS and len(trials) < MAX_TRIALS:
            number = len(trials) + 1
            versions[number] = write_version(repo, number)
            aim_early = rng.random() < PRE_COMMIT_SHARE
            commit_s = statistics.median_high(commit_times) if commit_times else 0.3
            late_s = min(MAX_DELAY_S, LATE_SHARE * statistics.median_high(run_times)) if run_times else MAX_DELAY_S
            delay = rng.uniform(0.0, 0.9 * commit_s) if aim_early else rng.uniform(0.0, late_s)
            child = waiting
            assert child.ready.wait(60), f"the indexer did not start:\n{log.read_text()[-3000:]}"
            child.go()
            waiting = Indexer(repo, log)  # the next one loads its model while this one runs
            child.exited.wait(delay)
            killed = child.process.poll() is None and child.phase != "DONE"
            if child.process.poll() is None:
                child.kill()  # (after DONE it is only exiting: not counted as a kill inside the run)
            phase = child.phase
            if child.seconds_to(COMMIT_LINE) is not None:
                commit_times.append(child.seconds_to(COMMIT_LINE))
            if phase == "DONE":
                run_times.append(child.times[-1] - child.went_at)
            child.close()
            assert killed or phase == "DONE", (
                f"trial {number}: the indexer failed on its own ({child.process.returncode}, {phase}):\n"
                f"{log.read_text()[-3000:]}")

            version = committed_version(index, versions, indexed_paths)
            assert version in (last_committed, number), (number, version, last_committed)
            if not killed:
                assert version == number
            check_searchable(index, version, expected_chunks)
            pending = index.status()["vectors_pending"]["card"]
            outcome = "new" if version == number else "old"
            trials.append(Trial(number, round(delay, 3), killed, phase, version, outcome, pending))
            last_committed = version
    finally:
        waiting.close()

    print(f"\n\nkill -9 trials (seed {SEED}): {sum(t.killed for t in trials)} kills in {len(trials)} runs")  # noqa: T201
    print(f"{'run':>4} {'delay s':>8} {'killed':>7}  {'last reported phase':<28} {'index':>6} {'pending':>8}")  # noqa: T201
    for trial in trials:
        print(f"{trial.number:>4} {trial.delay_s:>8.3f} {str(trial.killed):>7}  {trial.phase[6:] or trial.phase:<28}"  # noqa: T201
              f" {trial.outcome:>6} {trial.pending:>8}")
    kills = [trial for trial in trials if trial.killed]
    assert len(kills) >= KILLS, f"only {len(kills)} of {len(trials)} runs were killed"
    # The kills landed on both sides of the commit: some runs left the old version, some the new one.
    assert {"old", "new"} <= {trial.outcome for trial in kills}, [(t.phase, t.outcome) for t in kills]

    # A run to completion finishes the job and equals a clean build of the same files.
    summary = index.update()
    reference = tmp_path / "reference"
    shutil.copytree(repo, reference, ignore=shutil.ignore_patterns(".grepgraph"))
    clean = CodeIndex(reference, settings=SETTINGS, embedder=embedder).update(embed=False)
    assert (summary.files, summary.chunks, summary.edges) == (clean.files, clean.chunks, clean.edges)
    assert summary.chunks == expected_chunks and summary.vectors_pending == 0
    assert committed_version(index, versions, indexed_paths) == len(trials)
    # Every chunk has its vector. (That the vectors a killed run stored without recording them are swept once
    # unreferenced is tested on its own below; here their count is printed.)
    referenced = [key for (key,) in rows(index, "SELECT DISTINCT card_key FROM chunks")]
    assert not index.vector_store(("card",)).missing("card", referenced)
    orphans = index.vector_store(("card",)).count("card") - len(referenced)
    print(f"vectors in Chroma that no chunk references after the final run: {orphans}")  # noqa: T201
    assert len(list((index.index_dir / "bm25").iterdir())) == 1  # abandoned generations are cleaned up
    check_searchable(index, len(trials), expected_chunks)


def test_vectors_of_a_killed_run_are_collected_once_unreferenced(isolated_module, tmp_path, embedder, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    index = CodeIndex(repo, settings=SETTINGS, embedder=embedder)

    def killed(connection, writer=None):  # the process dies after a batch reached Chroma, before the SQLite commit
        raise SystemExit("kill -9")

    with monkeypatch.context() as patch:
        patch.setattr(vector_sync, "mark_vectors_changed", killed)
        with pytest.raises(SystemExit):
            index.update()
    (repo / "graphstore" / "store.py").unlink()  # its chunks, and so its vectors' keys, are gone for good
    summary = index.update()
    assert summary.vectors_pending == 0
    referenced = rows(index, "SELECT COUNT(DISTINCT card_key) FROM chunks")[0][0]
    assert index.vector_store(("card",)).count("card") == referenced


def test_an_exact_name_ranks_first_while_its_vectors_are_missing(isolated_module, tmp_path, embedder):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    index = CodeIndex(repo, settings=SETTINGS, embedder=embedder)
    index.update()
    # What a kill -9 between the commit and the vectors leaves: store.py's chunks committed without vectors.
    (repo / "graphstore" / "store.py").rename(repo / "graphstore" / "storage.py")
    index.update(embed=False)
    assert index.status()["vectors_pending"]["card"] > 0
    index.reopen_vectors()
    searcher = Searcher(index)
    try:
        hits, _ = searcher.search("GraphStore.store_parse_result", limit=5)
        assert hits[0].symbol == "GraphStore.store_parse_result", [(h.symbol, h.components) for h in hits[:3]]
    finally:
        searcher.close()


# --------------------------------------------------------------------------- two indexers at once
def test_a_second_indexer_exits_with_a_clear_message(isolated_module, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    log = tmp_path / "holder.log"
    env = {name: value for name, value in os.environ.items() if not name.startswith("GREPGRAPH_")}
    env["GREPGRAPH_EMBEDDING_CACHE"] = "off"
    holder = Indexer(repo, log, mode="hold")
    try:
        assert holder.ready.wait(60), log.read_text()[-3000:]
        holder.go()
        assert holder.holding.wait(60), log.read_text()[-3000:]

        with pytest.raises(IndexBusy, match=r"another grepgraph indexer is running on .*wait for it to finish"):
            CodeIndex(repo, settings=SETTINGS).update(embed=False)

        cli = subprocess.run([str(GREPGRAPH), "index", str(repo), "--quiet", "--no-embed"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=60)
        assert cli.returncode == 2, (cli.returncode, cli.stdout, cli.stderr)
        lines = cli.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("grepgraph: error: another grepgraph indexer is running"), (
            cli.stderr)
        assert "Traceback" not in cli.stderr
        # The lock file still names the holder (a refused indexer must not overwrite it).
        assert (repo / ".grepgraph" / "lock").read_text().strip() == str(holder.process.pid)

        holder.go()  # let the holder finish
        holder.process.wait(60)
        assert holder.process.returncode == 0 and holder.phase == "DONE", log.read_text()[-3000:]
    finally:
        holder.close()
    cli = subprocess.run([str(GREPGRAPH), "index", str(repo), "--quiet", "--no-embed", "--json"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["files_changed"] == 0  # the holder's run was complete


# --------------------------------------------------------------------------- searching during a re-index
def test_a_reader_opened_before_another_process_wrote_vectors_keeps_answering(isolated_module, tmp_path, embedder):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    index = CodeIndex(repo, settings=SETTINGS, embedder=embedder)
    index.update()
    searcher = Searcher(index)  # a long-lived reader (the MCP server): its Chroma client is loaded now
    try:
        assert searcher.search(QUESTION, limit=5)[0]
        (repo / "graphstore" / "fresh.py").write_text(
            'def freshly_added_function(rows):\n    """Count the rows a batch insert wrote."""\n    return len(rows)\n')
        log = tmp_path / "indexer.log"
        indexer = Indexer(repo, log)
        try:
            assert indexer.ready.wait(60), log.read_text()[-3000:]
            indexer.go()
            indexer.process.wait(120)
        finally:
            indexer.close()
        assert indexer.phase == "DONE", log.read_text()[-3000:]
        # A search that refreshed just before the other process wrote, then asks for the exact cosines of
        # candidates whose vectors it has not loaded: those count as missing, the search does not fail.
        with searcher.connection_lock():
            (key,) = searcher.connection.execute(
                "SELECT card_key FROM chunks WHERE symbol = 'freshly_added_function'").fetchone()
        store = index.vector_store(("card",))
        assert isinstance(store.similarities("card", embedder.embed(["count rows"])[0], [key]), dict)
        # The next search reopens the vectors and finds the new function by meaning.
        hits, _ = searcher.search("how many rows did a batch insert write", limit=5)
        assert "freshly_added_function" in {hit.symbol for hit in hits}, [(h.path, h.symbol) for h in hits]
    finally:
        searcher.close()


def test_searches_keep_working_while_the_index_is_rebuilt(isolated_module, tmp_path, embedder):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    for copy in (1, 2):
        shutil.copytree(SAMPLE_REPO / "graphstore", repo / "copies" / str(copy) / "graphstore")
    CodeIndex(repo, settings=SETTINGS, embedder=embedder).update()
    (repo / "graphstore" / "fresh.py").write_text(
        'def freshly_added_function(rows):\n    """Count the rows a batch insert wrote."""\n    return len(rows)\n')
    context = {"repo": str(repo), "llm_enabled": False}
    forget_searchers()
    graph.invoke({"query": "warm up"}, context=context)

    log = tmp_path / "rebuild.log"
    indexer = Indexer(repo, log, mode="rebuild")
    stop = threading.Event()
    searches: list[tuple[str, str, int]] = []  # (indexer phase, query, results)
    errors: list[str] = []
    queries = [QUESTION, "GraphStore.store_parse_result", "who calls _insert_edges", "tokenize text for search"]

    def search_in_a_loop() -> None:
        number = 0
        while not stop.is_set():
            query = queries[number % len(queries)]
            number += 1
            phase = indexer.phase if indexer.ready.is_set() else "starting"
            try:
                output = graph.invoke({"query": query}, context=context)
                searches.append((phase, query, len(output["results"])))
            except Exception:  # noqa: BLE001 - every error is a finding
                errors.append(f"{phase} {query!r}:\n{traceback.format_exc()}")

    searcher_thread = threading.Thread(target=search_in_a_loop)
    try:
        assert indexer.ready.wait(60), log.read_text()[-3000:]
        searcher_thread.start()
        indexer.go()
        indexer.process.wait(120)
        finished = len(searches) + len(errors)
        wait_until(lambda: len(searches) + len(errors) >= finished + 3)  # a few searches after the commit, too
    finally:
        stop.set()
        if searcher_thread.is_alive():
            searcher_thread.join(60)
        indexer.close()
    assert indexer.process.returncode == 0 and indexer.phase == "DONE", log.read_text()[-3000:]
    assert not errors, f"{len(errors)} of {len(searches) + len(errors)} searches failed:\n" + "\n".join(errors[:3])
    during = [entry for entry in searches if entry[0].startswith("PHASE")]
    assert len(during) >= 5, f"only {len(during)} searches ran while the indexer worked: {searches[:5]}"
    empty = [entry for entry in searches if entry[2] == 0]
    assert not empty, f"{len(empty)} searches came back empty, e.g. {empty[:3]}"
    phases_seen = {entry[0].split()[1] for entry in during}
    print(f"\n\nsearches during the rebuild: {len(searches)} ({len(during)} while it ran; phases seen:"  # noqa: T201
          f" {', '.join(sorted(phases_seen))}), errors: {len(errors)}")
    output = graph.invoke({"query": "freshly_added_function"}, context=context)
    assert output["results"][0]["symbol"] == "freshly_added_function"  # the running searcher saw the new index
    forget_searchers()
