"""Where every setting comes from, decided in one place.

Each setting is a field of a settings dataclass (the graph's run settings,
``graphs.context.Context``, and the index's build settings, :class:`IndexSettings`), and
takes the first value found in these layers:

1. the caller: ``graph.invoke(..., context={...})``, a command-line flag;
2. the environment: ``GREPGRAPH_<FIELD>`` (``GREPGRAPH_LIMIT=5``, ``GREPGRAPH_VIEWS=card``);
3. ``grepgraph.toml``: the file named by ``$GREPGRAPH_CONFIG``, else the one at the repository's root.
   Run settings are its top-level keys (or a ``[grepgraph]`` table), index settings its ``[index]`` table;
4. what the index was built with (index settings only), then the field's default.

This module is the only one that reads ``os.environ`` for grepgraph and the only one
that reads ``grepgraph.toml``; everything else receives values.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any, get_type_hints

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ENV_PREFIX = "GREPGRAPH_"
CONFIG_ENV = "GREPGRAPH_CONFIG"
CONFIG_FILENAME = "grepgraph.toml"
RUN_TABLE = "grepgraph"
INDEX_TABLE = "index"
SERVICE_TABLE = "service"
# Where a repository's index lives unless told otherwise: <repo>/.grepgraph.
INDEX_DIRNAME = ".grepgraph"
# Files larger than this are not indexed (the default of the max_file_bytes index setting). Named here, not in
# walk.py: reading settings must stay cheap for the command-line client, which never walks a repository.
MAX_FILE_BYTES = 1_000_000
# Process-wide switches that only make sense in the environment (not per repository or per call).
EMBEDDING_CACHE_ENV = "GREPGRAPH_EMBEDDING_CACHE"
DEBUG_ENV = "GREPGRAPH_DEBUG"
DEFAULT_LLM_BASE_URL = "http://localhost:11434"

# Names of the layers, as reported by ``grepgraph status`` and in error messages.
CALLER, ENVIRONMENT, FILE, INDEX, DEFAULT = "caller", "environment", "grepgraph.toml", "index", "default"


def setting(default: Any, description: str, choices: tuple[str, ...] = (), secret: bool = False) -> Any:
    """A settings field: its default, what it does, and (for a few) the values it accepts.

    A ``secret`` (an API key) is left out of the dataclass's ``repr``, so printing or logging the settings
    never shows it; set it in the environment (``GREPGRAPH_<NAME>``) rather than in a file.
    """
    return field(default=default, repr=not secret,
                 metadata={"description": description, "choices": choices, "secret": secret})


@dataclass
class IndexSettings:
    """Settings an index is built with; they are stored in the index and reused by every later run."""

    bm25_backend: str = setting("bm25s", "BM25 engine.", ("bm25s", "rank_bm25"))
    embedding_model: str = setting(
        "minilm", "Embedding model: minilm (bundled, offline), minilm-quantized (the same, ~1.5x faster to embed, "
        "ranks a little lower) or ollama:<model>, e.g. ollama:nomic-embed-text.")
    views: str = setting("auto", "What to embed per chunk (auto: card+code up to 25k chunks, cards above).",
                         ("auto", "card", "card+code"))
    embed_tests: str = setting("auto", "Vectors for test files (auto: a card vector, no code vector, up to 25k "
                               "chunks; always: both views).",
                               ("auto", "always", "never"))
    max_file_bytes: int = setting(MAX_FILE_BYTES, "Files larger than this are not indexed.")

    def rebuild_key(self) -> dict:
        """The settings the stored chunks depend on: changing one rebuilds the index.

        ``views`` and ``embed_tests`` are not among them: changing those only adds or drops vectors.
        """
        return {"bm25_backend": self.bm25_backend, "embedding_model": self.embedding_model,
                "max_file_bytes": self.max_file_bytes}

    def to_dict(self) -> dict:
        """Every field, as stored in the index."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class ServiceSettings:
    """Settings of the resident per-repository search service (``grepgraph daemon``) and its watcher."""

    daemon: bool = setting(True, "grepgraph search goes through a resident service per repository, started on "
                                 "demand (false: every search loads the index in its own process).")
    service_idle_s: float = setting(1800.0, "Seconds without a request after which the service exits.")
    service_start_s: float = setting(90.0, "Seconds a search waits for a service it started to answer, before "
                                           "searching in-process.")
    watch: bool = setting(True, "The service follows file changes and re-indexes the changed files.")
    watch_debounce_ms: int = setting(200, "Changes within this many milliseconds are re-indexed together.")


