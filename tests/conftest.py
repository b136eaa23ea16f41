"""Test-wide settings and clean-up: the machine-wide embedding cache kept out of the way, no service left running."""

import os
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SAMPLE_REPO = Path(__file__).resolve().parent / "fixtures" / "sample_repo"

# Tests measure what indexing really does; a vector cached by an earlier run would hide it.
os.environ.setdefault("GREPGRAPH_EMBEDDING_CACHE", "off")
# A command-line search in a test runs in the test's process; the service tests turn the service on.
os.environ.setdefault("GREPGRAPH_DAEMON", "off")


@pytest.fixture(scope="session", autouse=True)
def no_search_service_outlives_the_run(tmp_path_factory):
    """At the end of the run, stop every search service still running for an index under this run's temp dir.

    A command-line search a test runs with the service on starts one, detached; a test or fixture that did so
    should stop it, and this catches the ones that don't (services of other runs are left alone).
    """
    yield
    from tests.processes import stop_search_services

    stop_search_services(tmp_path_factory.getbasetemp())


def indexed_sample_repo(tmp_path_factory) -> dict[str, str]:
    """The fixture repository copied and indexed once per session (real MiniLM vectors, embedded Chroma).

    Returns the graph context that points at it: ``{"repo": ..., "index_dir": ...}``.
    """
    from grepgraph.retrievers.store.index import CodeIndex

    root = tmp_path_factory.getbasetemp() / "indexed_sample_repo"
    repo, index_dir = root / "repo", root / "index"
    if not (root / "ready").exists():
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(SAMPLE_REPO, repo)
        CodeIndex(repo, index_dir).update()
        (root / "ready").touch()
    return {"repo": str(repo), "index_dir": str(index_dir)}


@contextmanager
def lexical_searcher(root: Path, files: dict[str, str]) -> Iterator:
    """A searcher over a repository of ``files`` (path -> text) under ``root``, indexed without vectors."""
    from grepgraph.retrievers.rank.search import Searcher
    from grepgraph.retrievers.store.index import CodeIndex

    repo = root / "repo"
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    index = CodeIndex(repo, root / "index")
    index.update(embed=False)
    searcher = Searcher(index)
    try:
        yield searcher
    finally:
        searcher.close()


@contextmanager
def isolated_settings(tmp_path_factory) -> Iterator[None]:
    """No GREPGRAPH_* settings from outside (the embedding cache stays off) and no grepgraph.toml in the cwd."""
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith("GREPGRAPH_") and name != "GREPGRAPH_EMBEDDING_CACHE":
                patch.delenv(name)
        patch.chdir(tmp_path_factory.mktemp("cwd"))
        yield


@contextmanager
def hang_deadline(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in the main thread after ``seconds`` instead of letting a hang stall the suite."""
    def expired(signum, frame):
        raise TimeoutError(f"test exceeded its {seconds}s deadline (something hangs)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
