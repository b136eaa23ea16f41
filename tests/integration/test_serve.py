"""``grepgraph serve`` for real: uvicorn on a free loopback port, LangServe's ``RemoteRunnable`` and raw HTTP.

The fixture repository is indexed once into a temporary directory; a second served repository
has no index. The LLM is disabled server-side, so results depend only on the index.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path

import httpx
import pytest
import uvicorn
from grepgraph.graphs.resources import forget_searchers
from grepgraph.graphs.search_input import MAX_QUERY_CHARS
from grepgraph.retrievers.store.index import CodeIndex
from langserve import RemoteRunnable

from grepgraph.serve import create_app, is_loopback
from tests.processes import answers_health, free_port
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_repo"
RESULT_KEYS = {"path", "start_line", "end_line", "symbol", "kind", "score", "snippet"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The indexed fixture (``sample_repo``) and an unindexed repository (``bare``), served by uvicorn."""
    root = tmp_path_factory.mktemp("serve")
    repo, index_dir, bare = root / "sample_repo", root / "index", root / "bare"
    shutil.copytree(FIXTURE, repo)
    bare.mkdir()
    (bare / "main.py").write_text("def main():\n    return 0\n")
    CodeIndex(repo, index_dir).update()
    app = create_app([str(repo), str(bare)], index_dirs={str(repo): str(index_dir)},
                     settings={"llm_enabled": False})
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers_health(url, thread), what="the server answering /health")
    except AssertionError:
        server.should_exit = True
        raise
    yield {"url": url, "repo": repo, "index_dir": index_dir, "bare": bare}
    server.should_exit = True
    thread.join(timeout=10)
    assert not thread.is_alive(), "uvicorn did not stop"
    forget_searchers()


@pytest.fixture(scope="module")
def remote(served) -> RemoteRunnable:
    return RemoteRunnable(served["url"] + "/search/")


def post(served, endpoint: str, **kwargs) -> httpx.Response:
    return httpx.post(f"{served['url']}/search/{endpoint}", timeout=30, **kwargs)


def invoke_status(served, payload: dict) -> httpx.Response:
    return post(served, "invoke", json={"input": payload})


# --------------------------------------------------------------------------- what works


def test_health_reports_each_repository_and_its_index(served):
    response = httpx.get(served["url"] + "/health", timeout=10)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["ready"] is False  # the bare repository has no index
    by_name = {repo["name"]: repo for repo in body["repos"]}
    assert by_name["sample_repo"]["index"] == "ready"
    assert by_name["sample_repo"]["path"] == str(served["repo"])
    # Not a git work tree, indexed as it is now, no service following it, every vector embedded.
    assert {key: by_name["sample_repo"][key] for key in ("changed_since_index", "vectors_pending", "service")} == {
        "changed_since_index": 0, "vectors_pending": 0, "service": "none"}
    assert by_name["bare"]["index"] == "missing"
    assert "grepgraph index" in by_name["bare"]["detail"]
    assert not (served["bare"] / ".grepgraph").exists()  # checking never creates an index


def test_invoke_returns_ranked_results_and_trace(remote):
    out = remote.invoke({"query": "store_parse_result", "limit": 3})
    assert 1 <= len(out["results"]) <= 3
    assert all(RESULT_KEYS <= set(result) for result in out["results"])
    top = out["results"][0]
    assert (top["path"], top["symbol"]) == ("graphstore/store.py", "GraphStore.store_parse_result")
    assert "def store_parse_result" in top["snippet"]
    assert [entry["node"] for entry in out["trace"]][0] == "classify_intent"


def test_repo_by_name_or_exact_absolute_path(served, remote):
    by_name = remote.invoke({"query": "store_parse_result", "limit": 1, "repo": "sample_repo"})
    by_path = remote.invoke({"query": "store_parse_result", "limit": 1, "repo": str(served["repo"])})
    assert by_name["results"][0]["path"] == by_path["results"][0]["path"] == "graphstore/store.py"


def test_batch(remote):
    outs = remote.batch([{"query": "store_parse_result", "limit": 2}, {"query": "handleSearch", "limit": 2}])
    assert len(outs) == 2
    assert outs[0]["results"][0]["symbol"] == "GraphStore.store_parse_result"
    assert outs[1]["results"][0]["symbol"] == "handleSearch"


def test_stream_yields_the_answer(remote):
    chunks = list(remote.stream({"query": "createRouter", "limit": 2}))
    assert chunks
    assert chunks[-1]["results"][0]["symbol"] == "createRouter"


def test_input_schema_and_playground(served):
    schema = httpx.get(served["url"] + "/search/input_schema", timeout=10).json()
    assert "query" in schema["properties"] and schema["required"] == ["query"]
    assert schema["properties"]["query"]["minLength"] == 1
    assert "sample_repo" in schema["properties"]["repo"]["description"]
    assert httpx.get(served["url"] + "/search/playground/", timeout=10).status_code == 200


