"""Searches side by side: none waits on another, one past its deadline stops and holds nothing, updates coordinate.

A search carries a deadline (``Searcher.search(..., deadline=...)``), checked between its stages; a
search past it raises ``SearchDeadlineExceeded`` and lets go of its snapshot and connection, so a
server's worker thread whose request timed out stops instead of searching on. After 100 such searches
the process must have its threads back, no search in progress and no connection lent out, and the
next search must answer as before. A search must also answer while another thread holds a snapshot
(no lock is held across a search), and an update through the index a searcher shares (the resident
service's watcher) keeps the settings it builds with while searches refresh.
Real index of the fixture repository with real vectors; deadlines that pass at a chosen stage make
the stops exact, and deadlines of a few milliseconds show the same with the real clock.
"""

from __future__ import annotations

import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from grepgraph.retrievers.core.deadline import Deadline, SearchDeadlineExceeded
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex
from grepgraph.retrievers.store.live import updating

from tests.conftest import SAMPLE_REPO, hang_deadline, indexed_sample_repo, isolated_settings

pytestmark = pytest.mark.slow

SEARCHES = 100
CLIENTS = 8
QUERIES = ["how are call edges inserted into the graph database", "GraphStore.delete_file",
           "subclasses of BaseParser", "read the settings file and fill in defaults"]
# The checks between a search's stages, in order (what the exception names).
STAGES = ["the lexical stage", "the evidence stage", "the dense stage", "the exact cosines", "the learned ranking"]


@dataclass(frozen=True)
class PassesBefore(Deadline):
    """A deadline that has passed once the search reaches ``stage``: it stops there, however fast the machine."""

    stage: str = ""

    def check(self, stage: str) -> None:  # noqa: D102
        if stage == self.stage:
            Deadline(at=0.0).check(stage)


def answer(hits) -> list[tuple[str, str, float]]:
    return [(hit.path, hit.symbol, round(hit.score, 9)) for hit in hits]


def nothing_held(searcher: Searcher) -> None:
    """No search in progress and, but for the one this check borrows, no connection lent out."""
    assert searcher.searches_in_progress == 0
    with searcher.reading() as snapshot:
        assert snapshot.connections_in_use == 1


def search_on_another_thread(searcher: Searcher, query: str) -> list:
    """The search's answer, run on a thread of its own (a hang fails through the test's ``hang_deadline``)."""
    found: list = []
    thread = threading.Thread(target=lambda: found.append(answer(searcher.search(query, 5)[0])))
    thread.start()
    thread.join()
    assert found, "the search on the other thread failed"
    return found[0]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    with isolated_settings(tmp_path_factory):
        context = indexed_sample_repo(tmp_path_factory)
        searcher = Searcher(CodeIndex(context["repo"], context["index_dir"]))
        yield searcher
        searcher.close()


@pytest.fixture(scope="module")
def alone(searcher) -> dict[str, list]:
    """Each query's answer with nothing else running."""
    return {query: answer(searcher.search(query, 5)[0]) for query in QUERIES}


def test_a_search_answers_while_another_thread_holds_the_snapshot(searcher, alone):
    with hang_deadline(120), searcher.reading():
        assert search_on_another_thread(searcher, QUERIES[0]) == alone[QUERIES[0]]


def test_searches_past_their_deadline_stop_at_that_stage_and_hold_nothing(searcher, alone):
    threads_before = threading.active_count()

    def past_deadline(number: int) -> str:
        stage = STAGES[number % len(STAGES)]
        with pytest.raises(SearchDeadlineExceeded) as stopped:
            searcher.search(QUERIES[number % len(QUERIES)], 5, deadline=PassesBefore(stage=stage))
        assert str(stopped.value).endswith(f"stopped before {stage}")
        return stage

    with hang_deadline(240):
        with ThreadPoolExecutor(CLIENTS) as clients:
            stopped_at = list(clients.map(past_deadline, range(SEARCHES)))
        assert sorted(set(stopped_at)) == sorted(STAGES)
        assert threading.active_count() == threads_before
        nothing_held(searcher)
        assert search_on_another_thread(searcher, QUERIES[1]) == alone[QUERIES[1]]


def test_searches_with_a_real_deadline_either_answer_as_alone_or_stop(searcher, alone):
    threads_before = threading.active_count()

    def bounded(number: int) -> bool:
        query = QUERIES[number % len(QUERIES)]
        # From already past to a few milliseconds: some stop at one stage or another, some finish.
        deadline = Deadline(at=time.time() + (number % 10) * 0.002)
        try:
            hits, _ = searcher.search(query, 5, deadline=deadline)
        except SearchDeadlineExceeded:
            return False
        assert answer(hits) == alone[query]
        return True

    with hang_deadline(240):
        with ThreadPoolExecutor(CLIENTS) as clients:
            finished = list(clients.map(bounded, range(SEARCHES)))
        assert not all(finished)  # (the ones given no time at all stop)
        assert threading.active_count() == threads_before
        nothing_held(searcher)
        assert search_on_another_thread(searcher, QUERIES[2]) == alone[QUERIES[2]]


def test_searches_side_by_side_answer_as_alone(searcher, alone):
    with hang_deadline(240), ThreadPoolExecutor(4) as clients:
        answers = list(clients.map(lambda n: answer(searcher.search(QUERIES[n % len(QUERIES)], 5)[0]), range(40)))
    assert answers == [alone[QUERIES[n % len(QUERIES)]] for n in range(40)]


def test_an_update_through_a_shared_index_keeps_its_settings_while_searches_refresh(tmp_path, tmp_path_factory,
                                                                                     monkeypatch):
    with isolated_settings(tmp_path_factory):
        repo = Path(shutil.copytree(SAMPLE_REPO, tmp_path / "repo"))
        index_dir = tmp_path / "index"
        CodeIndex(repo, index_dir).update(embed=False)
        shared = CodeIndex(repo, index_dir)  # what the service's searchers and its watcher both use
        searcher = Searcher(shared)
        try:
            searcher.search(QUERIES[0], 5)
            # Another process commits: the searcher's next refresh is due to follow the stored settings.
            (repo / "graphstore" / "extra.py").write_text("def added_elsewhere():\n    return 1\n")
            CodeIndex(repo, index_dir).update(embed=False)
            # The watcher's next update builds with other settings (a changed environment).
            monkeypatch.setenv("GREPGRAPH_VIEWS", "card")
            (repo / "graphstore" / "extra.py").write_text("def added_by_the_watcher():\n    return 2\n")
            seen: list[str] = []

            def search_meanwhile(phase: str, done: int, total: int) -> None:
                if not seen:
                    search_on_another_thread(searcher, QUERIES[0])
                    seen.append(shared.settings.views)

            with hang_deadline(120), updating(shared):
                shared.update(embed=False, progress=search_meanwhile)
            assert seen == ["card"]
            assert CodeIndex(repo, index_dir).stored_settings().views == "card"
            hits, _ = searcher.search("added_by_the_watcher", 5)
            assert "added_by_the_watcher" in [hit.symbol for hit in hits]
            assert shared.settings.views == "card"
        finally:
            searcher.close()
