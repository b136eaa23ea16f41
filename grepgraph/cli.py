"""The ``grepgraph`` command: index, search, status, init, serve, mcp.

Errors a user can act on are printed as one line (``grepgraph: error: ...``) with exit
status 2; nothing prints a traceback unless ``GREPGRAPH_DEBUG=1``. Settings the flags don't
give come from :mod:`retrievers.core.settings` (environment, ``grepgraph.toml``, the index's own).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from grepgraph.graphs.search_input import (
    FIELDS,
    FOCUS_VALUES,
    MAX_LIMIT,
    MAX_MATCH_LIMIT,
    MAX_QUERY_CHARS,
    field_problem,
)
from grepgraph.retrievers import __version__
from grepgraph.retrievers.core.errors import no_index_yet
from grepgraph.retrievers.core.results import rank_files
from grepgraph.retrievers.core.run_settings import default_repo
from grepgraph.retrievers.core.service_settings import resolve_service_settings
from grepgraph.retrievers.core.settings import debug_enabled, outside_value

from .logs import configure_logging
from .result_text import result_heading, snippet_lines
from .service_client import locate_index

EXIT_USAGE = 2
FILE_SYMBOLS_SHOWN = 4  # ``search --files``: the best few definitions named after each file


class CLIError(Exception):
    """A one-line error for the user."""


def _repo_path(value: str | None) -> Path:
    path = Path(value or default_repo()).expanduser()
    if not path.exists():
        raise CLIError(f"repository not found: {path}")
    if not path.is_dir():
        raise CLIError(f"not a directory: {path}")
    return path.resolve()


def _settings_from(args: argparse.Namespace, repo: Path):
    """The build settings: the flags, else the environment and grepgraph.toml, else the index's own, else defaults."""
    from grepgraph.retrievers.core.index_settings import resolve_index_settings
    from grepgraph.retrievers.store.index import CodeIndex

    flags = {"bm25_backend": args.bm25_backend, "views": args.views, "embed_tests": args.embed_tests,
             "embedding_model": args.embedding}
    settings, _ = resolve_index_settings(repo, flags, stored=CodeIndex(repo, args.index_dir).stored_settings())
    return settings


def cmd_index(args: argparse.Namespace) -> int:
    """Build or update the index of a repository."""
    from grepgraph.retrievers.store.index import CodeIndex

    from .status import pending_vectors

    repo = _repo_path(args.path)
    if not (args.index_dir or args.separate):
        repo = _enclosing_repository(repo)
    chroma_url = args.chroma_url if args.chroma_url is not None else outside_value("chroma_url", repo)
    index = CodeIndex(repo, args.index_dir, settings=_settings_from(args, repo), chroma_url=chroma_url)
    progress, close = _progress_reporter(args.json or args.quiet, lambda: pending_vectors(index))
    try:
        summary = index.update(progress=progress, rebuild=args.rebuild,
                               embed=not (args.no_embed or args.vectors_later), wait_for_lock=args.wait)
    finally:
        close()
    handed_over = (_hand_vectors_to_service(repo, index.index_dir)
                   if args.vectors_later and summary.vectors_pending else "")
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
        return 0
    chunks_per_s = summary.chunks_added / summary.seconds if summary.seconds else 0.0
    print(f"indexed {repo} in {summary.seconds:.1f}s" + (" (rebuilt)" if summary.rebuilt else ""))
    print(f"  files:   {summary.files} ({summary.files_changed} changed, {summary.files_removed} removed,"
          f" {summary.parse_errors} with parse errors)")
    print(f"  chunks:  {summary.chunks} ({summary.chunks_added} new, {chunks_per_s:.0f}/s), edges: {summary.edges}")
    embedded = summary.phases.get("embed")
    rate = f" ({summary.vectors_embedded / embedded:.1f}/s)" if embedded and summary.vectors_embedded else ""
    print(f"  vectors: {summary.vectors_embedded} embedded{rate}, {summary.vectors_pending} pending{handed_over}")
    for line in _skipped_lines(summary.skipped, summary.skipped_paths, named=args.verbose > 0):
        print(line)
    return 0


