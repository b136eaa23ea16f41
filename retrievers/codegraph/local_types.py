"""The class a variable holds, as far as the code states it: what lets ``response.read()`` resolve.

The indexer records ``types`` edges (``name: Foo`` for an annotation or a parameter's type, ``name: make()``
for an assignment of a call's result, ``name: ~other`` for an assignment of another name, ``self.name: ...``
for an attribute). A name's class is then:

- the class an annotation names (``Foo``, ``Optional["Foo"]``, ``Foo | None``: the one in-repo class),
- the class a call constructs (``Foo()``), or the class a called function's signature says it returns
  (``def make() -> Foo``),
- for ``self.name`` / ``this.name``: what any method of the class assigns to it, a class-level annotation, or the
  return type of a property of that name.

Only one class is an answer: a name bound to two different classes stays unknown, and so do names
the code gives no type for (the call is then listed *by name only*, as before).
"""

from __future__ import annotations

import re
import sqlite3
from typing import Protocol

from ..core.model import CALLABLE_KINDS
from ..lexical.tokenize import DOTTED_NAME_PATTERN
from ..parse.cards import return_type_text
from .facts import BUILTIN, EXTERNAL, FileFacts, Key, Resolution

MAX_TYPING_DEPTH = 4
"""Assignments followed through (``a = make()`` where ``make`` returns ``b``'s type ...)."""
ALIAS_MARK = "~"
"""``name: ~other``: ``name`` was assigned ``other`` and has its type."""
OUTSIDE = frozenset({BUILTIN, EXTERNAL})
_DOTTED = re.compile(DOTTED_NAME_PATTERN)
# Names in annotations that wrap or qualify the class rather than name it.
_TYPING_WRAPPERS = frozenset({"Optional", "Union", "None", "Type", "type", "ClassVar", "Final", "Annotated",
                              "typing", "t"})


class Resolver(Protocol):
    """What :class:`LocalTypes` asks of the call resolver it works for (``call_resolution.CallResolver``)."""

    connection: sqlite3.Connection

    def facts(self, path: str) -> FileFacts:
        """What ``path`` defines, imports and inherits."""

    def is_class(self, key: Key) -> bool:
        """Whether ``key`` is a class-like definition."""

    def base_classes(self, owner: Key, hops: int = 0) -> list[Key]:
        """The in-repo classes ``owner`` directly derives from."""

    def resolve(self, path: str, source: str, target: str) -> Resolution:
        """Where the call ``target``, written in ``source`` of ``path``, goes."""

    def resolve_name(self, facts: FileFacts, scope: str, dotted: str, hops: int = 0) -> Resolution:
        """A dotted name as seen from ``scope`` in a file."""


