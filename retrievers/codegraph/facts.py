"""What call resolution works with and answers: a definition's key, the facts read about one file, a resolution.

Shared by :mod:`~retrievers.codegraph.call_resolution`, :mod:`~retrievers.codegraph.local_types` and
:mod:`~retrievers.codegraph.symbols`, so none of them needs another for its vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .language_rules import JS_LANGUAGES

# How a call resolved (``Resolution.status``), as callers and callees report it.
RESOLVED = "resolved"
BY_NAME = "by name only"
EXTERNAL = "external"
BUILTIN = "built-in"
UNRESOLVED = "unresolved"

Key = tuple[str, str]
"""A definition: (path, qualified symbol)."""


@dataclass(frozen=True)
class Resolution:
    """Where a call goes: in-repo definitions, a name outside the repository, or nowhere known."""

    status: str
    targets: tuple[Key, ...] = ()
    name: str = ""  # the dotted name outside the repository, for EXTERNAL

    @staticmethod
    def to(targets: list[Key] | tuple[Key, ...]) -> Resolution:
        """RESOLVED to ``targets`` (de-duplicated), or UNRESOLVED when there are none."""
        unique = tuple(dict.fromkeys(targets))
        return Resolution(RESOLVED, unique) if unique else Resolution(UNRESOLVED)


UNKNOWN = Resolution(UNRESOLVED)


@dataclass
class FileFacts:
    """What one indexed file defines, imports and inherits."""

    path: str
    language: str
    kinds: dict[str, str] = field(default_factory=dict)  # symbol -> kind
    imports: list[tuple[str, str]] = field(default_factory=list)  # (scope, target as written)
    aliases: list[tuple[str, str, str]] = field(default_factory=list)  # (scope, bound name, target)
    bases: dict[str, list[str]] = field(default_factory=dict)  # class symbol -> base names as written
    types: list[tuple[str, str, str]] = field(default_factory=list)  # (scope, name, annotation or ``call()``)

    def bindings(self, scope: str, name: str) -> list[str]:
        """Import targets ``name`` is bound to in ``scope`` (module-level imports count everywhere)."""
        visible = [t for s, n, t in self.aliases if n == name and _encloses(s, scope)]
        if self.language in JS_LANGUAGES:
            return visible  # JS import edges name only modules; every bound name is an ``aliases`` edge
        if self.language == "go":
            aliased = {t for _, _, t in self.aliases}  # ``c "pkg/client"`` binds ``c``, not ``client``
            return visible + [t for s, t in self.imports
                              if t not in aliased and _go_package_name(t) == name and _encloses(s, scope)]
        visible += [t for s, t in self.imports if _bound_name(t) == name and _encloses(s, scope)]
        return visible


def _encloses(scope: str, inner: str) -> bool:
    return not scope or inner == scope or inner.startswith(scope + ".")


def _bound_name(target: str) -> str:
    """The name ``from a import b`` / ``import a.b`` binds for calls (``b``; aliases are separate edges)."""
    return target.rstrip(".").rsplit(".", 1)[-1].rsplit("/", 1)[-1]


def _go_package_name(import_path: str) -> str:
    """The name a Go import binds by convention: ``a/b/v2`` -> ``b``, ``gopkg.in/yaml.v3`` -> ``yaml``."""
    parts = [p for p in import_path.split("/") if p]
    if len(parts) > 1 and parts[-1][:1] == "v" and parts[-1][1:].isdigit():
        parts.pop()
    last = parts[-1] if parts else ""
    stem, dot, version = last.rpartition(".")
    return stem if dot and version[:1] == "v" and version[1:].isdigit() else last
