"""``grepgraph serve``: the code-search graph over HTTP with LangServe.

Routes (``create_app``)::

    POST /search/invoke      one search          {"input": {"query": "...", "limit": 5, "repo": "myrepo"}}
    POST /search/batch       several searches    {"inputs": [{...}, {...}]}
    POST /search/stream      server-sent events (one ``data`` event with the whole answer, then ``end``)
    GET  /search/input_schema, /search/output_schema, /search/playground/
    GET  /health             ``ok``, the served repositories and the state of each index

What a client may do is narrow on purpose:

- only the repositories given to :func:`create_app` are searchable, chosen with the input's
  ``repo`` by the rules every surface shares (:mod:`graphs.catalog`: a directory name or its exact
  absolute path; default: the first); anything else — ``../x``, another absolute path, an unknown
  name — is a 422;
- every request must name this server in ``Host`` (loopback, or a name given with ``--allow-host``)
  and come from no browser page or a loopback one (or ``--allow-origin``): a 421 / 403 otherwise,
  against DNS rebinding (:mod:`grepgraph.http_guard`);
- run settings (LLM URL, index location, ...) are the server's (``settings=``); LangServe drops
  any ``configurable`` a client sends, and the input model forbids unknown keys;
- request bodies over ``max_body_bytes`` (1 MB) get a 413, bodies not received within 15 s a 408,
  searches over ``timeout_s`` (30 s) a 504, and their nodes and LLM calls stop with it (the run's
  deadline, :mod:`graphs.deadline`);
  invalid input is a 422, a repository without an index a 404 — never a 500 with a traceback; errors
  name the input's fields (``paths``, ``languages``), not the command line's flags;
- the server binds 127.0.0.1 unless told otherwise, and warns when it is not on loopback.

LangServe is in maintenance mode upstream (bug fixes only, no new features). The forward path
for serving LangGraph graphs is the LangGraph Agent Server: ``langgraph dev`` reads this project's
``langgraph.json`` and serves the same ``code_search`` graph with threads, streaming modes, the
``Context`` form in Studio and the ``langgraph_sdk`` client. This module stays for callers that want
a small, stateless HTTP endpoint or a ``RemoteRunnable`` in an LCEL chain.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langserve import add_routes
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from grepgraph.graphs.catalog import RepoCatalog, RepoNotServed, ServedRepo, server_catalog
from grepgraph.graphs.deadline import SearchDeadlineExceeded
from grepgraph.graphs.nodes import InvalidSearchInput, validate_input
from grepgraph.graphs.search_input import DEFAULT_LIMIT, request_model
from grepgraph.http_guard import (
    MAX_BODY_BYTES,
    BodySizeLimit,
    HostGuard,
    HostPolicy,
    header_deadline_protocol,
    is_loopback,
)
from grepgraph.retrievers.core.errors import IndexError_
from grepgraph.retrievers.core.results import CodeResult, FileRank
from grepgraph.retrievers.grep.patterns import PatternError, compile_pattern
from grepgraph.retrievers.query.scope import Scope, ScopeError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
WILDCARD_ADDRESSES = ("0.0.0.0", "::", "")
SEARCH_TIMEOUT_S = 30.0
MAX_CONCURRENT_SEARCHES = 8
READY_RECHECK_S = 5.0


class SearchTimedOut(Exception):
    """A search ran longer than the server allows."""


class FiltersMatchNothing(Exception):
    """Path or language filters that keep no indexed file of the repository searched; ``fields`` names them."""

    def __init__(self, message: str, fields: Sequence[str]) -> None:
        super().__init__(message)
        self.fields = list(fields)


# --------------------------------------------------------------------------- input and output types
def search_request_model(catalog: RepoCatalog) -> type[BaseModel]:
    """The pydantic input type of ``/search``: what LangServe validates before the graph runs.

    The search input's own model (:func:`graphs.search_input.request_model`: every field, its limits and
    their messages) plus ``repo``, and the checks that need this server: the pattern compiles, the filters
    read, the repository is served.
    """

    class SearchRequest(request_model()):  # type: ignore[misc]
        """One code search."""

        repo: str | None = Field(None, max_length=4096, description=(
            f"Repository to search: one of {', '.join(catalog.names)} (name or absolute path). "
            f"Default: {catalog.default.name}."))

        @model_validator(mode="after")
        def _pattern_and_filters(self) -> SearchRequest:
            # Checked here, before a stream starts: afterwards an error can no longer be a status code.
            try:
                if self.mode != "auto":
                    compile_pattern(self.query, self.mode)
                Scope.of(self.paths, self.languages)
            except (PatternError, ScopeError) as error:
                raise ValueError(str(error)) from None
            return self

        @field_validator("repo")
        @classmethod
        def _served_repo(cls, value: str | None) -> str | None:
            catalog.lookup(value)
            return value

    return SearchRequest


class SearchResponse(BaseModel):
    """Ranked results and the graph's trace of decisions (literal and regex mode: and how many lines matched)."""

    results: list[CodeResult]
    # The files of ``results``, ranked where their best result ranks, with their symbols.
    files: list[FileRank] = []
    trace: list[dict[str, Any]]
    total_matches: int | None = None


