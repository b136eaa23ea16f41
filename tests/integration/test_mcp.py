"""The MCP server as an agent sees it: ``grepgraph mcp`` started by the SDK's own clients.

One real index of the sample repository (MiniLM, Chroma, BM25) in ``tmp_path``; the server is started the
way MCP clients start it (stdio, with almost no environment), and once more over streamable HTTP.
A module-scoped stdio session makes every call once; the tests below check what came back.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

from grepgraph.graphs.search_input import FIELDS, MAX_QUERY_CHARS  # noqa: E402
from grepgraph.retrievers.store.index import CodeIndex
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.types import CallToolResult  # noqa: E402

from tests.processes import free_port
from tests.waiting import wait_until

PROJECT = Path(__file__).resolve().parents[2]
FIXTURE = PROJECT / "tests" / "fixtures" / "sample_repo"
TOOLS = {"search_code", "lookup_symbol", "get_callers", "get_callees", "get_class_hierarchy", "index_status"}
QUESTION = "how are edges inserted into the graph?"
TIMEOUT_S = 120


def grepgraph_command() -> tuple[str, list[str]]:
    """The installed console script next to this interpreter, else ``python -m grepgraph.cli``."""
    script = Path(sys.executable).parent / "grepgraph"
    if script.is_file() and os.access(script, os.X_OK):
        return str(script), []
    return sys.executable, ["-m", "grepgraph.cli"]


def minimal_env(home: Path) -> dict[str, str]:
    """What an MCP client passes on: PATH and HOME (the SDK adds LOGNAME, SHELL, TERM, USER if set)."""
    home.mkdir(exist_ok=True)
    return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(home)}


def payload(result: CallToolResult) -> dict:
    """A successful call's structured result (checked against the JSON text the client also gets)."""
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    assert json.loads(text(result)) == result.structured_content
    return result.structured_content


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> dict[str, Path]:
    """An indexed copy of the sample repository (index in its default ``.grepgraph``) and an unindexed one."""
    root = tmp_path_factory.mktemp("mcp")
    indexed = root / "sample_repo"
    shutil.copytree(FIXTURE, indexed, symlinks=True)
    CodeIndex(indexed).update()
    assert (indexed / ".grepgraph" / "index.sqlite").is_file()
    unindexed = root / "fresh" / "not_indexed"
    shutil.copytree(FIXTURE, unindexed, symlinks=True)
    alias = root / "alias"
    alias.symlink_to(indexed)
    return {"indexed": indexed, "unindexed": unindexed, "root": root, "alias": alias}


CALLS: dict[str, tuple[str, dict]] = {
    "search": ("search_code", {"query": QUESTION, "limit": 5, "rewrite": False, "rerank": False}),
    "search_default": ("search_code", {"query": "load_config"}),
    "search_graph_question": ("search_code", {"query": "who calls store_parse_result?"}),
    "lookup": ("lookup_symbol", {"name": "Searcher"}),
    "lookup_unknown": ("lookup_symbol", {"name": "NoSuchThing"}),
    "callers": ("get_callers", {"name": "store_parse_result"}),
    "callees": ("get_callees", {"name": "Searcher.search"}),
    "hierarchy": ("get_class_hierarchy", {"name": "BaseParser"}),
    "status": ("index_status", {}),
    "status_by_name": ("index_status", {"repo": "sample_repo"}),
    "empty_query": ("search_code", {"query": "   "}),
    "bad_limit": ("search_code", {"query": QUESTION, "limit": 0}),
    "limit_not_a_number": ("search_code", {"query": QUESTION, "limit": "many"}),
    "bad_focus": ("search_code", {"query": QUESTION, "focus": "docs"}),
    "empty_name": ("get_callers", {"name": ""}),
    "outside_repo": ("search_code", {"query": QUESTION, "repo": "/etc"}),
    "outside_repo_status": ("index_status", {"repo": "other_project"}),
    "unindexed_search": ("search_code", {"query": QUESTION, "repo": "not_indexed"}),
    "unindexed_status": ("index_status", {"repo": "not_indexed"}),
    "unindexed_callers": ("get_callers", {"name": "parse_file", "repo": "not_indexed"}),
    "after_errors": ("lookup_symbol", {"name": "GraphStore"}),
    "literal": ("search_code", {"query": "store_parse_result", "mode": "literal", "limit": 200}),
    "regex_in_go": ("search_code", {"query": r"func \w+\(", "mode": "regex", "languages": ["go"]}),
    "scoped_search": ("search_code", {"query": "search", "paths": ["cmd/**"]}),
    "bad_regex": ("search_code", {"query": "(unclosed", "mode": "regex"}),
    "unknown_language": ("search_code", {"query": "x", "languages": ["cobol"]}),
    "glob_matches_nothing": ("search_code", {"query": "x", "mode": "literal", "paths": ["nowhere/**"]}),
    "nul_literal": ("search_code", {"query": "a\x00b", "mode": "literal"}),
    "over_long_query": ("search_code", {"query": "x" * (MAX_QUERY_CHARS + 1)}),
}


