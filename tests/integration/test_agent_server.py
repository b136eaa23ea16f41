"""The graph under the LangGraph Agent Server: ``langgraph dev`` as a subprocess, called with ``langgraph_sdk``.

``langgraph dev`` runs from the project root against a copy of ``langgraph.json`` written to a
temporary directory (see ``agent_server_config``), with the indexed fixture given through
``GREPGRAPH_REPO`` / ``GREPGRAPH_INDEX_DIR``. Its log goes to a temporary file, never into the
project (hot reload would loop), and its whole process group is ended afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from grepgraph.graphs.context import Context
from grepgraph.retrievers.store.index import CodeIndex
from langgraph_sdk import get_sync_client

from tests.processes import free_port, stop_process_group, wait_until_answering

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
FIXTURE = PROJECT / "tests" / "fixtures" / "sample_repo"
LANGGRAPH = Path(sys.executable).with_name("langgraph")
STARTUP_TIMEOUT_S = 60
GRAPH_ID = "code_search"
ALLOWED_LLM_URL = "http://127.0.0.1:9"  # listed by the deployment; the LLM is off, so nothing calls it


def project_graph_specs() -> dict[str, str]:
    config = json.loads((PROJECT / "langgraph.json").read_text())
    return {name: spec if isinstance(spec, str) else spec["path"] for name, spec in config["graphs"].items()}


def as_module_spec(spec: str) -> str:
    """``./graphs/code_search.py:graph`` -> ``grepgraph.graphs.code_search:graph`` (module specs stay as they are)."""
    target, _, variable = spec.rpartition(":")
    if "/" not in target:
        return spec
    module = Path(target).with_suffix("").as_posix().removeprefix("./").replace("/", ".")
    if not module.startswith("grepgraph."):
        module = f"grepgraph.{module}"  # graphs/, retrievers/ install as grepgraph.graphs, ...
    return f"{module}:{variable}"


def agent_server_config(destination: Path) -> Path:
    """The project's ``langgraph.json`` with absolute dependencies and module-form graph specs.

    A file-path spec makes the Agent Server import ``graphs/code_search.py`` as a top-level
    module, where its relative imports fail (``test_project_langgraph_json_loads_the_graph``).
    The module form imports the installed ``grepgraph.graphs`` package instead.
    """
    config = json.loads((PROJECT / "langgraph.json").read_text())
    config.pop("env", None)  # the test passes its own environment
    config["dependencies"] = [str((PROJECT / dep).resolve()) if dep.startswith(".") else dep
                              for dep in config.get("dependencies", ["."])]
    config["graphs"] = {name: as_module_spec(spec) for name, spec in project_graph_specs().items()}
    if "app" in config.get("http", {}):
        config["http"]["app"] = as_module_spec(config["http"]["app"])
    path = destination / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


LOAD_LIKE_THE_AGENT_SERVER = """
import importlib, importlib.util, sys
target, variable = sys.argv[1].rsplit(":", 1)
if "/" in target:  # langgraph_api.graph._graph_from_spec, file-path branch
    name = target.replace("/", "__").replace(".py", "").replace(" ", "_").lstrip(".")
    spec = importlib.util.spec_from_file_location(name, target)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
else:
    module = importlib.import_module(target)
print(type(getattr(module, variable)).__name__)
"""


def test_project_langgraph_json_loads_the_graph():
    for spec in project_graph_specs().values():
        done = subprocess.run([sys.executable, "-c", LOAD_LIKE_THE_AGENT_SERVER, spec], cwd=PROJECT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr.strip().splitlines()[-1]
        assert done.stdout.strip() == "CompiledStateGraph"


def test_project_langgraph_json_loads_the_http_app():
    config = json.loads((PROJECT / "langgraph.json").read_text())
    done = subprocess.run([sys.executable, "-c", LOAD_LIKE_THE_AGENT_SERVER, config["http"]["app"]], cwd=PROJECT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1]
    assert done.stdout.strip() == "Starlette"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> dict[str, Path]:
    """The deployment's repository (index elsewhere), a second one it allows, and one it does not."""
    root = tmp_path_factory.mktemp("agent_server")
    repo, index_dir = root / "sample_repo", root / "index"
    shutil.copytree(FIXTURE, repo)
    CodeIndex(repo, index_dir).update()
    allowed, private = root / "allowed_repo", root / "private_repo"
    for extra, function in ((allowed, "tally_allowed_widgets"), (private, "read_private_notes")):
        extra.mkdir()
        (extra / "main.py").write_text(f"def {function}(items):\n    return len(items)\n")
        CodeIndex(extra).update()
    (root / "alias").symlink_to(repo)
    return {"root": root, "repo": repo, "index_dir": index_dir, "allowed": allowed, "private": private,
            "alias": root / "alias"}


