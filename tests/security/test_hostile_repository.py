"""A repository that ships an index or a hostile grepgraph.toml: nothing of it runs, nothing is sent anywhere."""

from __future__ import annotations

import http.server
import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import pytest

GREPGRAPH = [sys.executable, "-m", "grepgraph.cli"]


class _Planted:
    """Unpickling this runs ``touch <sentinel>``: what a shipped index could do if it were ever loaded."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self):
        return (os.system, (f"touch {self.sentinel}",))


@pytest.fixture
def hostile_repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "shelf.py").write_text(
        "def stack_boxes(boxes):\n    \"\"\"Stack boxes on the shelf.\"\"\"\n    return sorted(boxes)\n")
    shipped = repo / ".grepgraph"
    segment = shipped / "bm25" / "g1" / "main" / "bm25"
    segment.mkdir(parents=True)
    sentinel = tmp_path / "code-ran"
    (segment / "engine.json").write_text(json.dumps({"engine": "rank_bm25"}))
    (segment / "documents.pkl").write_bytes(pickle.dumps(_Planted(sentinel)))
    (shipped / "chroma").mkdir()
    (shipped / "chroma" / "index_metadata.pickle").write_bytes(pickle.dumps(_Planted(sentinel)))
    (shipped / "index.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    return repo, sentinel


def _environment(tmp_path, **extra) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GREPGRAPH_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               GREPGRAPH_DAEMON="false", **extra)
    return env


def _run(args, env, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([*GREPGRAPH, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def test_a_shipped_index_is_never_opened_and_search_still_answers(hostile_repo, tmp_path):
    repo, sentinel = hostile_repo
    env = _environment(tmp_path)
    before = _run(["search", "stack boxes", "--repo", str(repo)], env, tmp_path)
    assert before.returncode == 2, before.stderr
    assert "not reading" in before.stderr and "grepgraph index" in before.stderr
    assert "Traceback" not in before.stderr

    indexed = _run(["index", str(repo)], env, tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    found = _run(["search", "stack boxes", "--repo", str(repo), "--json"], env, tmp_path)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["symbol"] == "stack_boxes"
    assert not sentinel.exists()
    assert (repo / ".grepgraph" / "index.sqlite").read_bytes().startswith(b"SQLite format 3")  # left as it was
    assert list((tmp_path / "cache" / "grepgraph" / "indexes").iterdir())


class _Collector(http.server.BaseHTTPRequestHandler):
    received: list[str] = []

    def _record(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.received.append(f"{self.path} {self.headers.get('authorization')} {self.rfile.read(length)[:200]!r}")
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST = _record

    def log_message(self, *args) -> None:
        pass


def test_a_hostile_config_sends_no_request_until_trusted(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        repo = tmp_path / "repo"
        repo.mkdir()
        (repo / "main.py").write_text("def alpha():\n    return 1\n")
        url = f"http://127.0.0.1:{server.server_address[1]}"
        (repo / "grepgraph.toml").write_text(
            f'llm_provider = "openai"\nllm_base_url = "{url}"\nchroma_url = "{url}"\n'
            f'[index]\nembedding_model = "ollama:collector"\n')
        env = _environment(tmp_path, GREPGRAPH_LLM_API_KEY="sk-secret")
        assert _run(["index", str(repo)], env, tmp_path).returncode == 0
        # Nothing matches: the zero-result rewrite would ask the LLM, here the user's default one.
        answer = _run(["search", "zzqx wvut", "--repo", str(repo), "--json"], env, tmp_path)
        assert answer.returncode == 0, answer.stderr
        assert "grepgraph trust" in answer.stderr
        assert _Collector.received == []
    finally:
        server.shutdown()
        server.server_close()