@pytest.fixture(scope="module")
def stdio_session(repos) -> dict:
    """Start ``grepgraph mcp`` over stdio with a minimal environment; list the tools and make every call."""
    command, prefix = grepgraph_command()
    indexed, unindexed = repos["indexed"], repos["unindexed"]
    # The unindexed repository is given by its path with a trailing slash: it is still the same repository.
    params = StdioServerParameters(
        command=command, args=[*prefix, "mcp", "--repo", str(indexed), "--repo", f"{unindexed}/"],
        env=minimal_env(repos["root"] / "home"), cwd=str(repos["root"]),
    )

    async def session() -> dict:
        with anyio.fail_after(TIMEOUT_S):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                init = await client.initialize()
                listed = await client.list_tools()
                calls = {label: await client.call_tool(name, arguments) for label, (name, arguments) in CALLS.items()}
                calls["by_path"] = await client.call_tool("lookup_symbol", {"name": "Searcher",
                                                                              "repo": str(indexed)})
                calls["dot_dot"] = await client.call_tool("lookup_symbol", {
                    "name": "Searcher", "repo": f"{unindexed}/../../sample_repo"})
                calls["symlink"] = await client.call_tool("lookup_symbol", {
                    "name": "Searcher", "repo": str(repos["alias"])})
                calls["home"] = await client.call_tool("index_status", {"repo": "~"})
                return {"init": init, "tools": listed.tools, "calls": calls}

    return anyio.run(session)


# --------------------------------------------------------------------------- tools listed


def test_lists_six_described_tools_with_precise_schemas(stdio_session, repos):
    assert stdio_session["init"].server_info.name == "grepgraph"
    tools = {tool.name: tool for tool in stdio_session["tools"]}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert len(tool.description) > 150, tool.name
        assert "not_indexed" in tool.description and "sample_repo" in tool.description  # served repositories
        schema = tool.input_schema
        assert schema["type"] == "object" and "repo" in schema["properties"]
        assert all(spec.get("description") for spec in schema["properties"].values()), tool.name
        assert tool.output_schema and tool.output_schema["type"] == "object"
        assert tool.annotations.read_only_hint is True
    search = tools["search_code"].input_schema
    assert search["required"] == ["query"]
    assert set(search["properties"]) == {"query", "intent", "focus", "limit", "rewrite", "rerank", "repo", "mode",
                                         "paths", "languages"}
    assert search["properties"]["limit"]["type"] == "integer"
    assert (search["properties"]["limit"]["minimum"], search["properties"]["limit"]["maximum"]) == (1, 1000)
    assert search["properties"]["mode"]["enum"] == ["auto", "literal", "regex"]
    for name in ("query", "intent", "focus", "limit", "rewrite", "rerank", "mode", "paths", "languages"):
        assert search["properties"][name]["description"] == FIELDS[name].description  # the one definition's
    assert "maxLength" not in search["properties"]["query"]  # checked by the tool, with the graph's message
    focus = next(option for option in search["properties"]["focus"]["anyOf"] if option.get("enum"))
    assert focus["enum"] == ["implementation", "tests", "all"]
    for name in ("lookup_symbol", "get_callers", "get_callees", "get_class_hierarchy"):
        assert tools[name].input_schema["required"] == ["name"]
    assert "required" not in tools["index_status"].input_schema


