"""Which repositories and service URLs a remote caller may use: one catalog, one set of rules for every surface.

``grepgraph serve``, the MCP server and the LangGraph Agent Server all let a caller name the repository to
search (``repo``). They accept the same values, checked by :meth:`RepoCatalog.lookup`:

- a served repository's directory name, when no other served repository has the same name;
- its absolute path as the server was given it, or as that resolves. A requested path is compared as
  written, never resolved: ``..``, ``~``, a relative path, or a symlink that is not itself served never
  reach a repository, so no spelling of a path leads outside the catalog.

Anything else raises :class:`RepoNotServed` (serve: a 422, MCP: a tool error, Agent Server: the run fails).

serve and MCP decide the run's settings themselves. The Agent Server does not: any client that reaches it
passes a ``context`` that becomes the run's settings (``repo``, ``index_dir``, ``llm_base_url``,
``chroma_url``...). :func:`admit_served_run` is applied to every run the Agent Server starts: its repository
must be the deployment's own (``GREPGRAPH_REPO`` / ``grepgraph.toml`` / the working directory) or one listed in
``GREPGRAPH_ALLOWED_REPOS``; its index directory the one that repository is served with (the deployment's
``index_dir`` for its own, ``<repo>/.grepgraph`` for a listed one); its LLM URL the
deployment's own or one listed in ``GREPGRAPH_ALLOWED_LLM_URLS``; its Chroma URL the deployment's own.
Without this a client could point the server's LLM calls, with snippets of the code, at any host.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from grepgraph.retrievers.core.errors import IndexError_, IndexMissing
from grepgraph.retrievers.core.run_settings import default_repo
from grepgraph.retrievers.core.settings import environment, outside_value
from grepgraph.retrievers.store.index import CodeIndex, default_index_dir

from .context import Context, resolve_context

# Deployment allow-lists, never a run setting (a caller must not widen them): roots separated by os.pathsep,
# URLs by commas.
ALLOWED_REPOS_VARIABLE = "GREPGRAPH_ALLOWED_REPOS"
ALLOWED_LLM_URLS_VARIABLE = "GREPGRAPH_ALLOWED_LLM_URLS"
MAX_SHOWN_CHARS = 200


class RepoNotServed(ValueError):
    """The requested repository is not one this server may search."""


class SettingNotAllowed(ValueError):
    """A caller asked for an index directory or service URL the deployment does not allow."""


@dataclass(frozen=True)
class ServedRepo:
    """One searchable repository: the name clients use, its root and its index."""

    name: str
    path: Path
    index_dir: Path

    def index_state(self) -> dict[str, str]:
        """``{"index": "ready"}`` or ``{"index": "missing" | "error", "detail": ...}`` (reads, never writes)."""
        try:
            CodeIndex(self.path, self.index_dir).require()
        except IndexError_ as error:
            return {"index": "missing" if isinstance(error, IndexMissing) else "error", "detail": str(error)}
        return {"index": "ready"}


class RepoCatalog:
    """The repositories a server may search, looked up by name or exact absolute path."""

    def __init__(self, repos: Sequence[str | os.PathLike], index_dirs: Mapping[str, str | os.PathLike] | None = None):
        """Resolve every repository once; raise ``ValueError`` for one that is missing or not a directory."""
        if not repos:
            raise ValueError("no repository to serve")
        indexes = {str(Path(k).expanduser().resolve()): Path(v).expanduser().resolve()
                   for k, v in (index_dirs or {}).items()}
        self.entries: list[ServedRepo] = []
        self._by_path: dict[str, ServedRepo] = {}
        for given in repos:
            path = Path(given).expanduser().resolve()
            if not path.exists():
                raise ValueError(f"repository not found: {path}")
            if not path.is_dir():
                raise ValueError(f"not a directory: {path}")
            if str(path) in self._by_path:
                continue
            entry = ServedRepo(path.name or str(path), path, indexes.get(str(path), default_index_dir(path)))
            self.entries.append(entry)
            self._by_path[str(path)] = entry
            # The path as the operator wrote it (a symlink, say) names the repository too.
            self._by_path.setdefault(os.path.abspath(os.path.expanduser(str(given))), entry)
        names: dict[str, list[ServedRepo]] = {}
        for entry in self.entries:
            names.setdefault(entry.name, []).append(entry)
        self._by_name = {name: found[0] for name, found in names.items() if len(found) == 1}
        self._ambiguous = {name for name, found in names.items() if len(found) > 1}

    @property
    def names(self) -> list[str]:
        """The names clients can pass as ``repo``."""
        return [entry.name for entry in self.entries]

    @property
    def default(self) -> ServedRepo:
        """The repository searched when the request names none."""
        return self.entries[0]

    def listing(self) -> str:
        """``name (path), ...``: what an error message offers instead."""
        return ", ".join(f"{entry.name} ({entry.path})" for entry in self.entries)

    def lookup(self, value: object) -> ServedRepo:
        """The served repository ``value`` names (the default when empty), or :class:`RepoNotServed`."""
        if value is None:
            return self.default
        if not isinstance(value, str):
            raise RepoNotServed("repo must be a string")
        value = value.strip()
        if not value:
            return self.default
        if value in self._by_name:
            return self._by_name[value]
        if value in self._ambiguous:
            raise RepoNotServed(f"repo {value!r} names several served repositories; pass its absolute path: "
                                + ", ".join(str(e.path) for e in self.entries if e.name == value))
        entry = self._by_path.get(_as_written(value)) if os.path.isabs(value) else None
        if entry is not None:
            return entry
        raise RepoNotServed(f"repo {_shown(value)} is not served by this server; use one of: {self.listing()} "
                            f"(a name or its absolute path)")


def _as_written(path: str) -> str:
    """``path`` normalised lexically (repeated and trailing slashes, ``.``); ``""`` when it has ``..`` or NUL."""
    if "\x00" in path or ".." in Path(path).parts:
        return ""
    return str(Path(path))


def _shown(value: str) -> str:
    return repr(value if len(value) <= MAX_SHOWN_CHARS else value[:MAX_SHOWN_CHARS] + "...")


def normalise_url(url: str) -> str:
    """``scheme://host:port/path`` with scheme and host lower-cased, the default port written, no trailing ``/``."""
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        return url.strip()
    default_port = {"http": 80, "https": 443}.get(parts.scheme.lower())
    host = (parts.hostname or "").lower()
    shown_host = f"[{host}]" if ":" in host else host
    userinfo = f"{parts.username}@" if parts.username else ""  # kept so it never matches a URL without it
    return f"{parts.scheme.lower()}://{userinfo}{shown_host}:{port or default_port}{parts.path.rstrip('/')}"


