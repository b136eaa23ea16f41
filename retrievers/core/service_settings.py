"""The settings of the resident per-repository search service: its schema, and how they are settled."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .settings import SERVICE_TABLE, default_of, environment, file_settings, layered, setting


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