def _skipped_lines(counts: dict[str, int], paths: dict[str, list[str]], named: bool) -> list[str]:
    """``skipped: 15 files: 13 in a build or vendor folder, 2 unsupported type``, and with ``named`` the paths."""
    if not counts:
        return ["  skipped: none"]
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    total = sum(counts.values())
    lines = [f"  skipped: {total:,} file{'s' * (total != 1)}: " + ", ".join(f"{n:,} {reason}" for reason, n in ranked)]
    if named:
        from grepgraph.retrievers.source.walk import SKIPPED_NAMED

        for reason, _ in ranked:
            shown = paths.get(reason) or []
            lines.append(f"    {reason}: {', '.join(shown)}{', ...' if len(shown) >= SKIPPED_NAMED else ''}")
    return lines


def _enclosing_repository(folder: Path) -> Path:
    """The indexed repository ``folder`` lies in (said on stderr), else ``folder`` itself.

    Searches from a subfolder use the enclosing index, so indexing one updates that index rather than
    starting a second, nested one whose paths would be relative to the subfolder (``--separate`` asks for that).
    A git work tree of its own inside the repository (a submodule, a clone) is a project of its own.
    """
    enclosing, index_dir = locate_index(folder)
    if enclosing == folder or not _has_index(index_dir):
        return folder
    if any((level / ".git").exists() for level in (folder, *folder.parents) if level != enclosing
           and level.is_relative_to(enclosing)):
        return folder
    print(f"grepgraph: {folder} is inside the indexed repository {enclosing}: updating its index ({index_dir});"
          f" use --separate for an index of {folder.name}/ alone", file=sys.stderr)
    return enclosing


def _hand_vectors_to_service(repo: Path, index_dir: Path) -> str:
    """Have the repository's service embed the pending vectors (started if none runs); what to tell the user."""
    from . import service_client as service

    settings = resolve_service_settings(repo)
    if not settings.watch:
        return " (the search service does not watch this repository: run grepgraph index to embed them)"
    try:
        if service.request(index_dir, "catch_up").get("ok"):
            return " (the running search service embeds them now; see grepgraph status)"
    except (service.ServiceUnavailable, service.ServiceLost):
        pass  # none runs (or one of another version, which stops on our request): start ours
    reason = service.cannot_host_reason(index_dir)
    if reason:
        return f" (no search service can run here, {reason}: run grepgraph index to embed them)"
    service.start_service(repo, index_dir)
    return " (a search service starts and embeds them; searches rank by BM25 and names until then)"


