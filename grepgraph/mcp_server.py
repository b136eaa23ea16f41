"""The MCP server: grepgraph's search and symbol graph as tools for coding agents.

    grepgraph mcp --repo ~/src/project            # stdio (what Claude Desktop and most agents start)
    grepgraph mcp --repo a --repo b --http         # streamable HTTP on http://127.0.0.1:8765/mcp

Six read-only tools: ``search_code`` (the full graph: hybrid search, graph questions,
selective LLM rewrite and rerank), ``lookup_symbol``, ``get_callers``, ``get_callees``,
``get_class_hierarchy`` and ``index_status``. Each may only read the repositories given
with ``--repo``, named by the rules every surface shares (:mod:`graphs.catalog`). Anything a
caller can fix (no index yet, an empty query, a bad limit, a repository that is not served)
comes back as a tool error with one line saying what to do. Over HTTP, requests must name
the server in ``Host`` and come from no browser page or a loopback one, and each is bounded in
size and time (:mod:`grepgraph.http_guard`).

An MCP client starts the server with little more than ``PATH`` and ``HOME``, so the
repositories come from the command line, and the graph's settings from its defaults (or a
``grepgraph.toml`` / ``GREPGRAPH_*`` if present).
"""

from __future__ import annotations

import argparse
import sqlite3
from typing import Annotated, Any, Literal, cast

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError
from typing_extensions import NotRequired, TypedDict

from grepgraph.graphs.catalog import RepoCatalog, RepoNotServed, ServedRepo, server_catalog
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.context import resolve_context
from grepgraph.graphs.nodes import InvalidSearchInput, validate_input
from grepgraph.graphs.resources import get_searcher
from grepgraph.graphs.search_input import DEFAULT_LIMIT, with_search_parameters
from grepgraph.graphs.state import SearchState
from grepgraph.http_guard import BodySizeLimit, HostGuard, HostPolicy, RequestDeadline, header_deadline_protocol
from grepgraph.retrievers import __version__
from grepgraph.retrievers.codegraph.symbols import SymbolGraph, SymbolRef
from grepgraph.retrievers.core.deadline import SearchDeadlineExceeded
from grepgraph.retrievers.core.errors import IndexError_
from grepgraph.retrievers.core.memory import limit_malloc_arenas
from grepgraph.retrievers.core.results import CodeResult, FileRank
from grepgraph.retrievers.store.index import CodeIndex
from grepgraph.status import index_report

SERVER_NAME = "grepgraph"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_NAME_CHARS = 300
DEFINITION_SNIPPET_LINES = 12
# Over HTTP, a tool call answered later gets an error instead (serve's searches get 30 s; an agent's call may
# wait for the LLM stages). The search itself stops a little earlier, so its error is the answer.
HTTP_REQUEST_TIMEOUT_S = 60.0
SEARCH_MARGIN_S = 5.0
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

# --------------------------------------------------------------------------- parameter types
Repo = Annotated[
    str | None,
    Field(description="Which served repository to use: its directory name or its absolute path as served "
                      "(no `..`, `~` or relative paths). Omit to use the first one. Only repositories the server "
                      "was started with are allowed."),
]
SymbolName = Annotated[
    str,
    Field(description="A function, method or class name: bare (`store_parse_result`) or qualified "
                      "(`GraphStore.store_parse_result`, `pkg.mod.Class`). Case-insensitive."),
]


# --------------------------------------------------------------------------- result types
class SearchCodeResult(TypedDict):
    """What ``search_code`` returns (``total_matches``: matching lines, literal and regex mode only)."""

    repo: str
    query: str
    answered_by: Literal["hybrid search", "symbol graph", "line match"]
    results: list[CodeResult]
    # The files of ``results``, ranked where their best result ranks, with their symbols (the files to change).
    files: list[FileRank]
    total_matches: NotRequired[int]
    # The index generation the answer was read from: answers from one generation are consistent.
    index_generation: NotRequired[str]


class Definition(TypedDict):
    """Where a symbol is defined, with its first lines."""

    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    snippet: str


