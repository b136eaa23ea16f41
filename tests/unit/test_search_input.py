"""The search input is defined once: every interface takes the same fields and refuses the same input the same way.

A query over the limit is refused, never cut, with one message naming the limit: by the graph, serve's
request model (its 422), the MCP tool, the command line (exit 2, one line), the LangChain retriever and
the Searcher itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import get_type_hints

import pytest
from grepgraph.graphs.catalog import server_catalog
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.nodes import InvalidSearchInput, validate_input
from grepgraph.graphs.retriever import GrepGraphRetriever
from grepgraph.graphs.search_input import (
    FIELDS,
    MAX_QUERY_CHARS,
    SEARCH_FIELDS,
    field_problem,
    limit_problem,
    request_model,
)
from grepgraph.graphs.state import SearchInput
from grepgraph.retrievers.query.limits import QueryTooLong
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from grepgraph.mcp_server import create_server
from grepgraph.serve import _invalid, search_request_model
from tests.conftest import isolated_settings, lexical_searcher

GREPGRAPH = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "grepgraph"
TOO_LONG = "x" * (MAX_QUERY_CHARS + 1)
MESSAGE = f"query is {MAX_QUERY_CHARS + 1:,} characters; the limit is {MAX_QUERY_CHARS:,}"


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory):
    with isolated_settings(tmp_path_factory):
        yield


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository without an index: every refusal below comes before the index is read."""
    (tmp_path / "main.py").write_text("def main():\n    return 0\n")
    return tmp_path


# --------------------------------------------------------------------------- one definition
def test_the_graphs_typed_dict_has_the_definitions_fields_and_types():
    hints = get_type_hints(SearchInput)
    assert list(hints) == [spec.name for spec in SEARCH_FIELDS]
    assert {name: hints[name] for name in hints} == {spec.name: spec.annotation for spec in SEARCH_FIELDS}
    assert graph.get_input_jsonschema()["required"] == [spec.name for spec in SEARCH_FIELDS if spec.required]


def test_every_field_is_described_and_the_limits_are_in_the_descriptions():
    for spec in SEARCH_FIELDS:
        assert len(spec.description) > 40, spec.name
    assert f"{MAX_QUERY_CHARS:,}" in FIELDS["query"].description
    assert "4,000" in FIELDS["intent"].description and "1-100" in FIELDS["limit"].description


def test_serve_and_the_mcp_tool_describe_each_field_with_the_definitions_words(repo):
    serve_schema = search_request_model(server_catalog([str(repo)])).model_json_schema()["properties"]
    tools = asyncio.run(create_server([str(repo)]).list_tools())
    mcp_schema = next(tool for tool in tools if tool.name == "search_code").input_schema["properties"]
    for name, spec in FIELDS.items():
        assert serve_schema[name]["description"] == spec.description
        if name in mcp_schema:
            assert mcp_schema[name]["description"] == spec.description
    assert set(serve_schema) == {*FIELDS, "repo"}
    retriever_fields = GrepGraphRetriever.model_fields
    for name in ("limit", "focus", "intent", "mode", "paths", "languages"):
        assert retriever_fields[name].description == FIELDS[name].description


@pytest.mark.parametrize(("name", "value", "message"), [
    ("query", TOO_LONG, MESSAGE),
    ("intent", "i" * 4001, "intent is 4,001 characters; the limit is 4,000"),
    ("passage", TOO_LONG, f"passage is {MAX_QUERY_CHARS + 1:,} characters; the limit is {MAX_QUERY_CHARS:,}"),
    ("keywords", ["k"] * 65, "65 keywords; the limit is 64"),
    ("concepts", ["c" * 201], "a concept is 201 characters; the limit is 200"),
    ("paths", [f"d{n}/**" for n in range(51)], "51 path filters; the limit is 50"),
])
def test_the_graph_and_serve_refuse_a_field_over_its_limit_with_the_same_message(repo, name, value, message):
    assert field_problem(name, value) == message
    request = {"query": "edges", name: value}
    with pytest.raises(InvalidSearchInput) as refused:
        validate_input(request, 10)
    assert str(refused.value) == message
    with pytest.raises(ValidationError) as invalid:
        search_request_model(server_catalog([str(repo)]))(**request)
    assert [error["loc"] for error in invalid.value.errors()] == [(name,)]
    assert json.loads(_invalid(invalid.value.errors()).body)["detail"] == f"{name}: {message}"