# --------------------------------------------------------------------------- the Agent Server's runs
@dataclass(frozen=True)
class DeploymentPolicy:
    """What a caller of a deployment may choose: repositories, LLM URLs and the Chroma URL."""

    repos: RepoCatalog
    llm_urls: frozenset[str]
    chroma_url: str
    own_index_dir: str = ""  # the deployment's index directory as configured (may be relative or a symlink)

    def admit(self, context: Context) -> Context:
        """``context`` with its repository and index as served, or ``RepoNotServed`` / ``SettingNotAllowed``."""
        entry = self.repos.lookup(context.repo)
        if not self._is_index_of(entry, context.index_dir):
            raise SettingNotAllowed(f"index_dir {_shown(context.index_dir)} is not the index {entry.name} is "
                                    f"served with; leave index_dir empty")
        if normalise_url(context.llm_base_url) not in self.llm_urls:
            raise SettingNotAllowed(f"llm_base_url {_shown(context.llm_base_url)} is not allowed here; the "
                                    f"deployment lists the LLM URLs a caller may use in {ALLOWED_LLM_URLS_VARIABLE}")
        if _url_key(context.chroma_url) != self.chroma_url:
            raise SettingNotAllowed(f"chroma_url {_shown(context.chroma_url)} is not the deployment's; leave it empty")
        return replace(context, repo=str(entry.path), index_dir=str(entry.index_dir))

    def _is_index_of(self, entry: ServedRepo, index_dir: str) -> bool:
        # The deployment's own index_dir reaches every run's context (environment, file): it stands for
        # "the served index" then, which for another listed repository is that repository's own.
        if not index_dir or index_dir == self.own_index_dir:
            return True
        written = _as_written(index_dir)  # before abspath, which would fold ".." away
        return bool(written) and os.path.abspath(written) == str(entry.index_dir)


def deployment_policy(environ: Mapping[str, str] | None = None) -> DeploymentPolicy:
    """The policy from the deployment's own settings (environment, ``grepgraph.toml``) and its allow-lists."""
    environ = environment() if environ is None else environ
    own = resolve_context(None)
    return _policy(own.repo, own.index_dir, own.llm_base_url, own.chroma_url,
                   environ.get(ALLOWED_REPOS_VARIABLE, ""), environ.get(ALLOWED_LLM_URLS_VARIABLE, ""))


@lru_cache(maxsize=8)
def _policy(repo: str, index_dir: str, llm_base_url: str, chroma_url: str,
            allowed_repos: str, allowed_llm_urls: str) -> DeploymentPolicy:
    """Built once per distinct setting (every node of every run asks)."""
    listed = [part for part in allowed_repos.split(os.pathsep) if part.strip()]
    try:
        catalog = RepoCatalog([repo, *listed], {repo: index_dir} if index_dir else None)
    except ValueError as error:
        raise ValueError(f"{ALLOWED_REPOS_VARIABLE} / GREPGRAPH_REPO: {error}") from None
    urls = {normalise_url(url) for url in [llm_base_url, *allowed_llm_urls.split(",")] if url.strip()}
    return DeploymentPolicy(catalog, frozenset(urls), _url_key(chroma_url), index_dir)


def _url_key(url: str) -> str:
    return normalise_url(url) if url and url.strip() else ""


def admit_served_run(context: Context) -> Context:
    """Check a run's settings against the deployment's policy (see the module docstring)."""
    return deployment_policy().admit(context)


def server_catalog(repos: Sequence[str | os.PathLike]) -> RepoCatalog:
    """The catalog of a server started with ``--repo`` values (serve, MCP).

    Without any, the deployment's own repository (``GREPGRAPH_REPO``, ``grepgraph.toml``, else the working
    directory); the deployment's ``index_dir`` applies when exactly one repository is served.
    """
    given = [str(repo) for repo in repos] or [default_repo()]
    own_index_dir = outside_value("index_dir", given[0]) if len(given) == 1 else ""
    return RepoCatalog(given, {given[0]: own_index_dir} if own_index_dir else None)