# --------------------------------------------------------------------------- real answers


def test_search_code_finds_where_edges_are_inserted(stdio_session):
    result = payload(stdio_session["calls"]["search"])
    assert (result["repo"], result["query"], result["answered_by"]) == ("sample_repo", QUESTION, "hybrid search")
    hits = result["results"]
    assert 1 <= len(hits) <= 5
    assert hits[0]["path"] == "graphstore/store.py"
    assert {"GraphStore.store_parse_result", "GraphStore._insert_edges"} & {hit["symbol"] for hit in hits[:3]}
    for hit in hits:
        assert set(hit) >= {"path", "start_line", "end_line", "symbol", "kind", "score", "snippet"}
        assert 1 <= hit["start_line"] <= hit["end_line"] and hit["snippet"]
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)


def test_search_code_defaults_and_graph_questions(stdio_session):
    hits = payload(stdio_session["calls"]["search_default"])["results"]
    assert hits[0]["path"] == "graphstore/config.py" and hits[0]["symbol"] == "load_config"
    answer = payload(stdio_session["calls"]["search_graph_question"])
    assert answer["answered_by"] == "symbol graph"
    assert ("graphstore/parser.py", "parse_file") in {(hit["path"], hit["symbol"]) for hit in answer["results"]}
    assert all(hit["relation"] == "callers" for hit in answer["results"])


def test_lookup_symbol_finds_the_definition(stdio_session, repos):
    result = payload(stdio_session["calls"]["lookup"])
    first = result["definitions"][0]
    assert (first["path"], first["symbol"], first["kind"]) == ("graphstore/search.py", "Searcher", "class")
    assert first["snippet"].startswith("class Searcher")
    assert "note" not in result
    assert payload(stdio_session["calls"]["by_path"])["definitions"] == result["definitions"]
    unknown = payload(stdio_session["calls"]["lookup_unknown"])
    assert unknown["definitions"] == [] and "no definition of 'NoSuchThing'" in unknown["note"]


def test_get_callers_of_store_parse_result(stdio_session):
    callers = payload(stdio_session["calls"]["callers"])["callers"]
    parse_file = [c for c in callers if (c["path"], c["symbol"]) == ("graphstore/parser.py", "parse_file")]
    assert parse_file, callers
    assert parse_file[0]["via"].endswith("store_parse_result")
    assert parse_file[0]["start_line"] <= parse_file[0]["line"] <= parse_file[0]["end_line"]


def test_get_callees_of_searcher_search(stdio_session):
    callees = payload(stdio_session["calls"]["callees"])["callees"]
    found = {(c["path"], c["symbol"]) for c in callees}
    assert {("graphstore/search.py", "tokenize"), ("graphstore/search.py", "rank")} <= found
    # Built-ins have no definition in the repository.
    assert any(c["kind"] == "external" and c["path"] == "" for c in callees)


def test_get_class_hierarchy_of_base_parser(stdio_session):
    result = payload(stdio_session["calls"]["hierarchy"])
    assert {(s["path"], s["symbol"]) for s in result["subclasses"]} == {
        ("graphstore/parser.py", "PythonParser"), ("graphstore/parser.py", "JavaScriptParser")}
    assert result["bases"] == []