def _progress_reporter(silent: bool, pending: Any = None):
    """Progress on stderr as ``(callback, close)``: a rich bar on a terminal, else ETA lines while embedding.

    ``pending()`` counts the vectors still to embed, so the ETA covers every view, not just the current one.
    """
    if silent:
        return (lambda phase, done, total: None), (lambda: None)
    eta = _EmbeddingETA(pending)
    if not sys.stderr.isatty():
        return eta.print_now_and_then, (lambda: None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description:>12}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   transient=True)
    bar.start()
    tasks: dict[str, Any] = {}

    def update(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(phase, total=max(total, 1))
        bar.update(tasks[phase], completed=done, total=max(total, 1))
        if eta.track(phase, done, total):
            if "vectors" not in tasks:
                tasks["vectors"] = bar.add_task("all vectors", total=max(eta.total, 1))
            bar.update(tasks["vectors"], completed=eta.done, total=max(eta.total, 1))

    return update, bar.stop


class _EmbeddingETA:
    """The embedding rate measured so far, and the time left for every pending vector at that rate."""

    PRINT_EVERY_S = 30.0

    def __init__(self, pending: Any) -> None:
        self.pending = pending
        self.total = 0
        self.done = 0
        self._views: dict[str, int] = {}
        self._started = 0.0
        self._printed = 0.0

    def track(self, phase: str, done: int, total: int) -> bool:
        """Note an embedding phase's progress (``False`` for other phases)."""
        if not phase.startswith("embed"):
            return False
        if not self._started:
            self._started = time.monotonic()
            self.total = self.pending() if self.pending else total
        self._views[phase] = done
        self.done = sum(self._views.values())
        self.total = max(self.total, self.done)
        return True

    def describe(self) -> str:
        """``1,200/2,500 vectors, 12.3/s, about 2 min left`` (empty before the first batch)."""
        elapsed = time.monotonic() - self._started
        if not self.done or elapsed <= 0:
            return ""
        rate = self.done / elapsed
        left = (self.total - self.done) / rate
        when = f"{left / 60:.0f} min" if left >= 90 else f"{left:.0f} s"
        return f"{self.done:,}/{self.total:,} vectors, {rate:.1f}/s, about {when} left"

    def print_now_and_then(self, phase: str, done: int, total: int) -> None:
        """The callback without a terminal: a line every ``PRINT_EVERY_S`` while embedding."""
        if not self.track(phase, done, total) or time.monotonic() - self._printed < self.PRINT_EVERY_S:
            return
        line = self.describe()
        if line:
            print(f"grepgraph: embedding: {line}", file=sys.stderr)
            self._printed = time.monotonic()


def cmd_search(args: argparse.Namespace) -> int:
    """Search a repository's index through the graph: in the repository's service, else in this process."""
    request = _search_request(args)
    for name in ("focus", "intent"):
        if getattr(args, name):
            request[name] = getattr(args, name)
    for name in ("rewrite", "rerank"):
        if getattr(args, name) is not None:
            request[name] = getattr(args, name) == "force"
    repo, index_dir = locate_index(_repo_path(args.repo), args.index_dir)
    if not _has_index(index_dir):
        raise no_index_yet(repo)
    context: dict[str, Any] = {"repo": str(repo), "index_dir": str(index_dir)}
    if args.chroma_url:
        context["chroma_url"] = args.chroma_url
    if args.no_llm:
        context["llm_enabled"] = False
    started = time.perf_counter()
    out = _search_through_service(args, repo, index_dir, request, context)
    if out is None:
        out = _search_in_process(repo, index_dir, request, context)
    elapsed = (time.perf_counter() - started) * 1000
    if request["mode"] == "auto" and out.get("vectors_pending"):
        print(f"grepgraph: note: {out['vectors_pending']:,} vectors are not embedded yet; the chunks without them"
              " are ranked by BM25 and symbol names only", file=sys.stderr)
    for note in _trace_notes(out["trace"]):
        print(f"grepgraph: warning: {note}", file=sys.stderr)
    files = out.get("files") or rank_files(out["results"])  # a service from before files were ranked
    if args.json:
        payload = {"query": request["query"], "results": out["results"], "files": files}
        if "total_matches" in out:
            payload["total_matches"] = out["total_matches"]
        if args.explain:
            payload["trace"] = out["trace"]
        print(json.dumps(payload, indent=2))
        return 0
    if "total_matches" in out:
        _print_matches(out)
        if args.explain:
            _print_trace(out["trace"], elapsed)
        return 0
    if not out["results"]:
        print("no results")
    if args.files:
        for rank, entry in enumerate(files, start=1):
            symbols = ", ".join(entry["symbols"][:FILE_SYMBOLS_SHOWN])
            print(f"{rank:>2}. {entry['path']}  {entry['score']:.3f}  {symbols}")
        if args.explain:
            _print_trace(out["trace"], elapsed)
        return 0
    for rank, result in enumerate(out["results"], start=1):
        print(f"{rank:>2}. {result_heading(result)}")
        for line in snippet_lines(result.get("snippet") or "", request["query"]):
            print(f"      {line}")
    if args.explain:
        _print_trace(out["trace"], elapsed)
    return 0


def _search_through_service(args: argparse.Namespace, repo: Path, index_dir: Path, request: dict,
                            context: dict) -> dict | None:
    """The graph's output from the repository's resident service (``None``: search in-process instead)."""
    from . import service_client as service

    settings = resolve_service_settings(repo, {"daemon": False} if args.no_daemon else None)
    if not settings.daemon or not _has_index(index_dir):
        return None  # no index: the in-process path says so, and no service is started for nothing
    if service.cannot_host_reason(index_dir):
        return None  # a read-only index, no Unix sockets: expected, nothing to report
    try:
        return service.search(repo, index_dir, request, context, settings)
    except service.ServiceRefused as error:
        raise CLIError(in_flag_terms(str(error), request)) from None
    except (service.ServiceUnavailable, service.ServiceLost) as error:
        print(f"grepgraph: note: {error}; searching in this process", file=sys.stderr)
        return None


def in_flag_terms(message: str, request: dict) -> str:
    """An error about the search's filters as the command line names them (``--path 'x'``, not ``paths``).

    The graph names the input's fields, as HTTP and MCP callers write them; the filters it names are
    the ones this command sent, so their description in fields is replaced by the same one in flags.
    """
    if not (request.get("paths") or request.get("languages")):
        return message
    from grepgraph.retrievers.query.scope import Scope, ScopeError

    try:
        scope = Scope.of(request.get("paths"), request.get("languages"))
    except ScopeError:
        return message
    for named in (scope, scope.unanchored()):  # the filters sent, and the nearer ones a message may suggest
        if named is not None:
            message = message.replace(named.describe("fields"), named.describe("flags"))
    return message


def _has_index(index_dir: Path) -> bool:
    """Whether an index has been written there (cheap: no import of the index's code)."""
    return (index_dir / "index.sqlite").is_file()


def _search_in_process(repo: Path, index_dir: Path, request: dict, context: dict) -> dict:
    """The graph's output, computed here (loads the graph, the index and the model: seconds)."""
    from grepgraph.retrievers.store.index import CodeIndex

    from .preload import model_loading
    from .status import pending_vectors

    index = CodeIndex(repo, index_dir)
    index.require()
    with model_loading(index, wanted=request["mode"] == "auto"):  # literal and regex never embed
        from grepgraph.graphs.code_search import graph
        from grepgraph.graphs.nodes import InvalidSearchInput

        try:
            out = graph.invoke(request, context=context)
        except InvalidSearchInput as error:
            raise CLIError(in_flag_terms(str(error), request)) from None
    return {**out, "vectors_pending": pending_vectors(index) if request["mode"] == "auto" else 0}


def _trace_notes(trace: list[dict]) -> list[str]:
    """What the run did without (vectors unavailable, other fallbacks), each once, from the trace."""
    notes = [entry["vectors"] for entry in trace if entry.get("vectors")]
    notes += [note for entry in trace for note in entry.get("fallbacks", [])]
    return list(dict.fromkeys(notes))


def _search_request(args: argparse.Namespace) -> dict:
    """The graph input for ``search``: a query, or a ``--literal`` / ``--regex`` pattern, and the filters."""
    patterns = [(mode, value) for mode, value in (("literal", args.literal), ("regex", args.regex))
                if value is not None]
    if len(patterns) + (args.query is not None) != 1:
        raise CLIError("give one of: a query, --literal TEXT or --regex PATTERN")
    mode, query = patterns[0] if patterns else ("auto", args.query)
    if mode == "auto" and not query.strip():
        raise CLIError("query is empty")
    if field_problem("query", query):  # the graph's limit and message, before a service or the index is touched
        raise CLIError(field_problem("query", query))
    request: dict = {"query": query, "limit": args.limit, "mode": mode}
    if args.path:
        request["paths"] = args.path
    if args.lang:
        request["languages"] = args.lang
    return request


def _print_matches(out: dict) -> None:
    """Literal / regex results: ``path:line  symbol [kind]`` and the line, after the count."""
    results, total = out["results"], out["total_matches"]
    stopped = next((entry["stopped"] for entry in out["trace"] if entry.get("stopped")), "")
    shown = f"{total:,}+ matching lines ({stopped})" if stopped else f"{total:,} matching line{'s' * (total != 1)}"
    print(f"{shown}, showing {len(results)}" if results else "no matches")
    for result in results:
        print(f"{result['path']}:{result['line']}  {result['symbol']}  [{result['kind']}]")
        print(f"      {result['snippet'].strip()[:140]}")


def _print_trace(trace: list[dict], elapsed_ms: float) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"trace ({elapsed_ms:.0f} ms)")
    for column in ("node", "ms", "decision", "details"):
        table.add_column(column)
    for entry in trace:
        details = {k: v for k, v in entry.items() if k not in ("node", "ms", "decision")}
        table.add_row(entry["node"], f"{entry['ms']:.1f}", str(entry.get("decision", "")),
                      "; ".join(f"{k}={v}" for k, v in details.items())[:160])
    Console().print(table)