class Reference(TypedDict):
    """A symbol related to the one asked about, and the line where the relation is written."""

    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    line: int
    via: str
    resolution: NotRequired[str]


class LookupResult(TypedDict):
    """What ``lookup_symbol`` returns."""

    repo: str
    name: str
    definitions: list[Definition]
    note: NotRequired[str]


class CallersResult(TypedDict):
    """What ``get_callers`` returns."""

    repo: str
    name: str
    callers: list[Reference]
    note: NotRequired[str]


class CalleesResult(TypedDict):
    """What ``get_callees`` returns."""

    repo: str
    name: str
    callees: list[Reference]
    note: NotRequired[str]


class HierarchyResult(TypedDict):
    """What ``get_class_hierarchy`` returns."""

    repo: str
    name: str
    bases: list[Reference]
    subclasses: list[Reference]
    note: NotRequired[str]


class IndexStatus(TypedDict, total=False):
    """What ``index_status`` returns (the fields of ``grepgraph status --json``)."""

    name: str
    repo: str
    index_dir: str
    files: int
    chunks: int
    test_chunks: int
    edges: int
    languages: dict[str, int]
    views: list[str]
    vectors_pending: dict[str, int]
    test_vectors: bool
    chroma_url: str
    settings: dict[str, Any]
    query_embedding: str  # what embeds a query: the code models' query tower, else the embedding model itself
    settings_match: bool
    settings_changes: dict[str, Any]  # what the next `grepgraph index` would change, and why
    versions: dict[str, str]
    updated_at: float
    indexed_commit: dict[str, str]  # the git HEAD the last `grepgraph index` (or the watching service) saw
    head: dict[str, str]  # the HEAD now
    changed_since_index: dict[str, Any]  # files added / modified / removed since, a few paths
    vectors_pending_total: int
    service: dict[str, Any]  # the resident search service: running, watching, searches
    served_repos: list[str]


# --------------------------------------------------------------------------- helpers
def _context(repo: ServedRepo):
    try:
        return resolve_context({"repo": str(repo.path), "index_dir": str(repo.index_dir)})
    except ValueError as error:  # a broken grepgraph.toml or GREPGRAPH_* value
        raise ToolError(f"invalid grepgraph settings: {error}") from None


def _searcher(repo: ServedRepo):
    context = _context(repo)
    try:
        return get_searcher(context)
    except IndexError_ as error:
        raise ToolError(str(error)) from None
    except sqlite3.DatabaseError as error:
        raise ToolError(f"the index of {repo.path} is unreadable ({error}); rebuild it: "
                        f"grepgraph index --rebuild {repo.path}") from None


def _check_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ToolError("name is empty: pass a function, method or class name such as `GraphStore.save`")
    if len(name) > MAX_NAME_CHARS:
        raise ToolError(f"name is {len(name)} characters; a symbol name has at most {MAX_NAME_CHARS}")
    return name


def _reference(ref: SymbolRef) -> Reference:
    return {"path": ref.path, "symbol": ref.symbol, "kind": ref.kind, "start_line": ref.start_line,
            "end_line": ref.end_line, "line": ref.line or ref.start_line, "via": ref.via,
            **({"resolution": ref.resolution} if ref.resolution else {})}  # type: ignore[typeddict-item]


def _unknown(name: str, repo: ServedRepo) -> str:
    return f"no definition of {name!r} in {repo.name}; search_code finds code by description or partial name"


def _first_lines(text: str, count: int = DEFINITION_SNIPPET_LINES) -> str:
    return "\n".join(text.splitlines()[:count])