def test_client_configurable_is_ignored(served):
    """Run settings are the server's: a client can't point the graph at another index or LLM."""
    response = post(served, "invoke", json={"input": {"query": "store_parse_result", "limit": 1},
                                             "config": {"configurable": {"repo": "/etc", "llm_base_url": "http://x"}}})
    assert response.status_code == 200
    assert response.json()["output"]["results"][0]["path"] == "graphstore/store.py"


# --------------------------------------------------------------------------- what is refused, and how


@pytest.mark.parametrize("query", ["", "   \n\t "])
def test_empty_query_is_a_4xx(served, query):
    response = invoke_status(served, {"query": query})
    assert response.status_code == 422
    assert "query" in response.json()["detail"]


def test_missing_query_is_a_422(served):
    response = invoke_status(served, {"limit": 3})
    assert response.status_code == 422
    assert response.json()["detail"] == "query: Field required"


@pytest.mark.parametrize("limit", [0, 101, -1, "many"])
def test_limit_out_of_range_is_a_422(served, limit):
    response = invoke_status(served, {"query": "store", "limit": limit})
    assert response.status_code == 422
    assert "limit" in response.json()["detail"]


def test_unknown_focus_or_field_is_a_422(served):
    assert invoke_status(served, {"query": "store", "focus": "everything"}).status_code == 422
    response = invoke_status(served, {"query": "store", "index_dir": "/tmp"})
    assert response.status_code == 422
    assert "index_dir" in response.json()["detail"]


@pytest.mark.parametrize("repo", ["../../etc", "/etc", "nope", "sample_repo/../bare", "~", "/", "."])
def test_repo_outside_the_served_set_is_a_4xx(served, repo):
    response = invoke_status(served, {"query": "password", "repo": repo})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert "not served" in detail and "sample_repo" in detail


def test_a_symlink_to_a_served_repository_is_not_followed(served, tmp_path):
    link = tmp_path / "alias"
    link.symlink_to(served["repo"])
    response = invoke_status(served, {"query": "store", "repo": str(link)})
    assert response.status_code == 422 and "is not served by this server" in response.json()["detail"]


def test_a_client_cannot_set_the_llm_url_or_index(served):
    for setting in ({"llm_base_url": "http://collector.example:11434"}, {"index_dir": "/tmp"}):
        response = invoke_status(served, {"query": "store", **setting})
        assert response.status_code == 422, setting
        assert next(iter(setting)) in response.json()["detail"]


def test_absolute_path_with_dot_dot_is_not_resolved(served):
    sneaky = str(served["bare"] / ".." / "sample_repo")
    assert invoke_status(served, {"query": "store", "repo": sneaky}).status_code == 422


def test_served_repository_without_index_is_a_404_on_every_endpoint(served):
    payload = {"query": "main", "repo": "bare"}
    for endpoint, body in (("invoke", {"input": payload}), ("batch", {"inputs": [payload]}),
                           ("stream", {"input": payload})):
        response = post(served, endpoint, json=body)
        assert response.status_code == 404, endpoint
        assert "no index" in response.json()["detail"]


def test_invalid_input_in_a_batch_is_a_422_not_a_500(served):
    response = post(served, "batch", json={"inputs": [{"query": "store"}, {"query": ""}]})
    assert response.status_code == 422


def test_body_over_one_megabyte_is_a_413(served):
    huge = {"input": {"query": "x" * 1_100_000}}
    response = post(served, "invoke", json=huge)
    assert response.status_code == 413
    assert "larger than" in response.json()["detail"]