def cmd_status(args: argparse.Namespace) -> int:
    """Show what is indexed, how current it is and whether a service follows the repository."""
    from grepgraph.retrievers.store.index import CodeIndex

    from .status import freshness_lines, index_report

    repo, index_dir = locate_index(_repo_path(args.repo), args.index_dir)
    status = index_report(CodeIndex(repo, index_dir))
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    print(f"repository: {status['repo']}")
    print(f"index:      {status['index_dir']}")
    print(f"files:      {status['files']}  {status['languages']}")
    print(f"chunks:     {status['chunks']} ({status['test_chunks']} in tests), edges: {status['edges']}")
    print(f"vectors:    views {', '.join(status['views'])}; pending {status['vectors_pending_total']:,}"
          f" {status['vectors_pending']}")
    for line in freshness_lines(status):
        print(line)
    print(f"chroma:     {status['chroma_url'] or 'embedded (' + str(Path(status['index_dir']) / 'chroma') + ')'}")
    built = status["settings"]
    model, queries = built["embedding_model"], status["query_embedding"]
    shown = f"{model} (queries: {queries})" if queries != model else model
    print(f"settings:   embedding {shown}, views {built['views']}, tests {built['embed_tests']},"
          f" bm25 {built['bm25_backend']}, max file {built['max_file_bytes']:,} bytes")
    print(f"updated:    {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(status['updated_at']))}")
    for name, change in status["settings_changes"].items():
        print(f"next index: {name} {change['now']} -> {change['next']} (from {change['from']})")
    if not status["settings_match"]:
        print("settings changed since the index was built: the next `grepgraph index` rebuilds it")
    return 0