# ---------------------------------------------------------------- the environment
class _Environment(Mapping[str, str]):
    """The ``GREPGRAPH_*`` variables, read when asked for (copying the whole environment costs ~1 ms)."""

    def __getitem__(self, name: str) -> str:
        if not name.startswith(ENV_PREFIX):
            raise KeyError(name)
        return os.environ[name]

    def __contains__(self, name: object) -> bool:
        return self.get(name) is not None  # type: ignore[arg-type]

    def get(self, name: str, default: Any = None) -> Any:  # noqa: D102 - Mapping.get without a KeyError
        return os.environ.get(name, default) if name.startswith(ENV_PREFIX) else default

    def __iter__(self) -> Iterator[str]:
        return (name for name in list(os.environ) if name.startswith(ENV_PREFIX))

    def __len__(self) -> int:
        return sum(1 for _ in self)


_ENVIRONMENT = _Environment()


def environment() -> Mapping[str, str]:
    """The ``GREPGRAPH_*`` variables (a live view: each look-up sees the environment as it is then)."""
    return _ENVIRONMENT


def env_name(field_name: str) -> str:
    """``limit`` -> ``GREPGRAPH_LIMIT``."""
    return f"{ENV_PREFIX}{field_name.upper()}"


def embedding_cache_setting() -> str:
    """``$GREPGRAPH_EMBEDDING_CACHE`` (a path, ``off``, or empty for the default place)."""
    return os.environ.get(EMBEDDING_CACHE_ENV, "")


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME``, else ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def debug_enabled() -> bool:
    """``GREPGRAPH_DEBUG`` set: the CLI shows tracebacks instead of one-line errors."""
    return bool(os.environ.get(DEBUG_ENV))


# ---------------------------------------------------------------- the file
def config_path(repo: Path | str | None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The ``grepgraph.toml`` in use: ``$GREPGRAPH_CONFIG``, else ``<repo>/grepgraph.toml`` if present."""
    environ = environment() if environ is None else environ
    explicit = environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    if repo:
        local = os.path.join(os.path.expanduser(repo), CONFIG_FILENAME)  # os.path: this runs on every node
        if os.path.isfile(local):
            return Path(local)
    return None


_parsed: dict[Path, tuple[tuple[int, int], dict]] = {}
_parsed_lock = threading.Lock()


def read_config(path: Path) -> dict:
    """The parsed file, re-read only when it changed (nodes resolve their settings on every step)."""
    try:
        stat = path.stat()
    except OSError:
        raise ValueError(f"{CONFIG_ENV}={path}: no such file") from None
    stamp = (stat.st_mtime_ns, stat.st_size)
    with _parsed_lock:
        cached = _parsed.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML ({error})") from None
    with _parsed_lock:
        _parsed[path] = (stamp, data)
    return data


def file_tables(data: dict, path: Path) -> dict[str, dict]:
    """The run, index and service settings of a parsed file, by table name.

    Run settings are the top-level keys or a ``[grepgraph]`` table; index settings an ``[index]``
    (or ``[grepgraph.index]``) table, service settings a ``[service]`` one.
    """
    root = data.get(RUN_TABLE, data)
    if not isinstance(root, dict):
        raise ValueError(f"{path}: [{RUN_TABLE}] must be a table")
    tables = {name: {**data.get(name, {}), **root.get(name, {})} for name in (INDEX_TABLE, SERVICE_TABLE)}
    tables[RUN_TABLE] = {key: value for key, value in root.items()
                         if key not in (RUN_TABLE, INDEX_TABLE, SERVICE_TABLE)}
    return tables


def file_settings(repo: Path | str | None, table: str,
                  environ: Mapping[str, str] | None = None) -> tuple[dict, Path | None]:
    """One table of the file in use (``RUN_TABLE``, ``INDEX_TABLE`` or ``SERVICE_TABLE``) and the file's path."""
    path = config_path(repo, environ)
    if path is None:
        return {}, None
    return file_tables(read_config(path), path)[table], path


# ---------------------------------------------------------------- layering
@cache
def _type_hints(schema: type) -> dict[str, Any]:
    return get_type_hints(schema)


@cache
def schema_fields(schema: type) -> tuple[Field, ...]:
    """The dataclass fields of a settings schema (looked up once)."""
    return fields(schema)


@cache
def _names(schema: type) -> frozenset[str]:
    return frozenset(f.name for f in schema_fields(schema))


def default_of(f: Field) -> Any:
    """A field's default value."""
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else None


def coerce(value: Any, annotation: Any, choices: tuple[str, ...] = ()) -> Any:
    """``value`` (a string from the environment, a TOML or JSON value) as the field's type."""
    if annotation in (bool, "bool"):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"expected true/false, got {value!r}")
    if annotation in (int, "int"):
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(f"expected a whole number, got {value!r}")
        return int(value)
    if annotation in (float, "float"):
        if isinstance(value, bool):
            raise ValueError(f"expected a number, got {value!r}")
        return float(value)
    text = str(value)
    if choices and text not in choices:
        raise ValueError(f"expected one of {', '.join(choices)}, got {text!r}")
    return text