@pytest.fixture(scope="module")
def server(indexed) -> str:
    """``langgraph dev`` on a free port, until ``GET /ok`` answers; its process group is ended afterwards."""
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed (extra: grepgraph[studio])")
    port = free_port()
    config = agent_server_config(indexed["root"])
    # Run settings come only from this test; other GREPGRAPH_* variables (caches, ...) pass through.
    settings = {f"GREPGRAPH_{f.name.upper()}" for f in fields(Context)} | {"GREPGRAPH_CONFIG"}
    env = {key: value for key, value in os.environ.items() if key not in settings}
    env.update({
        "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1",
        "GREPGRAPH_REPO": str(indexed["repo"]), "GREPGRAPH_INDEX_DIR": str(indexed["index_dir"]),
        "GREPGRAPH_LLM_ENABLED": "false",
        "GREPGRAPH_ALLOWED_REPOS": str(indexed["allowed"]), "GREPGRAPH_ALLOWED_LLM_URLS": ALLOWED_LLM_URL,
    })
    log_path = indexed["root"] / "langgraph-dev.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
             "--config", str(config)],
            cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        problem = wait_until_answering(process, f"{url}/ok", STARTUP_TIMEOUT_S, interval_s=0.25)
        if problem:
            pytest.fail(f"langgraph dev {problem}:\n{tail(log_path)}")
        yield url
        assert "BlockingError" not in log_path.read_text(errors="replace"), tail(log_path)
    finally:
        stop_process_group(process)


def tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])





@pytest.fixture(scope="module")
def client(server):
    return get_sync_client(url=server)


def test_runs_wait_returns_results(client):
    out = client.runs.wait(None, GRAPH_ID, input={"query": "store_parse_result"})
    top = out["results"][0]
    assert (top["path"], top["symbol"]) == ("graphstore/store.py", "GraphStore.store_parse_result")
    assert "def store_parse_result" in top["snippet"]
    assert {"classify_intent", "finalize"} <= {entry["node"] for entry in out["trace"]}
    assert not ({"rewrite", "rerank"} & {entry["node"] for entry in out["trace"]})  # LLM disabled by env


def test_context_given_by_the_caller(client, indexed):
    out = client.runs.wait(None, GRAPH_ID, input={"query": "createRouter"},
                           context={"repo": str(indexed["repo"]), "index_dir": str(indexed["index_dir"]), "limit": 1})
    assert [result["symbol"] for result in out["results"]] == ["createRouter"]


def test_stream_updates_node_by_node(client):
    nodes = []
    for part in client.runs.stream(None, GRAPH_ID, input={"query": "handleSearch", "limit": 2},
                                   stream_mode="updates"):
        if part.event == "updates":
            nodes.extend(part.data)
    assert nodes[0] == "classify_intent" and nodes[-1] == "finalize"
    assert "retrieve" in nodes and "merge" in nodes


def test_invalid_input_fails_the_run_with_the_reason(client):
    with pytest.raises(Exception, match="query is empty"):
        client.runs.wait(None, GRAPH_ID, input={"query": "   "})


def test_assistant_schemas_describe_the_context(client):
    assistants = client.assistants.search(graph_id=GRAPH_ID)
    assert assistants
    schemas = client.assistants.get_schemas(assistants[0]["assistant_id"])
    context = schemas["context_schema"]["properties"]
    assert {"repo", "index_dir", "llm_model", "llm_enabled", "rerank_top_n"} <= set(context)
    assert context["llm_model"]["description"]
    assert "query" in schemas["input_schema"]["properties"]
    assert set(schemas["output_schema"]["properties"]) == {"results", "files", "trace", "total_matches"}
    graph = client.assistants.get_graph(assistants[0]["assistant_id"])
    assert {"classify_intent", "retrieve", "rerank", "finalize"} <= {node["id"] for node in graph["nodes"]}


# --------------------------------------------------------------------------- what a client may reach
@pytest.mark.parametrize(("settings", "message"), [
    ({"repo": "/etc"}, "'/etc' is not served by this server"),
    ({"repo": "{private}"}, "is not served by this server"),
    ({"repo": "{alias}"}, "is not served by this server"),
    ({"repo": "{allowed}/../private_repo"}, "is not served by this server"),
    ({"index_dir": "{private}/.grepgraph"}, "index_dir"),
    ({"llm_base_url": "http://collector.example:11434", "llm_enabled": True}, "llm_base_url .* is not allowed"),
    ({"chroma_url": "http://collector.example:8000"}, "chroma_url"),
])
def test_a_run_cannot_leave_what_the_deployment_allows(client, indexed, settings, message):
    context = {key: value.format(**indexed) if isinstance(value, str) else value for key, value in settings.items()}
    with pytest.raises(Exception, match=message):
        client.runs.wait(None, GRAPH_ID, input={"query": "read_private_notes"}, context=context)


def test_a_run_may_use_what_the_deployment_lists(client):
    out = client.runs.wait(None, GRAPH_ID, input={"query": "tally_allowed_widgets", "limit": 1},
                           context={"repo": "allowed_repo", "llm_base_url": ALLOWED_LLM_URL + "/"})
    assert [(result["path"], result["symbol"]) for result in out["results"]] == [("main.py", "tally_allowed_widgets")]


@pytest.mark.parametrize(("method", "path"), [("GET", "/ok"), ("GET", "/info"), ("POST", "/assistants/search"),
                                              ("POST", "/runs/wait"), ("GET", "/docs")])
def test_every_endpoint_refuses_a_foreign_host_and_origin(server, method, path):
    import httpx

    port = server.rsplit(":", 1)[1]
    body = {"assistant_id": GRAPH_ID, "input": {"query": "store"}} if path == "/runs/wait" else {}

    def status(headers: dict) -> int:
        return httpx.request(method, server + path, headers=headers, timeout=30,
                             json=body if method == "POST" else None).status_code

    assert status({"Host": f"rebind.example:{port}"}) == 421
    assert status({"Host": "127.0.0.1:1"}) == 421
    assert status({"Origin": "https://rebind.example"}) == 403
    assert status({"Host": f"localhost:{port}", "Origin": "https://smith.langchain.com"}) < 400  # Studio