# --------------------------------------------------------------------------- the runnable
def search_runnable(catalog: RepoCatalog, settings: Mapping[str, Any] | None = None,
                    timeout_s: float = SEARCH_TIMEOUT_S, max_concurrency: int = MAX_CONCURRENT_SEARCHES,
                    graph: Runnable | None = None) -> Runnable:
    """The graph behind a guard: validate, map ``repo`` to the run's context, bound the time.

    Raises :class:`RepoNotServed` / :class:`InvalidSearchInput` for bad input, ``IndexMissing`` when
    the repository has no index, :class:`SearchTimedOut` after ``timeout_s`` (async path only).
    """
    if graph is None:
        from grepgraph.graphs.code_search import graph as compiled

        graph = compiled
    server_settings = dict(settings or {})
    server_settings.pop("repo", None)
    server_settings.pop("index_dir", None)
    gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()

    def prepare(request: Any) -> tuple[dict, dict]:
        if isinstance(request, BaseModel):
            request = request.model_dump()
        if not isinstance(request, Mapping):
            raise InvalidSearchInput("input must be an object with a query")
        request = {key: value for key, value in request.items() if value is not None}
        served = catalog.lookup(request.pop("repo", None))
        validate_input(request, DEFAULT_LIMIT)
        context = {**server_settings, "repo": str(served.path), "index_dir": str(served.index_dir)}
        return request, context

    def search(request: Any, config: RunnableConfig) -> dict:
        payload, context = prepare(request)
        return graph.invoke(payload, config, context=context)

    async def asearch(request: Any, config: RunnableConfig) -> dict:
        payload, context = prepare(request)
        ends_at = time.monotonic() + timeout_s

        async def bounded() -> dict:
            loop = asyncio.get_running_loop()
            gate = gates.get(loop) or gates.setdefault(loop, asyncio.Semaphore(max_concurrency))
            async with gate:
                # Cancelling the run below does not stop its nodes, which run in worker threads: the run
                # carries what is left of the request's time, so they stop by themselves (and LLM calls
                # are cancelled) when the 504 goes out.
                bounded_context = {**context, "run_timeout_s": run_timeout(context, ends_at - time.monotonic())}
                return await graph.ainvoke(payload, config, context=bounded_context)

        try:
            return await asyncio.wait_for(bounded(), timeout_s)
        except asyncio.TimeoutError:
            raise SearchTimedOut(f"search took longer than {timeout_s:g}s and was stopped") from None

    return RunnableLambda(search, afunc=asearch, name="code_search")


def run_timeout(context: Mapping[str, Any], left_s: float) -> float:
    """The run's ``run_timeout_s``: what is left of the request's time, or the server's own setting if shorter."""
    configured = float(context.get("run_timeout_s") or 0.0)
    left_s = max(left_s, 0.001)  # 0 means "no bound"
    return min(configured, left_s) if configured > 0 else left_s


def scope_problem(entry: ServedRepo, item: Mapping[str, Any]) -> str:
    """Why an input's filters keep no indexed file of ``entry`` (empty when they are fine or absent)."""
    try:
        scope = Scope.of(item.get("paths"), item.get("languages"))
    except ScopeError:
        return ""  # malformed filters are the input model's 422
    if scope.is_everything:
        return ""
    from grepgraph.graphs.context import resolve_context
    from grepgraph.graphs.resources import get_searcher

    try:
        get_searcher(resolve_context({"repo": str(entry.path), "index_dir": str(entry.index_dir)})).scope_filter(scope)
    except ScopeError as error:
        return str(error)
    return ""


# --------------------------------------------------------------------------- the app
def _error(status: int, message: str, errors: list | None = None) -> JSONResponse:
    """``{"detail": "one readable line", "errors": [...]}`` with ``status``."""
    content: dict[str, Any] = {"detail": message}
    if errors:
        content["errors"] = errors
    return JSONResponse(status_code=status, content=content)