def cmd_daemon(args: argparse.Namespace) -> int:
    """``grepgraph daemon start|stop|status``: the repository's resident search service."""
    from . import service_client as service

    repo, index_dir = locate_index(_repo_path(args.repo), args.index_dir)
    if args.action == "stop":
        stopped = service.stop_service(index_dir)
        print(f"stopped the search service of {repo}" if stopped else f"no search service runs for {repo}")
        return 0
    if args.action == "start":
        if not _has_index(index_dir):
            raise no_index_yet(repo)  # not "not writable": the folder the service would live in does not exist yet
        reason = service.cannot_host_reason(index_dir)
        if reason:
            raise CLIError(f"can't run a search service here: {reason}")
        try:
            service.ensure_service(repo, index_dir, resolve_service_settings(repo))
        except service.ServiceUnavailable as error:
            raise CLIError(str(error)) from None
    state = service.service_state(index_dir)
    if args.json:
        print(json.dumps(state, indent=2))
    elif not state["running"]:
        print(f"no search service runs for {repo}")
    else:
        watching = "watching for changes" if state.get("watching") else "not watching"
        idle = state.get("idle_exit_s")
        ends = f", exits after {idle:g} s idle" if idle else ""
        print(f"search service for {repo}: pid {state['pid']}, {watching}, {state['searches']} searches{ends}")
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    """Run the repository's service in the foreground: follow changes, re-index them, answer searches."""
    from . import service_client as service
    from .daemon import serve

    repo, index_dir = locate_index(_repo_path(args.repo), args.index_dir)
    reason = service.cannot_host_reason(index_dir) if index_dir.exists() else ""
    if reason:
        raise CLIError(f"can't watch here: {reason}")
    if service.stop_service(index_dir):
        print("stopped the background search service; this one takes over", file=sys.stderr)
    if not args.verbose:
        configure_logging(1)
    print(f"watching {repo} (Ctrl-C to stop)", file=sys.stderr)
    return serve(repo, index_dir, foreground=True, watch=True)