class LocalTypes:
    """Infers the class behind a variable or attribute name for one call resolver."""

    def __init__(self, resolver: Resolver) -> None:  # noqa: D107
        self.resolver = resolver
        self._in_progress: set[tuple[str, str, str]] = set()
        self._returns: dict[Key, list[Key]] = {}

    def of_name(self, facts: FileFacts, scope: str, name: str) -> list[Key]:
        """Classes ``name`` holds in ``scope``: the innermost scope that types it decides."""
        typed = self._typings(facts, scope, name)
        return self._classes(facts, typed[0], name, typed[1]) if typed else []

    def stated_elsewhere(self, facts: FileFacts, scope: str, name: str) -> bool:
        """Whether the code types ``name`` only with classes from outside the repository (``dict``, ``bytes``)."""
        typed = self._typings(facts, scope, name)
        if typed is None:
            return False
        where, specs = typed
        marker = (facts.path, where, "outside " + name)
        if marker in self._in_progress or len(self._in_progress) >= MAX_TYPING_DEPTH:
            return False
        self._in_progress.add(marker)
        try:
            return all(self._outside(facts, where, spec) for spec in specs)
        finally:
            self._in_progress.discard(marker)

    def _typings(self, facts: FileFacts, scope: str, name: str) -> tuple[str, list[str]] | None:
        """The innermost scope around ``scope`` that states ``name``'s type, and what it states."""
        for prefix in [scope, *_enclosing(scope)]:
            if prefix != scope and self.resolver.is_class((facts.path, prefix)):
                continue  # a class body is no scope for its methods' names
            specs = [spec for where, typed, spec in facts.types if typed == name and where == prefix]
            if specs:
                return prefix, specs
        return None

    def _outside(self, facts: FileFacts, scope: str, spec: str) -> bool:
        """An annotation whose every name, or a call whose callee, lies outside the repository."""
        if spec.startswith(ALIAS_MARK):
            return self.stated_elsewhere(facts, scope, spec[len(ALIAS_MARK):])
        if spec.endswith("()"):
            return self.resolver.resolve(facts.path, scope, spec[:-2]).status in OUTSIDE
        names = _annotation_names(spec)
        return bool(names) and all(self.resolver.resolve_name(facts, scope, dotted).status in OUTSIDE
                                   for dotted in names)

    def of_attribute(self, owner: Key, attribute: str) -> list[Key]:
        """Classes ``self.attribute`` holds in instances of ``owner`` (or of the classes it derives from)."""
        for path, symbol in self._class_and_bases(owner):
            facts = self.resolver.facts(path)
            assigned = [(where, typed, spec) for where, typed, spec in facts.types
                        if (typed in (f"self.{attribute}", f"this.{attribute}") and where.startswith(symbol + "."))
                        or (typed == attribute and where == symbol)]
            found: list[Key] = []
            for where, typed, spec in assigned:
                found += self._classes(facts, where, typed, [spec])
            if not assigned and facts.kinds.get(f"{symbol}.{attribute}") in CALLABLE_KINDS:
                found = self.returned_classes((path, f"{symbol}.{attribute}"))  # a property
            if assigned or found:
                return list(dict.fromkeys(found))
        return []

    def _class_and_bases(self, owner: Key) -> list[Key]:
        """``owner``, then its base classes breadth first (a few levels)."""
        order, frontier = [owner], [owner]
        for _ in range(MAX_TYPING_DEPTH):
            frontier = [base for cls in frontier for base in self.resolver.base_classes(cls) if base not in order]
            order += frontier
        return order

    def returned_classes(self, function: Key) -> list[Key]:
        """The in-repo classes a function's signature says it returns."""
        if function not in self._returns:
            self._returns[function] = []  # a recursive return type resolves to nothing
            row = self.resolver.connection.execute(
                "SELECT signature FROM chunks WHERE path = ? AND symbol = ?"
                " ORDER BY kind IN ('module', 'text') LIMIT 1", function).fetchone()  # not its same-named file's
            name = function[1].rsplit(".", 1)[-1]
            returned = return_type_text(row[0], name) if row and row[0] else ""
            self._returns[function] = self._annotated(self.resolver.facts(function[0]), function[1], returned)
        return self._returns[function]

    def _classes(self, facts: FileFacts, scope: str, name: str, specs: list[str]) -> list[Key]:
        marker = (facts.path, scope, name)
        if marker in self._in_progress or len(self._in_progress) >= MAX_TYPING_DEPTH:
            return []
        self._in_progress.add(marker)
        try:
            found: list[Key] = []
            for spec in specs:
                if spec.startswith(ALIAS_MARK):
                    found += self.of_name(facts, scope, spec[len(ALIAS_MARK):])
                elif spec.endswith("()"):
                    found += self._produced(facts, scope, spec[:-2])
                else:
                    found += self._annotated(facts, scope, spec)
            return list(dict.fromkeys(found))
        finally:
            self._in_progress.discard(marker)

    def _produced(self, facts: FileFacts, scope: str, callee: str) -> list[Key]:
        """What calling ``callee`` gives: the class it constructs or the class its signature returns."""
        found: list[Key] = []
        for key in self.resolver.resolve(facts.path, scope, callee).targets:
            kind = self.resolver.facts(key[0]).kinds.get(key[1])
            if self.resolver.is_class(key):
                found.append(key)
            elif kind in CALLABLE_KINDS:
                found += self.returned_classes(key)
        return found

    def _annotated(self, facts: FileFacts, scope: str, annotation: str) -> list[Key]:
        """The in-repo classes an annotation names (string annotations included)."""
        found: list[Key] = []
        for dotted in _annotation_names(annotation):
            found += [key for key in self.resolver.resolve_name(facts, scope, dotted).targets
                      if self.resolver.is_class(key)]
        return list(dict.fromkeys(found))


def _annotation_names(annotation: str) -> list[str]:
    """The dotted names an annotation spells (string annotations too), minus the typing wrappers around them."""
    return [dotted for dotted in _DOTTED.findall(annotation.replace('"', " ").replace("'", " "))
            if dotted not in _TYPING_WRAPPERS and dotted.split(".", 1)[0] not in ("typing", "t")]


def _enclosing(scope: str) -> list[str]:
    """``A.f.g`` -> ``A.f``, ``A``, ``""`` (module level)."""
    parts = scope.split(".") if scope else []
    return [".".join(parts[:n]) for n in range(len(parts) - 1, -1, -1)]