def _invalid(raw: Sequence[Any]) -> JSONResponse:
    """A 422 for pydantic / FastAPI errors: one readable line plus ``[{"loc", "msg", "type"}]`` (JSON-safe)."""
    errors: list[dict] = []
    lines: list[str] = []
    for item in raw:
        loc: list[str] = []
        kind = "value_error"
        msg = str(item)
        if isinstance(item, Mapping):
            loc = [str(part) for part in item.get("loc", ()) if part != "body"]
            msg = str(item.get("msg", "invalid value")).removeprefix("Value error, ")
            kind = str(item.get("type", kind))
        errors.append({"loc": loc, "msg": msg, "type": kind})
        lines.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
    return _error(422, "; ".join(lines) or "invalid request", errors)


def index_precheck(catalog: RepoCatalog):
    """A route dependency: 404 before the run starts when a requested repository has no index.

    Likewise 422 for path/language filters that keep no indexed file of it. Without it these
    surface inside the run, which on ``/stream`` is after the response has started (an SSE
    ``error`` event instead of a status code). Other bad input is left to the input model's
    validation (422).
    """
    ready_until: dict[str, float] = {}  # a ready index is re-checked at most every READY_RECHECK_S

    async def check(request: Request) -> None:
        if request.method != "POST":
            return
        try:
            body = await request.json()  # Starlette caches it for LangServe's handler
        except (ValueError, UnicodeDecodeError):
            return
        if not isinstance(body, dict):
            return
        batch = body.get("inputs")
        inputs: list[Any] = batch if isinstance(batch, list) else [body.get("input")]
        wanted: dict[str, ServedRepo] = {}
        filtered: list[tuple[ServedRepo, dict]] = []
        for item in inputs:
            if not isinstance(item, dict):
                continue
            try:
                entry = catalog.lookup(item.get("repo"))
            except RepoNotServed:
                continue
            wanted[str(entry.path)] = entry
            if item.get("paths") or item.get("languages"):
                filtered.append((entry, item))
        for key, entry in wanted.items():
            if ready_until.get(key, 0.0) > time.monotonic():
                continue
            state = await asyncio.to_thread(entry.index_state)
            if state["index"] != "ready":
                ready_until.pop(key, None)
                raise HTTPException(404, state["detail"])
            ready_until[key] = time.monotonic() + READY_RECHECK_S
        for entry, item in filtered:  # a glob that matches no indexed file: 422 before a stream starts
            problem = await asyncio.to_thread(scope_problem, entry, item)
            if problem:
                raise FiltersMatchNothing(problem, [name for name in ("paths", "languages") if item.get(name)])

    return check


