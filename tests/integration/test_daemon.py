"""The resident search service with real processes: started on demand, same answers, recovers by itself.

Each test copies the fixture repository into ``tmp_path`` (a git work tree), indexes it for real and runs
``grepgraph`` commands as separate processes, as a user's shell would.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from grepgraph import service_client
from tests.conftest import SAMPLE_REPO
from tests.ollama_server import OllamaTestServer
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

HEAVY_MODULES = ("langgraph", "langchain_core", "chromadb", "onnxruntime", "numpy")
QUERY = "insert an edge into the graph store"


def environment(**extra: str) -> dict[str, str]:
    """The test process's environment with the service on and the outside's grepgraph settings left out."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("GREPGRAPH_")}
    return {**env, "GREPGRAPH_DAEMON": "on", "GREPGRAPH_SERVICE_IDLE_S": "120", "GREPGRAPH_EMBEDDING_CACHE": "off",
            "GREPGRAPH_SERVICE_START_S": "180", **extra}


def grepgraph(*args: str, cwd: Path, env: dict[str, str] | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grepgraph.cli", *args], cwd=cwd, env=env or environment(),
                          capture_output=True, text=True, timeout=timeout, check=False)


def commit(root: Path, message: str) -> None:
    """Commit every file of the work tree (a new repository on the first call)."""
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A", "--", ".", ":!.grepgraph"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", message], cwd=root, check=True)


@pytest.fixture
def repo(tmp_path: Path):
    """A git work tree with a real index in ``.grepgraph``; its service is stopped afterwards."""
    from grepgraph.retrievers.store.index import CodeIndex

    root = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, root)
    commit(root, "one")
    CodeIndex(root).update()
    yield root
    index_dir = root / ".grepgraph"
    state = service_client.service_state(index_dir)
    service_client.stop_service(index_dir)
    if state.get("pid"):
        try:
            wait_until(lambda: gone(state["pid"]), what=f"the exit of the service (pid {state['pid']})")
        except AssertionError:
            os.kill(state["pid"], signal.SIGKILL)
            raise


def running(index_dir: Path) -> dict:
    return service_client.service_state(index_dir)


def gone(pid: int) -> bool:
    """Whether every thread of the process has exited, so its sockets are closed (Linux ``/proc``).

    A zombie waiting for its parent counts as gone; its main thread alone does not, while other threads still
    hold its files open.
    """
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return True
    for task in tasks:
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # this thread has just gone
            continue
        if state not in ("Z", "X"):
            return False
    return True


def test_first_search_starts_the_service_which_answers_like_an_in_process_search(repo: Path, tmp_path: Path):
    index_dir = repo / ".grepgraph"
    assert not running(index_dir)["running"]
    through_service = grepgraph("search", QUERY, "--repo", str(repo), "--no-llm", cwd=tmp_path)
    assert through_service.returncode == 0, through_service.stderr
    state = running(index_dir)
    assert state["running"] and state["watching"]
    assert oct((index_dir / "service").stat().st_mode & 0o777) == oct(0o700)
    assert oct((index_dir / "service" / "service.sock").stat().st_mode & 0o777) == oct(0o600)

    in_process = grepgraph("search", QUERY, "--repo", str(repo), "--no-llm", "--no-daemon", cwd=tmp_path)
    assert in_process.returncode == 0, in_process.stderr
    assert through_service.stdout == in_process.stdout
    assert "store" in through_service.stdout
    for arguments in (["--json", QUERY], ["--json", "--literal", "def "], ["who calls store_parse_result"]):
        service_answer = grepgraph("search", *arguments, "--repo", str(repo), "--no-llm", cwd=tmp_path)
        local_answer = grepgraph("search", *arguments, "--repo", str(repo), "--no-llm", "--no-daemon", cwd=tmp_path)
        assert service_answer.stdout == local_answer.stdout, arguments
    assert running(index_dir)["searches"] >= 1

    # A subdirectory of the repository searches the enclosing index, through the same service.
    from_subdirectory = grepgraph("search", QUERY, "--no-llm", cwd=repo / "graphstore")
    assert from_subdirectory.returncode == 0, from_subdirectory.stderr
    assert from_subdirectory.stdout == through_service.stdout


