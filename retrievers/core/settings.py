"""Where every setting comes from, decided in one place: the layers, the environment, the file.

Each setting is a field of a settings dataclass (the graph's run settings, ``graphs.context.Context``; the
index's build settings, :mod:`~retrievers.core.index_settings`; the service's,
:mod:`~retrievers.core.service_settings`), and takes the first value found in these layers:

1. the caller: ``graph.invoke(..., context={...})``, a command-line flag;
2. the environment: ``GREPGRAPH_<FIELD>`` (``GREPGRAPH_LIMIT=5``, ``GREPGRAPH_VIEWS=card``);
3. ``grepgraph.toml``: the file named by ``$GREPGRAPH_CONFIG``, else the one at the repository's root.
   Run settings are its top-level keys (or a ``[grepgraph]`` table), index settings its ``[index]`` table;
4. what the index was built with (index settings only), then the field's default.

This module holds the mechanism, not the fields. It is the only one that reads ``GREPGRAPH_*`` variables
(everything else asks :func:`environment`) and the only one that reads ``grepgraph.toml``; everything else
receives values.
"""

from __future__ import annotations

import os
import pwd
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import MISSING, Field, field, fields
from functools import cache
from pathlib import Path
from typing import Any, get_type_hints

from .repo_trust import without_untrusted

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
# Process-wide switches that only make sense in the environment (not per repository or per call).
EMBEDDING_CACHE_ENV = "GREPGRAPH_EMBEDDING_CACHE"
DEBUG_ENV = "GREPGRAPH_DEBUG"

# Names of the layers, as reported by ``grepgraph status`` and in error messages.
CALLER, ENVIRONMENT, FILE, INDEX, DEFAULT = "caller", "environment", "grepgraph.toml", "index", "default"


def setting(default: Any, description: str, choices: tuple[str, ...] = (), secret: bool = False) -> Any:
    """A settings field: its default, what it does, and (for a few) the values it accepts.

    A ``secret`` (an API key) is left out of the dataclass's ``repr``, so printing or logging the settings
    never shows it; set it in the environment (``GREPGRAPH_<NAME>``) rather than in a file.
    """
    return field(default=default, repr=not secret,
                 metadata={"description": description, "choices": choices, "secret": secret})


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


def unset_variables(field_names: Iterable[str]) -> None:
    """Remove ``GREPGRAPH_<FIELD>`` of each field from this process's environment (the service: see its use)."""
    for name in field_names:
        os.environ.pop(env_name(name), None)


def embedding_cache_setting() -> str:
    """``$GREPGRAPH_EMBEDDING_CACHE`` (a path, ``off``, or empty for the default place)."""
    return environment().get(EMBEDDING_CACHE_ENV, "")


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME``, else ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def user_config_dir() -> Path:
    """``$XDG_CONFIG_HOME``, else the user's ``~/.config``: their own settings, outside every repository.

    The home folder is the account's, not ``$HOME``: MCP clients start servers with a home of their own, and the
    user's index key must be found there too.
    """
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path(pwd.getpwuid(os.getuid()).pw_dir) / ".config")


def debug_enabled() -> bool:
    """``GREPGRAPH_DEBUG`` set: the CLI shows tracebacks instead of one-line errors."""
    return bool(environment().get(DEBUG_ENV))


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
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not valid TOML ({error})") from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise ValueError(f"{path}: not valid TOML (nested too deeply)") from None
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
    for name in (INDEX_TABLE, SERVICE_TABLE):
        if not all(isinstance(where.get(name, {}), dict) for where in (data, root)):
            raise ValueError(f"{path}: [{name}] must be a table")
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
    values = file_tables(read_config(path), path)[table]
    if CONFIG_ENV not in (environment() if environ is None else environ):  # the repository's own file
        values = without_untrusted(values, path, user_config_dir())
    return values, path


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


def outside_value(name: str, repo: Path | str | None, default: str | None = None,
                  environ: Mapping[str, str] | None = None) -> str | None:
    """A run setting from the environment, else the file, else ``default`` (for code outside the graph)."""
    environ = environment() if environ is None else environ
    if env_name(name) in environ:
        return environ[env_name(name)]
    file_values, _ = file_settings(repo, RUN_TABLE, environ)
    return str(file_values[name]) if name in file_values else default


