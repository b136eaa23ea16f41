"""Parse many files on every core, in worker processes that share nothing with the caller.

The workers are fresh interpreters started with ``subprocess`` (not ``multiprocessing``): a forked child
inherits every lock as it was at the fork, held by threads it doesn't have, so a worker forked from a process
that has already searched (ONNX Runtime's and Chroma's native threads are running) could block forever inside
``ast.parse``; ``spawn`` and ``forkserver`` would re-run the caller's ``__main__`` script in every worker. Jobs
go to the workers round-robin and results come back in the order of the jobs, as they are ready.
"""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO

from ..core.model import ParsedFile
from .cards import with_index_texts
from .chunking import parse_file

log = logging.getLogger(__name__)

PARALLEL_PARSE_MIN_FILES = 200
MAX_WORKERS = 8
# The directory that holds the top-level package this module was imported from, so a worker imports this very
# copy of it. Looked up, not imported: the package is loaded before any module inside it, and importing it here
# would import the layer above (the command line and the servers).
_PACKAGE_ROOT = str(Path(sys.modules[__name__.partition(".")[0]].__path__[0]).resolve().parent)
_WORKER_CODE = f"from {__name__} import serve_jobs; serve_jobs()"

Job = tuple[str, bytes, str]  # (path, file bytes, language)


def decode_source(data: bytes) -> str:
    """Text of a source file: UTF-8 (BOM tolerated), else Latin-1 so nothing is lost."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def parse_job(job: Job) -> ParsedFile:
    """Parse one file's bytes, with what its chunks contribute to the indexes."""
    path, data, language = job
    return with_index_texts(parse_file(path, decode_source(data), language))


def parse_many(jobs: list[Job]) -> Iterator[ParsedFile]:
    """Parsed files in the order of ``jobs``; in worker processes when there are many of them."""
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if len(jobs) < PARALLEL_PARSE_MIN_FILES or workers < 2:
        yield from map(parse_job, jobs)
        return
    pool = [_Worker() for _ in range(workers)]
    for number, worker in enumerate(pool):
        threading.Thread(target=worker.feed, args=(jobs[number::workers],), daemon=True).start()
    try:
        for number, job in enumerate(jobs):
            yield pool[number % workers].result_for(job)
    finally:
        for worker in pool:
            worker.stop()


class _Worker:
    """One worker interpreter and its two pipes."""

    def __init__(self) -> None:
        path = os.environ.get("PYTHONPATH", "")
        env = {**os.environ, "PYTHONPATH": _PACKAGE_ROOT + (os.pathsep + path if path else "")}
        # cwd is the package root, already on its path: ``-c`` puts the cwd first on sys.path, and the
        # repository's pickle.py or logging.py (indexed from its root) must not stand in for the standard library's.
        self.process = subprocess.Popen([sys.executable, "-c", _WORKER_CODE], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env, cwd=_PACKAGE_ROOT)
        if self.process.stdin is None or self.process.stdout is None:  # never with PIPE; for the type checker
            raise RuntimeError("parse worker started without pipes")
        self.jobs: IO[bytes] = self.process.stdin
        self.results: IO[bytes] = self.process.stdout
        self.alive = True

    def feed(self, jobs: list[Job]) -> None:
        """Write this worker's jobs (on its own thread, so a full pipe never stalls reading results)."""
        try:
            for job in jobs:
                pickle.dump(job, self.jobs)
            self.jobs.close()
        except (OSError, ValueError):  # the worker died or was stopped: reading its results says so
            pass

    def result_for(self, job: Job) -> ParsedFile:
        """The worker's next result, which is ``job``'s; parsed here if the worker failed on it or is gone."""
        if self.alive:
            try:
                result = pickle.load(self.results)
            except (EOFError, pickle.UnpicklingError, OSError, ValueError) as error:
                self.alive = False  # every later job of this worker is parsed here
                log.warning("parse worker %d stopped answering (%s: %s, %s); its remaining files are parsed in "
                            "this process", self.process.pid, type(error).__name__, error, self._exit_status())
                result = None
            if isinstance(result, ParsedFile):
                return result
            if self.alive:
                log.info("parse worker %d failed on %s; parsing it in this process", self.process.pid, job[0])
        return parse_job(job)

    def _exit_status(self) -> str:
        """How the worker ended, for the log (its output closing means it is exiting: wait a moment)."""
        try:
            return f"exit status {self.process.wait(timeout=1.0)}"
        except subprocess.TimeoutExpired:
            return "still running"

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.results, self.jobs):
            try:
                stream.close()
            except OSError:  # the feeder thread may be closing stdin at the same moment
                pass


def serve_jobs(source: BinaryIO | None = None, sink: BinaryIO | None = None) -> None:
    """A worker's loop: jobs in, parsed files out (``None`` when one fails: the caller parses it itself)."""
    source = source or sys.stdin.buffer
    sink = sink or sys.stdout.buffer
    while True:
        try:
            job = pickle.load(source)
        except EOFError:
            return
        try:
            result: ParsedFile | None = parse_job(job)
        except Exception:  # noqa: BLE001 - the caller re-parses it and sees the error itself
            result = None
        pickle.dump(result, sink)
        sink.flush()
