"""A search service that hangs (here: stopped with SIGSTOP) costs a search a few seconds, not the search itself."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from grepgraph import service_client
from tests.conftest import SAMPLE_REPO
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

QUERY = "insert an edge into the graph store"


def grepgraph(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if not name.startswith("GREPGRAPH_")}
    env.update({"GREPGRAPH_DAEMON": "on", "GREPGRAPH_SERVICE_IDLE_S": "120", "GREPGRAPH_EMBEDDING_CACHE": "off",
                "GREPGRAPH_SERVICE_START_S": "180"})
    return subprocess.run([sys.executable, "-m", "grepgraph.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_a_hung_service_is_passed_by_with_one_line_on_stderr(tmp_path: Path):
    from grepgraph.retrievers.store.index import CodeIndex

    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    CodeIndex(repo).update()
    index_dir = repo / ".grepgraph"
    assert grepgraph("daemon", "start", "--repo", str(repo), cwd=tmp_path).returncode == 0
    pid = service_client.service_state(index_dir)["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        answer = grepgraph("search", QUERY, "--repo", str(repo), "--no-llm", cwd=tmp_path)
    finally:
        os.kill(pid, signal.SIGCONT)
        service_client.stop_service(index_dir)
        wait_until(lambda: not service_client.lock_is_held(index_dir), what="the service's exit")
    assert answer.returncode == 0, answer.stderr
    assert "graphstore/store.py" in answer.stdout
    notes = [line for line in answer.stderr.splitlines() if "searching in this process" in line]
    assert notes == ["grepgraph: note: the search service sent nothing for 5 s; searching in this process"]