def check_names(schema: type, names: Any, where: str) -> None:
    """Refuse settings the schema does not have (a typo would otherwise be ignored)."""
    unknown = sorted(set(names) - _names(schema))
    if unknown:
        raise ValueError(f"{where}unknown setting(s) {', '.join(unknown)}")


def layered(schema: type, given: Mapping[str, Any], environ: Mapping[str, str], file_values: Mapping[str, Any],
            file_path: Path | None = None, stored: Mapping[str, Any] | None = None) -> tuple[dict, dict]:
    """Each field of ``schema`` from the first layer that has it: caller, environment, file, stored, default.

    Args:
        schema: The settings dataclass.
        given: The caller's values (``None`` means "not given").
        environ: The ``GREPGRAPH_*`` variables.
        file_values: The file's table for this schema.
        file_path: The file, for error messages.
        stored: What the index was built with (index settings).

    Returns:
        ``(values, sources)``: the value of every field and the layer it came from.
    """
    check_names(schema, given, "")
    check_names(schema, file_values, f"{file_path}: ")
    hints = _type_hints(schema)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for f in schema_fields(schema):
        name, choices = f.name, f.metadata.get("choices", ())
        variable = env_name(name)
        from_environment = environ.get(variable)
        if given.get(name) is not None:
            layer, raw, label = CALLER, given[name], f"{name} = {given[name]!r}"
        elif from_environment is not None:
            layer, raw, label = ENVIRONMENT, from_environment, f"{variable}={from_environment!r}"
        elif name in file_values:
            layer, raw, label = FILE, file_values[name], f"{file_path}: {name} = {file_values[name]!r}"
        elif stored and name in stored:
            layer, raw, label = INDEX, stored[name], f"the index's {name} = {stored[name]!r}"
        else:
            values[name], sources[name] = default_of(f), DEFAULT
            continue
        try:
            values[name] = coerce(raw, hints[name], choices)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{label}: {error}") from None
        sources[name] = layer
    return values, sources


def describe_index_settings() -> list[tuple[str, Any, str]]:
    """``(name, default, description)`` of every index setting (for ``grepgraph init`` and docs)."""
    return [(f.name, default_of(f), f.metadata["description"]) for f in fields(IndexSettings)]


def resolve_index_settings(repo: Path | str, given: Mapping[str, Any] | None = None,
                           stored: IndexSettings | None = None,
                           environ: Mapping[str, str] | None = None) -> tuple[IndexSettings, dict[str, str]]:
    """The settings the next ``index`` run uses, and where each came from.

    Args:
        repo: The repository (its ``grepgraph.toml`` is read).
        given: Command-line values (``None``: not given).
        stored: What the index was built with (``None``: no index yet).
        environ: The ``GREPGRAPH_*`` variables (default: the process's).
    """
    environ = environment() if environ is None else environ
    file_values, path = file_settings(repo, INDEX_TABLE, environ)
    values, sources = layered(IndexSettings, given or {}, environ, file_values, path,
                              stored.to_dict() if stored else None)
    return IndexSettings(**values), sources


def resolve_service_settings(repo: Path | str | None, given: Mapping[str, Any] | None = None,
                             environ: Mapping[str, str] | None = None) -> ServiceSettings:
    """The service's settings: flags, else ``GREPGRAPH_*``, else the file's ``[service]`` table, else defaults."""
    environ = environment() if environ is None else environ
    file_values, path = file_settings(repo, SERVICE_TABLE, environ)
    values, _ = layered(ServiceSettings, given or {}, environ, file_values, path)
    return ServiceSettings(**values)


def describe_service_settings() -> list[tuple[str, Any, str]]:
    """``(name, default, description)`` of every service setting (for ``grepgraph init``)."""
    return [(f.name, default_of(f), f.metadata["description"]) for f in fields(ServiceSettings)]


def outside_value(name: str, repo: Path | str | None, default: str | None = None,
                  environ: Mapping[str, str] | None = None) -> str | None:
    """A run setting from the environment, else the file, else ``default`` (for code outside the graph)."""
    environ = environment() if environ is None else environ
    if env_name(name) in environ:
        return environ[env_name(name)]
    file_values, _ = file_settings(repo, RUN_TABLE, environ)
    return str(file_values[name]) if name in file_values else default


def ollama_url(repo: Path | str | None = None) -> str:
    """The Ollama server for embeddings outside a graph run: the ``llm_base_url`` setting (environment, file)."""
    return outside_value("llm_base_url", repo) or DEFAULT_LLM_BASE_URL


def default_repo(environ: Mapping[str, str] | None = None) -> str:
    """The repository when none is given: ``$GREPGRAPH_REPO``, else ``$GREPGRAPH_CONFIG``'s ``repo``, else cwd."""
    return outside_value("repo", None, environ=environ) or os.getcwd()