def test_the_client_imports_nothing_heavy_when_the_service_answers(repo: Path, tmp_path: Path):
    assert grepgraph("daemon", "start", "--repo", str(repo), cwd=tmp_path).returncode == 0
    script = ("import sys\nfrom grepgraph.cli import main\n"
              f"code = main(['search', {QUERY!r}, '--repo', {str(repo)!r}, '--no-llm'])\n"
              f"print('HEAVY', [m for m in {HEAVY_MODULES!r} if m in sys.modules], code)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=environment(), capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.stdout.strip().splitlines()[-1] == "HEAVY [] 0", done.stdout + done.stderr
    # Without the service the same search loads them, lazily.
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=environment(GREPGRAPH_DAEMON="off"),
                          capture_output=True, text=True, timeout=300, check=False)
    assert "'langgraph'" in done.stdout.strip().splitlines()[-1]


def test_a_killed_service_leaves_a_stale_socket_the_next_search_recovers_from(repo: Path, tmp_path: Path):
    index_dir = repo / ".grepgraph"
    assert grepgraph("daemon", "start", "--repo", str(repo), cwd=tmp_path).returncode == 0
    first = running(index_dir)["pid"]
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: gone(first))
    assert (index_dir / "service" / "service.sock").exists()  # stale: nobody listens
    with pytest.raises(service_client.ServiceUnavailable):
        service_client.request(index_dir, "ping")
    after = grepgraph("search", QUERY, "--repo", str(repo), "--no-llm", cwd=tmp_path)
    assert after.returncode == 0 and "store" in after.stdout, after.stderr
    assert "searching in this process" not in after.stderr
    assert running(index_dir)["pid"] not in (None, first)