def test_index_status_reports_counts(stdio_session, repos):
    status = payload(stdio_session["calls"]["status"])
    expected = CodeIndex(repos["indexed"]).status()
    assert status["name"] == "sample_repo"
    assert status["repo"] == str(repos["indexed"].resolve())
    assert status["index_dir"] == str(repos["indexed"].resolve() / ".grepgraph")
    for key in ("files", "chunks", "test_chunks", "edges", "languages", "vectors_pending"):
        assert status[key] == expected[key], key
    assert status["chunks"] > status["test_chunks"] > 0 and status["edges"] > 0
    assert status["vectors_pending"] == {"card": 0, "code": 0}
    assert status["changed_since_index"]["count"] == 0 and status["vectors_pending_total"] == 0
    assert status["service"] == {"running": False}
    assert status["served_repos"] == [str(repos["indexed"].resolve()), str(repos["unindexed"].resolve())]
    assert payload(stdio_session["calls"]["status_by_name"]) == status


def test_literal_mode_lists_every_line_with_its_enclosing_definition(stdio_session):
    result = payload(stdio_session["calls"]["literal"])
    assert result["answered_by"] == "line match"
    hits = result["results"]
    assert result["total_matches"] == len(hits) >= 5
    assert (hits[0]["path"], hits[0]["symbol"], hits[0]["kind"]) == (
        "graphstore/store.py", "GraphStore.store_parse_result", "method")  # the definition before its uses
    assert all("store_parse_result" in hit["snippet"] and hit["start_line"] <= hit["line"] <= hit["end_line"]
               for hit in hits)


def test_regex_mode_and_filters_keep_to_the_files_asked_for(stdio_session):
    hits = payload(stdio_session["calls"]["regex_in_go"])["results"]
    assert hits and {hit["path"] for hit in hits} == {"cmd/server/main.go"}
    scoped = payload(stdio_session["calls"]["scoped_search"])["results"]
    assert scoped and {hit["path"] for hit in scoped} == {"cmd/server/main.go"}


def test_bad_patterns_and_filters_are_one_line_tool_errors(stdio_session):
    assert "invalid regex '(unclosed': missing )" in error(stdio_session["calls"]["bad_regex"])
    assert "unknown language 'cobol'" in error(stdio_session["calls"]["unknown_language"])
    assert 'no indexed file matches paths ["nowhere/**"]' in error(stdio_session["calls"]["glob_matches_nothing"])
    assert "the literal contains a NUL byte" in error(stdio_session["calls"]["nul_literal"])


# --------------------------------------------------------------------------- errors


def error(result: CallToolResult) -> str:
    assert result.is_error, result
    message = text(result)
    assert "\n" not in message.strip() and "Traceback" not in message
    return message


def test_empty_query_bad_arguments_and_empty_name_are_one_line_tool_errors(stdio_session):
    assert "query is empty" in error(stdio_session["calls"]["empty_query"])
    assert "limit must be an integer from 1 to 100, got 0" in error(stdio_session["calls"]["bad_limit"])
    assert "name is empty" in error(stdio_session["calls"]["empty_name"])
    # The graph's limit and words; the query is never cut to fit.
    assert error(stdio_session["calls"]["over_long_query"]).endswith(
        f"query is {MAX_QUERY_CHARS + 1:,} characters; the limit is {MAX_QUERY_CHARS:,}")
    # Arguments that fail the input schema: one line too, naming the argument and the value.
    assert "invalid argument limit: Input should be a valid integer" in error(
        stdio_session["calls"]["limit_not_a_number"])
    assert "invalid argument focus: Input should be 'implementation', 'tests' or 'all' (got 'docs')" in error(
        stdio_session["calls"]["bad_focus"])


def test_repositories_outside_the_allowlist_are_refused(stdio_session, repos):
    message = error(stdio_session["calls"]["outside_repo"])
    assert "'/etc' is not served by this server" in message and str(repos["indexed"].resolve()) in message
    assert "'other_project' is not served" in error(stdio_session["calls"]["outside_repo_status"])
    # The rules serve uses (graphs.catalog): a path is compared as written, never resolved.
    for label in ("dot_dot", "symlink", "home"):
        assert "is not served by this server" in error(stdio_session["calls"][label]), label