def cmd_init(args: argparse.Namespace) -> int:
    """Write a commented grepgraph.toml with every setting and its default."""
    from grepgraph.graphs.context import describe_settings
    from grepgraph.retrievers.core.index_settings import describe_index_settings
    from grepgraph.retrievers.core.service_settings import describe_service_settings
    from grepgraph.retrievers.core.settings import INDEX_TABLE, RUN_TABLE, SERVICE_TABLE

    target = Path(args.path)
    if target.exists() and not args.force:
        raise CLIError(f"{target} exists; use --force to overwrite")
    lines = ["# grepgraph settings, read from the repository's root (or the file $GREPGRAPH_CONFIG names).",
             "# Environment variables GREPGRAPH_<NAME> override these; a caller's context={...} or a",
             "# command-line flag overrides both.", f"[{RUN_TABLE}]"]
    sections = ((describe_settings(), ""), (describe_index_settings(),
                "\n# Index settings: used by `grepgraph index`, then kept in the index.\n" + f"[{INDEX_TABLE}]"),
                (describe_service_settings(),
                 "\n# The resident search service (`grepgraph daemon`, `grepgraph watch`).\n" + f"[{SERVICE_TABLE}]"))
    for described, header in sections:
        if header:
            lines.append(header)
        for name, default, description in described:
            lines.append(f"# {description}")
            lines.append(f"# {name} = {json.dumps(default)}")
    target.write_text("\n".join(lines) + "\n")
    print(f"wrote {target}")
    return 0