def create_app(repos: Sequence[str | os.PathLike] | RepoCatalog, *,
               index_dirs: Mapping[str, str | os.PathLike] | None = None,
               settings: Mapping[str, Any] | None = None, max_body_bytes: int = MAX_BODY_BYTES,
               timeout_s: float = SEARCH_TIMEOUT_S, max_concurrency: int = MAX_CONCURRENT_SEARCHES,
               graph: Runnable | None = None, allowed_hosts: Sequence[str] = (),
               allowed_origins: Sequence[str] = ()) -> FastAPI:
    """The FastAPI app serving ``/search`` (LangServe) and ``/health`` for ``repos``.

    Args:
        repos: Repository roots clients may search, the first the default (or a ready catalog).
        index_dirs: Index location per repository root (default ``<repo>/.grepgraph``).
        settings: Server-side ``Context`` values for every search (e.g. ``{"llm_enabled": False}``);
            clients cannot change them.
        max_body_bytes: Larger request bodies get a 413.
        timeout_s: Longer searches are stopped with a 504.
        max_concurrency: Searches running at once; more wait (within ``timeout_s``).
        graph: The compiled graph (default ``graphs.code_search.graph``).
        allowed_hosts: ``Host`` names (``name`` or ``name:port``) answered besides loopback; others get a 421.
        allowed_origins: Browser origins (``https://tool.example``) allowed besides loopback pages; others a 403.
    """
    catalog = repos if isinstance(repos, RepoCatalog) else RepoCatalog(repos, index_dirs)
    app = FastAPI(title="grepgraph", version=_version(),
                  description="Code search as a LangGraph graph (LangServe endpoint; see /search/playground/).")
    app.state.catalog = catalog

    @app.exception_handler(RequestValidationError)
    async def _request_invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        return _invalid(error.errors())

    @app.exception_handler(ValidationError)
    async def _model_invalid(request: Request, error: ValidationError) -> JSONResponse:
        # LangServe's /batch validates each input outside its own error translation.
        return _invalid(error.errors(include_context=False))

    @app.exception_handler(InvalidSearchInput)
    async def _search_invalid(request: Request, error: InvalidSearchInput) -> JSONResponse:
        return _error(422, str(error))

    @app.exception_handler(RepoNotServed)
    async def _repo_not_served(request: Request, error: RepoNotServed) -> JSONResponse:
        return _error(422, str(error))

    @app.exception_handler(IndexError_)
    async def _no_index(request: Request, error: IndexError_) -> JSONResponse:
        return _error(404, str(error))

    @app.exception_handler(FiltersMatchNothing)
    async def _filters_match_nothing(request: Request, error: FiltersMatchNothing) -> JSONResponse:
        # Named as a client sends them (``paths``, ``languages``), never as the command line's flags.
        return _error(422, str(error), [{"loc": [name], "msg": str(error), "type": "no_match"}
                                        for name in error.fields])

    @app.exception_handler(SearchTimedOut)
    async def _timed_out(request: Request, error: SearchTimedOut) -> JSONResponse:
        return _error(504, str(error))

    @app.exception_handler(SearchDeadlineExceeded)
    async def _past_deadline(request: Request, error: SearchDeadlineExceeded) -> JSONResponse:
        return _error(504, str(error))

    @app.get("/health")
    async def health() -> dict:
        """Liveness plus, per served repository, whether its index is ready."""
        states = await asyncio.gather(*(asyncio.to_thread(_health_of, entry) for entry in catalog.entries))
        served = [{"name": entry.name, "path": str(entry.path), "index_dir": str(entry.index_dir), **state}
                  for entry, state in zip(catalog.entries, states)]
        return {"status": "ok", "ready": all(item["index"] == "ready" for item in served), "repos": served}

    runnable = search_runnable(catalog, settings, timeout_s, max_concurrency, graph)
    add_routes(app, runnable, path="/search", input_type=search_request_model(catalog),
               output_type=SearchResponse, dependencies=[Depends(index_precheck(catalog))])
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    app.add_middleware(HostGuard, policy=HostPolicy.allowing(allowed_hosts, allowed_origins))  # outermost: first
    return app


def _health_of(entry) -> dict:
    """An index's state and, when ready, how current it is (commit, changed files, pending vectors, service)."""
    from grepgraph.retrievers.store.index import CodeIndex

    from .status import health_summary

    state = entry.index_state()
    if state["index"] == "ready":
        state.update(health_summary(CodeIndex(entry.path, entry.index_dir)))
    return state


def _version() -> str:
    from grepgraph.retrievers import __version__

    return __version__


def run(args: Any) -> int:
    """Entry point of ``grepgraph serve`` (``args.host``, ``args.port``, ``args.repo``)."""
    import uvicorn

    from grepgraph.retrievers.core.memory import limit_malloc_arenas

    limit_malloc_arenas()

    host = getattr(args, "host", None) or DEFAULT_HOST
    port = getattr(args, "port", None) or DEFAULT_PORT
    allowed_hosts = list(getattr(args, "allow_host", None) or [])
    if not is_loopback(host) and host not in WILDCARD_ADDRESSES:
        allowed_hosts.append(host)  # the address it was told to listen on is its name too
    app = create_app(server_catalog(getattr(args, "repo", None) or []), allowed_hosts=allowed_hosts,
                     allowed_origins=getattr(args, "allow_origin", None) or ())
    catalog: RepoCatalog = app.state.catalog
    if not is_loopback(host):
        sys.stderr.write(f"grepgraph: warning: serving on {host}, not loopback: anyone who can reach this "
                         f"port can search {', '.join(catalog.names)}. There is no authentication.\n")
        if not allowed_hosts:
            sys.stderr.write("grepgraph: requests are answered only for Host localhost/127.0.0.1/[::1]; "
                             "name the others with --allow-host\n")
    for entry in catalog.entries:
        state = entry.index_state()
        note = "ready" if state["index"] == "ready" else state["detail"]
        sys.stderr.write(f"grepgraph: serving {entry.name} ({entry.path}): {note}\n")
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"grepgraph: playground at http://{shown}:{port}/search/playground/\n")
    uvicorn.run(app, host=host, port=port, log_level="info", http=header_deadline_protocol())
    return 0