def test_values_at_the_limits_are_accepted():
    assert not field_problem("query", "x" * MAX_QUERY_CHARS)
    assert not field_problem("keywords", ["k" * 200] * 64)
    request_model()(query="x" * MAX_QUERY_CHARS, limit=1000, mode="regex")


@pytest.mark.parametrize(("limit", "mode", "message"), [
    (101, "auto", "limit must be an integer from 1 to 100, got 101"),
    (0, "auto", "limit must be an integer from 1 to 100, got 0"),
    (1001, "literal", "limit must be an integer from 1 to 1000, got 1001"),
    (-1, "regex", "limit must be an integer from 1 to 1000, got -1"),
])
def test_a_limit_out_of_its_modes_range_has_one_message(limit, mode, message):
    assert limit_problem(limit, mode) == message
    with pytest.raises(InvalidSearchInput, match=message):
        validate_input({"query": "edges", "mode": mode, "limit": limit}, 10)
    with pytest.raises(ValidationError, match=message):
        request_model()(query="edges", mode=mode, limit=limit)
    with pytest.raises(ValidationError, match=message):
        GrepGraphRetriever(mode=mode, limit=limit)


# --------------------------------------------------------------------------- a query over the limit, everywhere
@pytest.mark.parametrize("mode", ["auto", "literal", "regex"])
def test_the_graph_refuses_an_over_long_query(repo, mode):
    with pytest.raises(InvalidSearchInput) as refused:
        graph.invoke({"query": TOO_LONG, "mode": mode}, context={"repo": str(repo), "llm_enabled": False})
    assert str(refused.value) == MESSAGE


def test_serve_answers_an_over_long_query_with_a_422_naming_the_field(repo):
    with pytest.raises(ValidationError) as invalid:
        search_request_model(server_catalog([str(repo)]))(query=TOO_LONG)
    response = _invalid(invalid.value.errors())
    assert response.status_code == 422
    body = json.loads(response.body)
    assert body["detail"] == f"query: {MESSAGE}"
    assert body["errors"] == [{"loc": ["query"], "msg": MESSAGE, "type": "value_error"}]


def test_the_mcp_tool_refuses_an_over_long_query_with_a_tool_error(repo):
    server = create_server([str(repo)])
    with pytest.raises(ToolError) as refused:
        asyncio.run(server.call_tool("search_code", {"query": TOO_LONG}))
    assert str(refused.value).endswith(MESSAGE) and "\n" not in str(refused.value)


def test_the_command_line_refuses_an_over_long_query_in_one_line(repo):
    env = {name: value for name, value in os.environ.items() if not name.startswith("GREPGRAPH_")}
    done = subprocess.run([str(GREPGRAPH), "search", TOO_LONG, "--repo", str(repo), "--no-daemon"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == f"grepgraph: error: {MESSAGE}\n"


def test_the_retriever_refuses_an_over_long_query(repo):
    with pytest.raises(InvalidSearchInput) as refused:
        GrepGraphRetriever(repo=str(repo), context={"llm_enabled": False}).invoke(TOO_LONG)
    assert str(refused.value) == MESSAGE


def test_the_searcher_refuses_an_over_long_query_and_reads_all_of_one_within_it(tmp_path):
    files = {"zoo/animals.py": "def zebra_unicorn_count():\n    return 2\n",
             "app/main.py": "def main():\n    return 0\n"}
    with lexical_searcher(tmp_path, files) as searcher:
        with pytest.raises(QueryTooLong) as refused:
            searcher.search(TOO_LONG, limit=3, dense=False)
        assert str(refused.value) == MESSAGE
        # The only word that names code comes last, far past where a cut would have stopped reading.
        query = "lorem ipsum " * ((MAX_QUERY_CHARS - 100) // 12) + "zebra_unicorn_count"
        hits, _ = searcher.search(query, limit=3, dense=False)
        assert hits and hits[0].symbol == "zebra_unicorn_count"


def test_the_documents_state_the_limit_the_code_enforces():
    root = Path(__file__).resolve().parents[2]
    for document in ("README.md", "docs/usage.md"):
        assert f"at most {MAX_QUERY_CHARS:,} characters" in (root / document).read_text(), document
