"""A searcher that stays open (the resident service) must not keep SQLite's write-ahead log growing forever.

SQLite writes every commit to ``index.sqlite-wal`` and starts that file over only when no reader's snapshot
reaches into it; a searcher always holds one. Without help the log grew ~150 KB per re-index of the fixture.
"""

import shutil
from pathlib import Path

import grepgraph.retrievers.store.live as live_module
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex
from grepgraph.retrievers.store.live import LiveSnapshots

from tests.conftest import SAMPLE_REPO

REINDEXES = 30


def reindex_and_search(tmp_path: Path) -> tuple[list[int], list[bool]]:
    """Re-index after each of ``REINDEXES`` edits with one searcher open: log sizes, and whether each edit was found."""
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    index = CodeIndex(repo, tmp_path / "index")
    index.update(embed=False)
    searcher = Searcher(index)
    target = sorted(repo.rglob("*.py"))[0]
    original = target.read_text()
    log = index.db_path.with_name(index.db_path.name + "-wal")
    sizes, found = [], []
    try:
        for number in range(REINDEXES):
            target.write_text(f"{original}\n\ndef added_helper_{number}():\n    return {number}\n")
            index.update(embed=False)
            hits, _ = searcher.search(f"added_helper_{number}", 3)
            found.append(bool(hits) and hits[0].symbol == f"added_helper_{number}")
            sizes.append(log.stat().st_size)
    finally:
        searcher.close()
    return sizes, found


def test_the_log_starts_over_while_a_searcher_stays_open(tmp_path, monkeypatch):
    monkeypatch.setattr(live_module, "RETIRED_KEEP_S", 0.0)  # replaced snapshots close at once
    monkeypatch.setattr(live_module, "WAL_RESTART_FRAMES", 20)  # ~80 KB instead of ~4 MB, to see it in 30 edits
    sizes, found = reindex_and_search(tmp_path)
    assert all(found)  # the generation re-opened on the checkpointed file answers like the one it replaced
    assert max(sizes[REINDEXES // 2:]) <= 3 * max(sizes[:3])


def test_without_the_restart_the_log_grows_with_every_reindex(tmp_path, monkeypatch):
    monkeypatch.setattr(live_module, "RETIRED_KEEP_S", 0.0)
    monkeypatch.setattr(LiveSnapshots, "_let_the_log_restart_locked", lambda self: None)
    sizes, found = reindex_and_search(tmp_path)
    assert all(found)
    assert sizes[-1] > 5 * sizes[2]  # what the first test guards against