def cmd_trust(args: argparse.Namespace) -> int:
    """Let a repository's grepgraph.toml say where data goes (servers, keys, providers, paths), for this content."""
    from grepgraph.retrievers.core.repo_trust import REACHES_OUT, trust
    from grepgraph.retrievers.core.settings import CONFIG_FILENAME, RUN_TABLE, file_tables, read_config, user_config_dir

    repo = Path(args.repo).expanduser().resolve()
    config = repo / CONFIG_FILENAME if repo.is_dir() else repo
    if not config.is_file():
        raise CLIError(f"no {CONFIG_FILENAME} in {repo}; nothing to trust")
    digest = trust(config, user_config_dir(), revoke=args.revoke)
    if args.revoke:
        print(f"no longer trusted: {config}")
        return 0
    tables = file_tables(read_config(config), config)
    named = sorted({name for table in tables.values() for name in table if name in REACHES_OUT})
    values = ", ".join(f"{name} = {tables[RUN_TABLE].get(name, '(index/service table)')!r}"
                       if name != "llm_api_key" else "llm_api_key = (hidden)" for name in named)
    print(f"trusted {config} (sha256 {digest[:12]}): {values or 'it sets nothing that sends or reads data elsewhere'}"
          "; a changed file needs trust again")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="grepgraph", description="Code search for people and agents.")
    parser.add_argument("--version", action="version", version=f"grepgraph {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    logs = _logging_flags()

    index = commands.add_parser("index", parents=[logs], help="index a repository (incremental)")
    index.add_argument("path", nargs="?", help="repository root (default: current directory)")
    index.add_argument("--index-dir", help="where to keep the index (default: PATH/.grepgraph)")
    index.add_argument("--separate", action="store_true",
                       help="inside an indexed repository, build a separate index of PATH alone (default: update"
                       " the enclosing repository's index)")
    index.add_argument("--rebuild", action="store_true", help="rebuild from scratch")
    index.add_argument("--no-embed", action="store_true", help="lexical index only; vectors on the next run")
    index.add_argument("--bm25-backend", choices=["bm25s", "rank_bm25"], help="BM25 engine (default bm25s)")
    index.add_argument("--views", choices=["auto", "card", "card+code"],
                       help="what to embed per chunk (auto: card+code up to 25k chunks, cards above)")
    index.add_argument("--embedding", help="embedding model: code-minilm-quantized (default, offline: MiniLM "
                       "fine-tuned on code by grepgraph), code-minilm (the same unquantized), minilm "
                       "(all-MiniLM-L6-v2, the default before 2026-11-26), minilm-quantized or ollama:<model>, e.g. "
                       "ollama:nomic-embed-text (needs a running Ollama at the llm_base_url setting)")
    index.add_argument("--embed-tests", choices=["auto", "always", "never"],
                       help="vectors for test files (auto: only up to 25k chunks; above, tests use BM25 and names)")
    index.add_argument("--chroma-url", help="use a Chroma server (http://host:port) instead of the embedded database;"
                       " remembered by the index (default: $GREPGRAPH_CHROMA_URL, else the URL it was built with;"
                       " \"\" switches back to the embedded database)")
    index.add_argument("--vectors-later", action="store_true",
                       help="return once the lexical index is ready (seconds); the repository's search service"
                       " embeds the vectors in the background")
    index.add_argument("--wait", action="store_true", help="wait for another indexer instead of exiting")
    index.add_argument("--json", action="store_true", help="print the summary as JSON")
    index.add_argument("--quiet", action="store_true", help="no progress bar")
    index.set_defaults(handler=cmd_index)

    search = commands.add_parser("search", parents=[logs], help="search an indexed repository")
    search.add_argument("query", nargs="?", help=f"what to find, at most {MAX_QUERY_CHARS:,} characters (or use"
                        " --literal / --regex)")
    search.add_argument("--literal", metavar="TEXT", help="every line containing TEXT exactly (case-sensitive)")
    search.add_argument("--regex", metavar="PATTERN", help="every line matching an RE2 regex (^ and $ match at lines)")
    search.add_argument("-g", "--path", action="append", metavar="GLOB",
                        help="only files matching a gitignore-style glob, e.g. 'src/**' or '*.go' (repeatable, or a"
                        " comma list)")
    search.add_argument("-t", "--lang", action="append", metavar="LANGUAGE",
                        help="only files in this language: python, javascript, typescript, go, rust, java, text"
                        " (repeatable, or a comma list)")
    search.add_argument("--repo", help="repository root (default: $GREPGRAPH_REPO or current directory)")
    search.add_argument("--index-dir")
    search.add_argument("--chroma-url", help="Chroma server with the vectors (default: $GREPGRAPH_CHROMA_URL, else"
                        " the one the index was built with)")
    search.add_argument("-n", "--limit", type=int, default=FIELDS["limit"].default,
                        help=f"results to show (1-{MAX_LIMIT}; literal/regex: up to {MAX_MATCH_LIMIT})")
    search.add_argument("--focus", choices=FOCUS_VALUES, help=FIELDS["focus"].description)
    search.add_argument("--intent", help=FIELDS["intent"].description)
    search.add_argument("--rewrite", choices=["force", "forbid"])
    search.add_argument("--rerank", choices=["force", "forbid"])
    search.add_argument("--no-llm", action="store_true", help="never call the local LLM")
    search.add_argument("--json", action="store_true")
    search.add_argument("-l", "--files", action="store_true",
                        help="list the files of the results, ranked where their best definition ranks")
    search.add_argument("--explain", action="store_true", help="print the graph's trace")
    search.add_argument("--no-daemon", action="store_true",
                        help="search in this process instead of the repository's resident service")
    search.set_defaults(handler=cmd_search)

    status = commands.add_parser("status", parents=[logs], help="show what is indexed")
    status.add_argument("repo", nargs="?")
    status.add_argument("--index-dir")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=cmd_status)

    daemon = commands.add_parser("daemon", parents=[logs], help="the repository's resident search service")
    daemon.add_argument("action", choices=["start", "stop", "status"])
    daemon.add_argument("--repo", help="repository root (default: $GREPGRAPH_REPO or current directory)")
    daemon.add_argument("--index-dir")
    daemon.add_argument("--json", action="store_true")
    daemon.set_defaults(handler=cmd_daemon)

    watch = commands.add_parser("watch", parents=[logs],
                                help="follow file changes and re-index them, in the foreground (and answer searches)")
    watch.add_argument("repo", nargs="?", help="repository root (default: current directory)")
    watch.add_argument("--index-dir")
    watch.set_defaults(handler=cmd_watch)

    init = commands.add_parser("init", parents=[logs], help="write a commented grepgraph.toml")
    init.add_argument("path", nargs="?", default="grepgraph.toml")
    init.add_argument("--force", action="store_true")
    init.set_defaults(handler=cmd_init)

    trust = commands.add_parser("trust", parents=[logs],
                                help="let a repository's grepgraph.toml set servers, keys, providers and paths")
    trust.add_argument("repo", nargs="?", default=".", help="the repository (or its grepgraph.toml)")
    trust.add_argument("--revoke", action="store_true", help="forget the trust given before")
    trust.set_defaults(handler=cmd_trust)
    serve = commands.add_parser("serve", parents=[logs],
                                help="serve the graph over HTTP with LangServe (extra: grepgraph[serve])")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--repo", action="append", help="repository clients may search (repeatable; default: cwd)")
    _host_guard_flags(serve)
    serve.set_defaults(handler=_delegate("grepgraph.serve"))

    mcp = commands.add_parser("mcp", parents=[logs], help="run the MCP server (stdio; extra: grepgraph[mcp])")
    mcp.add_argument("--repo", action="append", help="repository the tools search (repeatable; default: cwd)")
    mcp.add_argument("--http", action="store_true", help="streamable HTTP on loopback instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1")
    mcp.add_argument("--port", type=int, default=8765)
    _host_guard_flags(mcp)
    mcp.set_defaults(handler=_delegate("grepgraph.mcp_server"))
    parser.set_defaults(command_parsers=dict(commands.choices))  # for parse_arguments' suggestions
    return parser