def test_a_missing_index_says_how_to_build_it(stdio_session, repos):
    command = f"grepgraph index {repos['unindexed'].resolve()}"
    for label in ("unindexed_search", "unindexed_status", "unindexed_callers"):
        message = error(stdio_session["calls"][label])
        assert "no index" in message and command in message, (label, message)
    assert not (repos["unindexed"] / ".grepgraph").exists()  # asking did not create anything


def test_the_server_keeps_serving_after_errors(stdio_session):
    assert payload(stdio_session["calls"]["after_errors"])["definitions"][0]["path"] == "graphstore/store.py"


def test_a_repo_that_does_not_exist_stops_the_server_with_one_line(tmp_path):
    command, prefix = grepgraph_command()
    missing = tmp_path / "missing"
    done = subprocess.run([command, *prefix, "mcp", "--repo", str(missing)], env=minimal_env(tmp_path / "home"),
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.strip() == f"grepgraph: error: repository not found: {missing}"
    assert done.stdout == ""


# --------------------------------------------------------------------------- streamable HTTP


def wait_for_port(port: int, process: subprocess.Popen, timeout: float) -> None:
    def listening() -> bool:
        assert process.poll() is None, f"the server exited with {process.returncode}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            return False

    wait_until(listening, timeout=timeout, interval=0.2, what=f"a listener on 127.0.0.1:{port}")


def listening_addresses(port: int) -> set[str] | None:
    """IPv4 addresses with a socket listening on ``port`` (Linux ``/proc/net/tcp``; ``None`` elsewhere)."""
    table = Path("/proc/net/tcp")
    if not table.is_file():
        return None
    found = set()
    for line in table.read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


def test_streamable_http_on_loopback(repos, tmp_path):
    streamable = pytest.importorskip("mcp.client.streamable_http")
    command, prefix = grepgraph_command()
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [command, *prefix, "mcp", "--http", "--port", str(port), "--repo", str(repos["indexed"])],
            env=minimal_env(tmp_path / "home"), cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
        )
    try:
        wait_for_port(port, process, TIMEOUT_S)

        async def session() -> tuple[set[str], CallToolResult, CallToolResult]:
            with anyio.fail_after(TIMEOUT_S):
                async with streamable.streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                        ClientSession(read, write) as client:
                    await client.initialize()
                    names = {tool.name for tool in (await client.list_tools()).tools}
                    found = await client.call_tool("get_callers", {"name": "store_parse_result"})
                    refused = await client.call_tool("search_code", {"query": QUESTION, "repo": "/"})
                    return names, found, refused

        names, found, refused = anyio.run(session)
        assert names == TOOLS
        # DNS rebinding: a foreign Host or a foreign page's Origin is refused before the MCP layer.
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Accept": "application/json, text/event-stream"}
        for host in (f"rebind.example:{port}", "127.0.0.1:1"):
            assert httpx.post(f"http://127.0.0.1:{port}/mcp", json=request, headers={**headers, "Host": host},
                              timeout=10).status_code == 421
        assert httpx.post(f"http://127.0.0.1:{port}/mcp", json=request, timeout=10,
                          headers={**headers, "Origin": "https://rebind.example"}).status_code == 403
        assert ("graphstore/parser.py", "parse_file") in {(c["path"], c["symbol"]) for c in payload(found)["callers"]}
        assert "is not served by this server" in error(refused)
        assert listening_addresses(port) in ({"127.0.0.1"}, None)  # loopback only
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.returncode is not None, log.read_text()


def test_http_refuses_a_non_loopback_host(tmp_path):
    command, prefix = grepgraph_command()
    done = subprocess.run([command, *prefix, "mcp", "--http", "--host", "0.0.0.0", "--repo", str(tmp_path)],
                          env=minimal_env(tmp_path / "home"), cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.startswith("grepgraph: error: --host 0.0.0.0: the MCP server has no authentication")