# --------------------------------------------------------------------------- the server
class _OneLineErrorServer(MCPServer):
    """An :class:`MCPServer` that reports arguments failing the input schema in one line."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:  # noqa: D102
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if not isinstance(error.__cause__, ValidationError):
                raise
            problems = []
            for item in error.__cause__.errors():
                where = ".".join(str(part) for part in item["loc"]) or "arguments"
                given = "" if item["type"] == "missing" else f" (got {repr(item.get('input'))[:60]})"
                problems.append(f"{where}: {item['msg']}{given}")
            raise ToolError(f"Error executing tool {name}: invalid argument {'; '.join(problems)}") from error.__cause__


def _target(catalog: RepoCatalog, repo: str | None) -> ServedRepo:
    """The served repository a tool call names (the rules of :mod:`graphs.catalog`), else a tool error."""
    try:
        return catalog.lookup(repo)
    except RepoNotServed as error:
        raise ToolError(str(error)) from None


def create_server(repos: list[str], run_timeout_s: float = 0.0) -> MCPServer:
    """An MCP server whose tools search ``repos`` (paths; default: the deployment's repository or the cwd).

    ``run_timeout_s``: a search stops after this long (or the configured ``run_timeout_s`` if shorter); 0: no bound.
    """
    catalog = server_catalog(repos)
    repos_note = f"Served repositories: {catalog.listing()}. `repo` defaults to {catalog.default.name}."
    server = _OneLineErrorServer(
        SERVER_NAME,
        version=__version__,
        instructions=(
            "Code search over local repositories. Start with search_code for questions in words; use "
            "lookup_symbol, get_callers, get_callees and get_class_hierarchy once you know a symbol's name. "
            + repos_note
        ),
        log_level="WARNING",
    )

    @server.tool(annotations=READ_ONLY, description=(
        "Find code in a repository from a natural-language question, an identifier, an error message or a "
        "whole issue report. Returns up to `limit` ranked results, each with path, start_line, end_line, "
        "symbol, kind, score and a snippet. Runs grepgraph's full search graph: BM25 + embeddings fused, "
        "symbol-name and file-mention boosts, tests demoted unless asked for, and an optional local-LLM "
        "query rewrite and rerank when the query is vague. Graph questions phrased in words (`who calls X`, "
        "`subclasses of Y`, `what imports Z`) are answered from the symbol graph (answered_by = "
        "'symbol graph'). A line or message pasted from the code ranks the definition containing it first. "
        "mode `literal` / `regex` (RE2 syntax) returns every matching line instead, like grep but ranked: "
        "each result has `line` and its enclosing symbol, definitions of the text before uses, and "
        "`total_matches` counts the lines. `paths` (globs such as `src/**`) and `languages` restrict any "
        "mode to part of the repository. Use this first when you don't know where something lives; when you "
        "already know the exact symbol name, lookup_symbol / get_callers / get_callees / "
        "get_class_hierarchy are exact and faster. " + repos_note
    ))
    # The search input's fields, described and limited once (graphs/search_input.py), then ``repo``.
    @with_search_parameters(("query", "intent", "focus", "limit", "rewrite", "rerank", "mode", "paths", "languages"))
    def search_code(repo: Repo = None, **search: Any) -> SearchCodeResult:
        target = _target(catalog, repo)
        query = search["query"]
        if not isinstance(query, str) or not query.strip():
            raise ToolError("query is empty: pass a question, a symbol name or an error message to search for")
        request = {key: value for key, value in search.items() if value is not None and value != ""}
        try:
            validate_input(cast(SearchState, request), DEFAULT_LIMIT)  # the graph's limits and messages
        except InvalidSearchInput as error:
            raise ToolError(str(error)) from None
        _searcher(target)  # a missing index is reported before the graph runs
        context: dict[str, Any] = {"repo": str(target.path), "index_dir": str(target.index_dir)}
        if run_timeout_s > 0:
            configured = resolve_context(context).run_timeout_s
            context["run_timeout_s"] = min(configured, run_timeout_s) if configured > 0 else run_timeout_s
        try:
            out = graph.invoke(request, context=context)
        except (InvalidSearchInput, SearchDeadlineExceeded) as error:
            raise ToolError(str(error)) from None
        except IndexError_ as error:
            raise ToolError(str(error)) from None
        results = out.get("results") or []
        by_graph = any(entry.get("node") == "lookup_symbol_graph" and entry.get("decision") != "fall through to search"
                       for entry in out.get("trace") or [])
        answer: SearchCodeResult = {
            "repo": target.name, "query": query, "results": results,
            "files": out["files"],
            "answered_by": "line match" if "total_matches" in out else "symbol graph" if by_graph else "hybrid search"}
        if "total_matches" in out:
            answer["total_matches"] = out["total_matches"]
        generations = {entry["generation"] for entry in out.get("trace") or [] if entry.get("generation")}
        if len(generations) == 1:
            answer["index_generation"] = generations.pop()
        return answer

    @server.tool(annotations=READ_ONLY, description=(
        "Where a function, method or class is defined. Returns every definition whose name matches (path, "
        "qualified symbol, kind, start_line, end_line and its first lines), implementation before tests. "
        "Exact: needs the name (bare or qualified); for a description in words use search_code. " + repos_note
    ))
    def lookup_symbol(name: SymbolName, repo: Repo = None) -> LookupResult:
        target, name = _target(catalog, repo), _check_name(name)
        searcher = _searcher(target)
        with searcher.connection_lock():
            graph = SymbolGraph(searcher.connection)
            # the definition's own text, not a same-named module remainder's (``finalize`` in finalize.ts)
            definitions: list[Definition] = [
                {"path": ref.path, "symbol": ref.symbol, "kind": ref.kind, "start_line": ref.start_line,
                 "end_line": ref.end_line, "snippet": _first_lines(graph.text_at(ref)[0])}
                for ref in graph.definitions(name)
            ]
        result: LookupResult = {"repo": target.name, "name": name, "definitions": definitions}
        if not definitions:
            result["note"] = _unknown(name, target)
        return result

    @server.tool(annotations=READ_ONLY, description=(
        "Who calls a function or method: one entry per call site, naming the function, method or module the "
        "call is made from, with the line of the call (`line`) and the call as written (`via`, e.g. "
        "`self.store.save`). `resolution` is "
        "`resolved` when the code says the call reaches this definition (`self.m()`, an imported name, a "
        "constructor) — those come first — and `by name only` for a same-named call on an object whose type "
        "is unknown (check those by reading the line). Qualify the name (`Client.send`) to leave out other "
        "classes' methods. Use before changing a function's signature or behaviour; for what the function "
        "itself calls use get_callees. " + repos_note
    ))
    def get_callers(name: SymbolName, repo: Repo = None) -> CallersResult:
        target, name = _target(catalog, repo), _check_name(name)
        searcher = _searcher(target)
        with searcher.connection_lock():
            symbols = SymbolGraph(searcher.connection)
            callers = [_reference(ref) for ref in symbols.callers(name)]
            known = bool(callers) or bool(symbols.definitions(name))
        result: CallersResult = {"repo": target.name, "name": name, "callers": callers}
        if not known:
            result["note"] = _unknown(name, target)
        return result

    @server.tool(annotations=READ_ONLY, description=(
        "What a function or method calls, in this order by `resolution`: `resolved` definitions in the "
        "repository (path and lines), `by name only` same-named definitions for calls on an object whose "
        "type is unknown, then `external` (library) and `built-in` calls, which have kind `external` and "
        "an empty path. `line` is where the call is made. The opposite direction is get_callers. "
        + repos_note
    ))
    def get_callees(name: SymbolName, repo: Repo = None) -> CalleesResult:
        target, name = _target(catalog, repo), _check_name(name)
        searcher = _searcher(target)
        with searcher.connection_lock():
            symbols = SymbolGraph(searcher.connection)
            callees = [_reference(ref) for ref in symbols.callees(name)]
            known = bool(symbols.definitions(name))
        result: CalleesResult = {"repo": target.name, "name": name, "callees": callees}
        if not known:
            result["note"] = _unknown(name, target)
        return result

    @server.tool(annotations=READ_ONLY, description=(
        "The class hierarchy around a class (or a Go/Rust type or interface): `bases` are what it inherits "
        "from or implements (resolved to definitions where possible, else kind `external`), `subclasses` "
        "are the classes and types that inherit from or implement it, directly. Use to find every "
        "implementation of an interface or base class. " + repos_note
    ))
    def get_class_hierarchy(name: SymbolName, repo: Repo = None) -> HierarchyResult:
        target, name = _target(catalog, repo), _check_name(name)
        searcher = _searcher(target)
        with searcher.connection_lock():
            symbols = SymbolGraph(searcher.connection)
            bases = [_reference(ref) for ref in symbols.bases(name)]
            subclasses = [_reference(ref) for ref in symbols.subclasses(name)]
            known = bool(bases or subclasses) or bool(symbols.definitions(name))
        result: HierarchyResult = {"repo": target.name, "name": name, "bases": bases, "subclasses": subclasses}
        if not known:
            result["note"] = _unknown(name, target)
        return result

    @server.tool(annotations=READ_ONLY, description=(
        "What is indexed in a repository: file, chunk, test-chunk and edge counts, languages, embedded "
        "views, vectors still pending, build settings and versions, and `updated_at` (Unix time of the last "
        "`grepgraph index`), the git commit the index reflects and the files changed since, and whether a "
        "service watches the repository. `served_repos` lists every repository this server may search. Use it to check "
        "that a repository is indexed and fresh before trusting an empty search; if it is not, the error "
        "says which `grepgraph index` command to run. " + repos_note
    ))
    def index_status(repo: Repo = None) -> IndexStatus:
        target = _target(catalog, repo)
        context = _context(target)
        try:
            status = index_report(CodeIndex(context.repo, context.index_dir or None))
        except IndexError_ as error:
            raise ToolError(str(error)) from None
        except sqlite3.DatabaseError as error:
            raise ToolError(f"the index of {target.path} is unreadable ({error}); rebuild it: "
                            f"grepgraph index --rebuild {target.path}") from None
        return {"name": target.name, **status, "served_repos": [str(r.path) for r in catalog.entries]}  # type: ignore[typeddict-item]

    return server


def run(args: argparse.Namespace) -> int:
    """``grepgraph mcp``: serve over stdio, or streamable HTTP on loopback with ``--http``."""
    http = bool(getattr(args, "http", False))
    host = getattr(args, "host", None) or "127.0.0.1"
    if http and host not in LOOPBACK_HOSTS:
        raise ValueError(f"--host {host}: the MCP server has no authentication and only listens on loopback "
                         f"({', '.join(LOOPBACK_HOSTS)})")
    http_only = [flag for flag in ("allow_host", "allow_origin") if getattr(args, flag, None)]
    if http_only and not http:
        raise ValueError(f"--{http_only[0].replace('_', '-')} applies to --http only")
    limit_malloc_arenas()
    server = create_server(args.repo or [], HTTP_REQUEST_TIMEOUT_S - SEARCH_MARGIN_S if http else 0.0)
    if http:
        serve_http(server, host, args.port, HostPolicy.allowing(getattr(args, "allow_host", None) or (),
                                                                getattr(args, "allow_origin", None) or ()))
    else:
        server.run("stdio")
    return 0


def serve_http(server: MCPServer, host: str, port: int, policy: HostPolicy) -> None:
    """Streamable HTTP behind the same ``Host`` / ``Origin`` guard and request limits as ``grepgraph serve``."""
    import uvicorn

    uvicorn.run(http_app(server, host, policy), host=host, port=port, log_level="warning",
                http=header_deadline_protocol())


def http_app(server: MCPServer, host: str, policy: HostPolicy, timeout_s: float = HTTP_REQUEST_TIMEOUT_S) -> Any:
    """The streamable HTTP app, its requests' bodies bounded as serve's are, each answered within ``timeout_s``."""
    # The SDK's own check (any port, 421/403) is replaced by the shared one, which also pins the port.
    app = server.streamable_http_app(
        host=host, transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    return HostGuard(BodySizeLimit(RequestDeadline(app, timeout_s)), policy)