def _logging_flags() -> argparse.ArgumentParser:
    """``-v`` / ``--verbose`` and ``--log-file``, shared by every command (see :mod:`grepgraph.logs`)."""
    flags = argparse.ArgumentParser(add_help=False)
    flags.add_argument("-v", "--verbose", action="count", default=0,
                       help="log fallbacks and rebuilds to stderr (-vv: debug detail)")
    flags.add_argument("--log-file", metavar="PATH", help="also write the log to PATH (a service's log)")
    return flags


def _host_guard_flags(parser: argparse.ArgumentParser) -> None:
    """``--allow-host`` / ``--allow-origin``: who besides loopback may call an HTTP server (DNS rebinding)."""
    parser.add_argument("--allow-host", action="append", metavar="NAME",
                        help="answer requests whose Host is NAME or NAME:PORT too (repeatable; default: loopback only)")
    parser.add_argument("--allow-origin", action="append", metavar="URL",
                        help="let browser pages from URL (https://tool.example) call the server (repeatable)")


def _delegate(module: str):
    """A handler that imports ``module`` only when its command runs (optional extras)."""
    def handler(args: argparse.Namespace) -> int:
        import importlib

        try:
            target = importlib.import_module(module)
        except ImportError as error:
            extra = "serve" if module.endswith("serve") else "mcp"
            raise CLIError(f"{error}; install the extra: pip install 'grepgraph[{extra}]'") from None
        return target.run(args)

    return handler


def parse_arguments(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> argparse.Namespace:
    """The parsed command line; a mistyped command or option is refused with the closest name that exists.

    An option the subcommand does not know is refused by the subcommand itself, so the usage shown
    is that command's (its options), not the top-level list of commands.
    """
    words = sys.argv[1:] if argv is None else argv
    commands = parser.get_default("command_parsers")
    command = next((word for word in words if not word.startswith("-")), None)
    if command is not None and command not in commands:
        close = difflib.get_close_matches(command, commands, n=1)
        if close:
            parser.error(f"unknown command {command!r}; did you mean {close[0]}?")
    args, unknown = parser.parse_known_args(words)
    if unknown:
        subcommand = commands[args.command]
        subcommand.error(_unknown_arguments(subcommand, unknown))
    return args


def _unknown_arguments(parser: argparse.ArgumentParser, unknown: list[str]) -> str:
    """``unrecognized arguments: --rpeo X; did you mean --repo?`` (the closest option of ``parser``, if any)."""
    message = f"unrecognized arguments: {' '.join(unknown)}"
    options = [option for action in parser._actions for option in action.option_strings]
    for word in unknown:
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=", 1)[0], options, n=1)
            if close:
                return f"{message}; did you mean {close[0]}?"
    return message


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = parse_arguments(build_parser(), argv)
    from grepgraph.retrievers.core.errors import IndexError_

    configure_logging(args.verbose, args.log_file)

    try:
        return args.handler(args)
    except (CLIError, IndexError_, ValueError) as error:
        if debug_enabled():
            raise
        print(f"grepgraph: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("grepgraph: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