def test_a_service_killed_mid_search_makes_the_client_search_in_process_and_say_so(repo: Path, tmp_path: Path):
    index_dir = repo / ".grepgraph"
    with OllamaTestServer(responder=lambda request: '{"terms": ["edge"], "focus": "implementation"}') as llm:
        env = environment(GREPGRAPH_LLM_BASE_URL=llm.base_url, GREPGRAPH_LLM_TIMEOUT_S="60")
        assert grepgraph("daemon", "start", "--repo", str(repo), cwd=tmp_path, env=env).returncode == 0
        pid = running(index_dir)["pid"]
        llm.mode = "hang"  # the service's search waits in its rewrite call
        search = subprocess.Popen([sys.executable, "-m", "grepgraph.cli", "search", QUERY, "--repo", str(repo),
                                   "--rewrite", "force"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        wait_until(lambda: llm.requests_to("/api/chat"), timeout=60, what="the service's LLM call")
        llm.mode = "ok"  # the in-process retry gets its answer
        os.kill(pid, signal.SIGKILL)
        out, err = search.communicate(timeout=300)
    assert search.returncode == 0, err
    assert "the search service stopped answering" in err or "closed the connection" in err
    assert "searching in this process" in err
    assert "store" in out


def test_two_clients_starting_it_at_once_share_one_service_that_exits_when_idle(repo: Path, tmp_path: Path):
    index_dir = repo / ".grepgraph"
    env = environment(GREPGRAPH_SERVICE_IDLE_S="4")
    results: list[subprocess.CompletedProcess] = []
    clients = [threading.Thread(target=lambda: results.append(
        grepgraph("search", QUERY, "--repo", str(repo), "--no-llm", cwd=tmp_path, env=env))) for _ in range(2)]
    for client in clients:
        client.start()
    for client in clients:
        client.join(timeout=400)
    assert [result.returncode for result in results] == [0, 0], [result.stderr for result in results]
    assert results[0].stdout == results[1].stdout
    assert all("searching in this process" not in result.stderr for result in results)
    log = (index_dir / "service" / "service.log").read_text()
    assert log.count(" ready (pid") == 1, log
    # The socket goes first; the lock when the watcher has stopped (a vector batch under way finishes first).
    wait_until(lambda: not running(index_dir)["running"] and not service_client.lock_is_held(index_dir),
               timeout=60, interval=0.5, what="the idle service's exit")
    assert not (index_dir / "service" / "service.sock").exists()


def test_a_service_of_another_version_is_replaced(repo: Path, tmp_path: Path):
    index_dir = repo / ".grepgraph"
    old = ("import sys\nimport grepgraph.service_client as client\n"
           "client.code_version = lambda: 'an older grepgraph'\n"
           "from grepgraph.daemon import main\nsys.exit(main(sys.argv[1:]))\n")
    process = subprocess.Popen([sys.executable, "-c", old, "--repo", str(repo), "--index-dir", str(index_dir)],
                               cwd=tmp_path, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        wait_until((index_dir / "service" / "service.sock").exists, timeout=180, interval=0.2,
                   what="the old service's socket")
        assert service_client.call(index_dir, {"op": "status", "version": "an older grepgraph"})["ok"]
        answer = grepgraph("search", QUERY, "--repo", str(repo), "--no-llm", cwd=tmp_path)
        assert answer.returncode == 0 and "store" in answer.stdout, answer.stderr
        assert "searching in this process" not in answer.stderr
        assert process.wait(timeout=60) == 0  # the old one stepped aside
        assert running(index_dir)["version"] not in (None, "an older grepgraph")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def test_a_read_only_index_is_searched_in_process_without_a_service(repo: Path, tmp_path: Path):
    index_dir = repo / ".grepgraph"
    if os.geteuid() == 0:
        pytest.skip("root writes to read-only directories")
    index_dir.chmod(0o555)
    try:
        answer = grepgraph("search", QUERY, "--repo", str(repo), "--no-llm", cwd=tmp_path)
    finally:
        index_dir.chmod(0o755)
    assert answer.returncode == 0 and "store" in answer.stdout, answer.stderr
    assert not (index_dir / "service").exists()


def test_a_socket_owned_by_nobody_listening_is_not_mistaken_for_a_service(tmp_path: Path):
    index_dir = tmp_path / "index"
    (index_dir / "service").mkdir(parents=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(index_dir / "service" / "service.sock"))
    listener.close()  # the file stays, nobody listens
    with pytest.raises(service_client.ServiceUnavailable):
        service_client.request(index_dir, "ping")
    assert service_client.service_state(index_dir) == {"running": False}


def test_status_reports_the_indexed_commit_and_the_files_changed_since(repo: Path, tmp_path: Path):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.strip()
    (repo / "graphstore" / "notes.py").write_text("def jot():\n    return 1\n")
    status = grepgraph("status", str(repo), "--json", cwd=tmp_path)
    report = json.loads(status.stdout)
    assert report["indexed_commit"]["commit"] == commit
    assert report["changed_since_index"]["added"] == 1
    assert report["changed_since_index"]["paths"] == ["graphstore/notes.py"]
    assert report["service"] == {"running": False}
    text = grepgraph("status", str(repo), cwd=tmp_path).stdout
    assert f"index built at {commit}" in text
    assert "changed:    1 files since the index" in text


def paths_matching(repo: Path, tmp_path: Path, text: str) -> set[str]:
    answer = grepgraph("search", "--literal", text, "--json", "--limit", "100", "--repo", str(repo), "--no-llm",
                       cwd=tmp_path)
    assert answer.returncode == 0, answer.stderr
    return {result["path"] for result in json.loads(answer.stdout)["results"]}


def wait_for(predicate, timeout_s: float = 60.0) -> None:
    """Wait until a change reached the index (each poll runs a search: a process, so not too often)."""
    wait_until(predicate, timeout=timeout_s, interval=0.2, what="the change reaching the index")


def test_the_service_follows_created_modified_renamed_and_deleted_files(repo: Path, tmp_path: Path):
    index_dir = repo / ".grepgraph"
    assert grepgraph("daemon", "start", "--repo", str(repo), cwd=tmp_path).returncode == 0
    assert running(index_dir)["watching"]

    (repo / "graphstore" / "extra.py").write_text("def frobnicate_widgets(count):\n    return count * 2\n")
    wait_for(lambda: paths_matching(repo, tmp_path, "frobnicate_widgets") == {"graphstore/extra.py"})
    described = grepgraph("search", "frobnicate widgets", "--repo", str(repo), "--no-llm", cwd=tmp_path)
    assert "graphstore/extra.py" in described.stdout.splitlines()[0], described.stdout

    store = repo / "graphstore" / "store.py"
    store.write_text(store.read_text() + "\n\ndef compact_edge_table(store):\n    return store\n")
    wait_for(lambda: paths_matching(repo, tmp_path, "compact_edge_table") == {"graphstore/store.py"})

    (repo / "graphstore" / "extra.py").rename(repo / "graphstore" / "renamed.py")
    wait_for(lambda: paths_matching(repo, tmp_path, "frobnicate_widgets") == {"graphstore/renamed.py"})

    (repo / "graphstore" / "renamed.py").unlink()
    wait_for(lambda: paths_matching(repo, tmp_path, "frobnicate_widgets") == set())

    wait_for(lambda: not running(index_dir).get("embedding") and running(index_dir).get("vectors_pending") == 0)
    report = json.loads(grepgraph("status", str(repo), "--json", cwd=tmp_path).stdout)
    assert report["changed_since_index"]["count"] == 0
    # (How many updates the four changes took depends on how the watcher batched them as they came.)
    assert report["service"]["watching"] and report["service"]["updates"] >= 1
    assert report["vectors_pending_total"] == 0


def test_a_branch_switch_is_reindexed_by_the_watching_service(repo: Path, tmp_path: Path):
    def checkout(*arguments: str) -> None:
        subprocess.run(["git", "checkout", "-q", *arguments], cwd=repo, check=True)

    first = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=repo, capture_output=True, text=True,
                           check=True).stdout.strip()
    checkout("-b", "feature")
    for number in range(12):
        (repo / "graphstore" / f"feature_{number}.py").write_text(f"def feature_step_{number}():\n    return 1\n")
    commit(repo, "feature files")
    checkout(first)  # the work tree is what the fixture indexed again
    assert grepgraph("daemon", "start", "--repo", str(repo), cwd=tmp_path).returncode == 0
    assert paths_matching(repo, tmp_path, "def feature_step_") == set()
    checkout("feature")
    wait_for(lambda: len(paths_matching(repo, tmp_path, "def feature_step_")) == 12)
    checkout(first)
    wait_for(lambda: paths_matching(repo, tmp_path, "def feature_step_") == set())
    report = json.loads(grepgraph("status", str(repo), "--json", cwd=tmp_path).stdout)
    assert report["head"]["branch"] == first


def test_index_vectors_later_returns_with_the_lexical_index_and_the_service_embeds_the_rest(repo: Path,
                                                                                             tmp_path: Path):
    (repo / "graphstore" / "helpers.py").write_text('def triple_value(x):\n    """Scale a value by three."""\n'
                                                   "    return x * 3\n")
    indexed = grepgraph("index", str(repo), "--vectors-later", cwd=tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    assert "2 pending (a search service starts and embeds them" in indexed.stdout
    found = grepgraph("search", "--literal", "def triple_value", "--repo", str(repo), cwd=tmp_path)
    assert "graphstore/helpers.py:1" in found.stdout
    status = lambda: json.loads(grepgraph("status", str(repo), "--json", cwd=tmp_path).stdout)  # noqa: E731
    wait_for(lambda: status()["vectors_pending_total"] == 0, timeout_s=300)
    assert status()["service"]["watching"]