def test_chunked_body_over_one_megabyte_is_a_413(served):
    def chunks():
        yield b'{"input": {"query": "'
        for _ in range(12):
            yield b"x" * 100_000
        yield b'"}}'

    response = post(served, "invoke", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413


@pytest.mark.parametrize("body", [b"{not json", b"", b"[1, 2", b'{"input": '])
def test_malformed_json_is_a_422(served, body):
    response = post(served, "invoke", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["detail"]


def test_remote_runnable_raises_on_a_4xx(remote):
    with pytest.raises(httpx.HTTPStatusError) as caught:
        remote.invoke({"query": "store", "repo": "/etc"})
    assert caught.value.response.status_code == 422


# --------------------------------------------------------------------------- Host / Origin (DNS rebinding)
ENDPOINTS = [("GET", "/health"), ("POST", "/search/invoke"), ("POST", "/search/stream"), ("POST", "/search/batch"),
             ("GET", "/search/input_schema"), ("GET", "/search/playground/"), ("GET", "/docs")]


def call(served, method: str, path: str, headers: dict) -> httpx.Response:
    body = {"inputs": [{"query": "store"}]} if path.endswith("batch") else {"input": {"query": "store"}}
    return httpx.request(method, served["url"] + path, headers=headers, timeout=30,
                         json=body if method == "POST" else None)


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_every_endpoint_refuses_a_foreign_host_and_origin(served, method, path):
    port = served["url"].rsplit(":", 1)[1]
    for host in (f"rebind.example:{port}", "127.0.0.1:1", "localhost"):
        response = call(served, method, path, {"Host": host})
        assert response.status_code == 421, (host, response.text)
        assert "Host" in response.json()["detail"]
    response = call(served, method, path, {"Origin": "https://rebind.example"})
    assert response.status_code == 403 and "may not call this server" in response.json()["detail"]
    loopback_page = {"Host": f"localhost:{port}", "Origin": "http://localhost:5173"}
    assert call(served, method, path, loopback_page).status_code < 400


def test_allowed_hosts_and_origins(served):
    from fastapi.testclient import TestClient

    app = create_app([str(served["repo"])], index_dirs={str(served["repo"]): str(served["index_dir"])},
                     allowed_hosts=["devbox.lan"], allowed_origins=["https://tool.example"])
    with TestClient(app, base_url="http://devbox.lan") as client:
        assert client.get("/health", headers={"Origin": "https://tool.example"}).status_code == 200
        assert client.get("/health", headers={"Host": "other.lan"}).status_code == 421
        assert client.get("/health", headers={"Origin": "https://other.example"}).status_code == 403


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.com")


def test_slow_search_is_a_504(served):
    """The time bound, with a stand-in graph that outlives it (in-process client, same app code)."""
    from fastapi.testclient import TestClient

    class SlowGraph:
        async def ainvoke(self, *args, **kwargs):
            await asyncio.sleep(5)  # the stand-in must outlive the bound: its slowness is the case under test

    app = create_app([str(served["repo"])], index_dirs={str(served["repo"]): str(served["index_dir"])},
                     timeout_s=0.2, graph=SlowGraph())
    with TestClient(app, base_url="http://127.0.0.1") as client:
        response = client.post("/search/invoke", json={"input": {"query": "store"}})
    assert response.status_code == 504
    assert "longer than 0.2s" in response.json()["detail"]


def test_run_binds_loopback_by_default_and_warns_otherwise(served, monkeypatch, capsys):
    import argparse

    import grepgraph.serve

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append(kwargs))
    monkeypatch.setenv("GREPGRAPH_INDEX_DIR", str(served["index_dir"]))
    args = argparse.Namespace(host="127.0.0.1", port=8123, repo=[str(served["repo"])])
    assert grepgraph.serve.run(args) == 0
    assert calls[-1]["host"] == "127.0.0.1" and calls[-1]["port"] == 8123
    err = capsys.readouterr().err
    assert "warning" not in err and "sample_repo" in err and "ready" in err
    assert grepgraph.serve.run(argparse.Namespace(host="0.0.0.0", port=8123, repo=[str(served["repo"])])) == 0
    assert "warning: serving on 0.0.0.0, not loopback" in capsys.readouterr().err


# --------------------------------------------------------------------------- literal / regex mode and filters


def test_literal_mode_returns_every_matching_line_and_the_count(served):
    response = invoke_status(served, {"query": "store_parse_result", "mode": "literal", "limit": 500})
    assert response.status_code == 200
    output = response.json()["output"]
    assert output["total_matches"] == len(output["results"]) >= 5
    first = output["results"][0]
    assert (first["path"], first["symbol"], first["line"]) == ("graphstore/store.py", "GraphStore.store_parse_result",
                                                               first["start_line"])


def test_filters_apply_to_ordinary_search(served):
    response = invoke_status(served, {"query": "search handler", "languages": ["go"], "limit": 3})
    assert response.status_code == 200
    assert {hit["path"] for hit in response.json()["output"]["results"]} == {"cmd/server/main.go"}


@pytest.mark.parametrize(("payload", "message"), [
    ({"query": "(unclosed", "mode": "regex"}, "invalid regex"),
    ({"query": "(?<=x)y", "mode": "regex"}, "lookarounds and backreferences are not supported"),
    ({"query": "a\x00b", "mode": "literal"}, "NUL byte"),
    ({"query": "store", "languages": ["cobol"]}, "unknown language 'cobol'"),
    ({"query": "store", "mode": "literal", "paths": ["nowhere/**"]}, 'no indexed file matches paths ["nowhere/**"]'),
    ({"query": "store", "mode": "grep"}, "mode"),
    ({"query": "store", "limit": 500}, "limit must be an integer from 1 to 100, got 500"),
    # The graph's limit and words, naming the field; never cut to fit.
    ({"query": "x" * (MAX_QUERY_CHARS + 1)}, f"query: query is {MAX_QUERY_CHARS + 1:,} characters; the limit is "
                                             f"{MAX_QUERY_CHARS:,}"),
])
def test_bad_patterns_and_filters_are_a_422(served, payload, message):
    for endpoint, body in (("invoke", {"input": payload}), ("stream", {"input": payload})):
        response = post(served, endpoint, json=body)
        assert response.status_code == 422, (endpoint, response.text)
        assert message in response.json()["detail"], response.json()["detail"]


def test_a_catastrophic_backtracking_regex_is_answered(served):
    # A backtracking engine would run into the client's timeout here (the timings: benchmarks/grep_speed.py).
    response = invoke_status(served, {"query": "(a+)+$", "mode": "regex"})
    assert response.status_code == 200
