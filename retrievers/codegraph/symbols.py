"""The symbol graph: definitions, callers, callees, class hierarchy and importers.

Edges are stored as written (``self.save``, ``os.path.join``, ``.store.GraphStore``) and
resolved at query time. Calls go through :class:`~retrievers.codegraph.call_resolution.CallResolver`:
a caller is *resolved* when its call reaches the definition asked about, and listed *by name
only* when the call's receiver has no type the code states (``client.send(...)`` on a
parameter). Hierarchy and importers still match by name: a reference matches a symbol when
it names it exactly or ends with ``.<name>``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .call_resolution import CallResolver
from .facts import BUILTIN, BY_NAME, EXTERNAL, RESOLVED, UNRESOLVED, Key
from .language_rules import CONSTRUCTOR_NAMES, JS_DEFAULT_EXPORT, JS_NAMESPACE

MAX_ROWS = 200
BY_NAME_CALLEES_PER_CALL = 3
"""Same-named definitions listed for a call whose receiver is unknown."""
# Callees are listed in-repo definitions first, library calls next, built-ins last.
CALLEE_ORDER = {RESOLVED: 0, BY_NAME: 1, EXTERNAL: 2, BUILTIN: 3}


@dataclass
class SymbolRef:
    """A definition (or a reference site) found in the symbol graph."""

    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    line: int = 0
    via: str = ""
    resolution: str = ""  # for calls: resolved, by name only, external or built-in

    def to_dict(self) -> dict:  # noqa: D102
        return {"path": self.path, "symbol": self.symbol, "kind": self.kind, "start_line": self.start_line,
                "end_line": self.end_line, "line": self.line or self.start_line, "via": self.via,
                "resolution": self.resolution}


def _like(text: str) -> str:
    r"""Escape a literal for a LIKE pattern (with ESCAPE '\')."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _name(reference: str) -> str:
    return reference.replace("::", ".").rsplit(".", 1)[-1]


def _same_case(refs: list[SymbolRef], name: str) -> list[SymbolRef]:
    """The definitions spelled as asked (``Request``, not ``request``) when there are any."""
    exact = [ref for ref in refs if _name(ref.symbol) == _name(name)]
    return exact or refs


class SymbolGraph:
    """Queries over the ``chunks`` and ``edges`` tables of an index."""

    def __init__(self, connection: sqlite3.Connection) -> None:  # noqa: D107
        self.connection = connection

    def definitions(self, name: str) -> list[SymbolRef]:
        """Where ``name`` (``store_parse_result`` or ``GraphStore.store_parse_result``) is defined."""
        name = name.replace("::", ".").strip(".")
        rows = self.connection.execute(
            "SELECT path, symbol, kind, start_line, end_line FROM chunks WHERE name = ? COLLATE NOCASE"
            " AND kind NOT IN ('module', 'text') ORDER BY is_test, path, start_line LIMIT ?",
            (_name(name), MAX_ROWS),
        ).fetchall()
        # A long definition may be stored as several windows: one entry per (path, symbol).
        refs = list({(row[0], row[1]): SymbolRef(*row) for row in reversed(rows)}.values())[::-1]
        if "." in name:
            wanted = name.lower()
            exact = [r for r in refs if r.symbol.lower() == wanted or r.symbol.lower().endswith("." + wanted)]
            refs = exact or refs
        # Exact-case matches first: ``Searcher`` before ``searcher``.
        return sorted(refs, key=lambda r: _name(r.symbol) != _name(name))

    def _enclosing(self, path: str, source: str, line: int) -> SymbolRef:
        """The chunk a reference sits in (its source symbol, or the module).

        A definition named like its file (``finalize`` in ``finalize.ts``) shares its symbol with
        the module remainder's chunks, and overloads (Java) share theirs: the definition whose lines
        hold the reference is the one meant.
        """
        if source:
            row = self.connection.execute(
                "SELECT path, symbol, kind, start_line, end_line FROM chunks WHERE path = ? AND symbol = ?"
                " ORDER BY kind IN ('module', 'text'), NOT (start_line <= ? AND ? <= end_line), part, start_line"
                " LIMIT 1", (path, source, line, line)).fetchone()
            if row:
                return SymbolRef(row[0], row[1], row[2], row[3], row[4], line=line)
        row = self.connection.execute(
            "SELECT path, symbol, kind, start_line, end_line FROM chunks WHERE path = ? AND start_line <= ?"
            " AND end_line >= ? ORDER BY (end_line - start_line) LIMIT 1", (path, line, line)).fetchone()
        if row:
            return SymbolRef(row[0], row[1], row[2], row[3], row[4], line=line)
        return SymbolRef(path, source or path, "module", line, line, line)

    def _references_to(self, name: str, kind: str) -> list[tuple[str, str, str, int]]:
        short = _name(name)
        return self.connection.execute(
            "SELECT path, source, target, line FROM edges WHERE kind = ? AND (target = ? COLLATE NOCASE"
            " OR target LIKE ? ESCAPE '\\') ORDER BY path, line LIMIT ?",
            (kind, short, "%." + _like(short), MAX_ROWS * 5),
        ).fetchall()

    def callers(self, name: str) -> list[SymbolRef]:
        """Who calls ``name``, one reference per call site (a caller calling twice is listed at both lines).

        Calls resolved to its definitions come first, then same-named calls *by name only*.

        A call is resolved when the code says where it goes (``self.m()``, an imported name, a
        constructor); one that resolves elsewhere (a library's method of the same name) is left
        out, and one whose receiver's type is unknown is listed by name only — except from the
        definition's own body, where it is a wrapper delegating to another object's method.
        A call through an import alias (``Shelf()`` for ``Store``) counts only when resolved:
        unresolved, it shares no name with the definition.
        """
        definitions = _same_case(self.definitions(name), name)
        if not definitions:
            return self.callers_by_name(name)
        wanted = self._call_targets_of(definitions)
        bare_names = self._called_names(definitions)
        resolver = CallResolver(self.connection)
        resolved: dict[tuple[str, str, int], SymbolRef] = {}
        by_name: dict[tuple[str, str, int], SymbolRef] = {}
        for path, source, target, line in self._call_sites(definitions):
            resolution = resolver.resolve(path, source, target)
            if resolution.status == RESOLVED and wanted.intersection(resolution.targets):
                bucket, label = resolved, RESOLVED
            elif resolution.status == UNRESOLVED and _name(target) in bare_names and (path, source) not in wanted:
                bucket, label = by_name, BY_NAME
            else:
                continue
            ref = self._enclosing(path, source, line)
            ref.via, ref.resolution = target, label
            bucket.setdefault((ref.path, ref.symbol, ref.line), ref)
        listed = list(resolved.values()) + [ref for key, ref in by_name.items() if key not in resolved]
        return listed[:MAX_ROWS]

    def callers_by_name(self, name: str) -> list[SymbolRef]:
        """Every call whose last name part is ``name``'s, one per call site, all labelled by name only.

        The resolver's baseline, and the answer for a name the repository does not define.
        """
        found: dict[tuple[str, str, int], SymbolRef] = {}
        for path, source, target, line in self._references_to(name, "calls"):
            if _name(target) != _name(name):
                continue
            ref = self._enclosing(path, source, line)
            ref.via, ref.resolution = target, BY_NAME
            found.setdefault((ref.path, ref.symbol, ref.line), ref)
        return list(found.values())[:MAX_ROWS]

    @staticmethod
    def _call_targets_of(definitions: list[SymbolRef]) -> set[Key]:
        """The definitions a call may resolve to; a constructor is also reached by calling its class."""
        wanted = {(d.path, d.symbol) for d in definitions}
        for d in definitions:
            if (d.kind == "constructor" or _name(d.symbol) in CONSTRUCTOR_NAMES) and "." in d.symbol:
                wanted.add((d.path, d.symbol.rsplit(".", 1)[0]))
        return wanted

    @staticmethod
    def _called_names(definitions: list[SymbolRef]) -> set[str]:
        """The bare names a call to the definitions is written with (a constructor: its class's)."""
        names = {_name(d.symbol) for d in definitions}
        return names | {_name(d.symbol.rsplit(".", 1)[0]) for d in definitions
                        if (d.kind == "constructor" or _name(d.symbol) in CONSTRUCTOR_NAMES) and "." in d.symbol}

    def _call_sites(self, definitions: list[SymbolRef]) -> list[tuple[str, str, str, int]]:
        """Call edges whose target ends with a definition's name, its class's or a name it is imported as."""
        names = self._called_names(definitions)
        names |= self._aliases_of(names) | self._default_import_names(definitions)
        return [site for short in sorted(names) for site in self._references_to(short, "calls")
                if _name(site[2]) == short]

    def _aliases_of(self, names: set[str]) -> set[str]:
        """Names the definitions are imported as (``from m import Store as Shelf`` -> ``Shelf``)."""
        aliases: set[str] = set()
        for short in names:
            for (target,) in self.connection.execute(
                    "SELECT target FROM edges WHERE kind = 'aliases' AND (target LIKE ? ESCAPE '\\'"
                    " OR target LIKE ? ESCAPE '\\')", (_like(short) + " as %", "%." + _like(short) + " as %")):
                aliases.add(target.rpartition(" as ")[2])
        return aliases - {JS_DEFAULT_EXPORT, JS_NAMESPACE}

    def _default_import_names(self, definitions: list[SymbolRef]) -> set[str]:
        """Local names of default and whole-module imports, when a definition is its module's default export."""
        exported = any(self.connection.execute(
            "SELECT 1 FROM edges WHERE kind = 'aliases' AND path = ? AND target = ?",
            (d.path, f"{d.symbol} as {JS_DEFAULT_EXPORT}")).fetchone() for d in definitions)
        if not exported:
            return set()
        # ``import Shelf from "./store"``; ``const scan = require("./scan")`` runs the module's default too
        patterns = (f"%.{JS_DEFAULT_EXPORT} as %", f"%.{JS_NAMESPACE} as %")
        return {target.rpartition(" as ")[2] for (target,) in self.connection.execute(
            "SELECT DISTINCT target FROM edges WHERE kind = 'aliases' AND (target LIKE ? OR target LIKE ?)",
            patterns)} - {JS_NAMESPACE}

    def callees(self, name: str) -> list[SymbolRef]:
        """What ``name``'s definitions call: in-repo definitions, then by-name guesses, externals, built-ins."""
        resolver = CallResolver(self.connection)
        found: dict[tuple[str, str], SymbolRef] = {}
        for definition in _same_case(self.definitions(name), name):
            for target, line in self.connection.execute(
                "SELECT target, line FROM edges WHERE kind = 'calls' AND path = ? AND source = ? ORDER BY line",
                (definition.path, definition.symbol),
            ):
                for ref in self._callee_refs(resolver, definition, target, line):
                    found.setdefault((ref.path, ref.symbol), ref)
        ordered = sorted(found.values(), key=lambda ref: (CALLEE_ORDER.get(ref.resolution, 2), ref.line))
        return ordered[:MAX_ROWS]

    def _callee_refs(self, resolver: CallResolver, caller: SymbolRef, target: str, line: int) -> list[SymbolRef]:
        resolution = resolver.resolve(caller.path, caller.symbol, target)
        if resolution.status == RESOLVED:
            refs = [self._definition_ref(key) for key in resolution.targets]
            label = RESOLVED
        elif resolution.status == UNRESOLVED:
            refs = [ref for ref in self.definitions(_name(target))
                    if (ref.path, ref.symbol) != (caller.path, caller.symbol)][:BY_NAME_CALLEES_PER_CALL]
            label = BY_NAME
        else:
            refs, label = [], resolution.status
        if not refs:  # a library's or a built-in's
            label = BUILTIN if resolution.status == BUILTIN else EXTERNAL
            refs = [SymbolRef("", resolution.name or target, "external", 0, 0)]
        for ref in refs:
            ref.line, ref.via, ref.resolution = line, target, label
        return refs

    def _definition_ref(self, key: Key) -> SymbolRef:
        row = self.connection.execute(
            "SELECT path, symbol, kind, start_line, end_line FROM chunks WHERE path = ? AND symbol = ?"
            " ORDER BY kind IN ('module', 'text'), part LIMIT 1", key).fetchone()
        return SymbolRef(*row) if row else SymbolRef(key[0], key[1], "function", 0, 0)

    def text_at(self, ref: SymbolRef) -> tuple[str, int]:
        """The stored text of the chunk ``ref`` points into, and the line that text starts at.

        For a long definition, the window that holds the referencing line; a definition's chunk
        before a same-named module remainder's (``finalize`` in ``finalize.ts``).
        """
        line = ref.line or ref.start_line
        # part 0 spans its whole definition: among the chunks holding the line, the last window is the one
        # whose text does; a line elsewhere (a callee's, whose reference line is its caller's) reads part 0
        row = self.connection.execute(
            "SELECT text, start_line FROM (SELECT text, start_line, kind, part,"
            " (start_line <= ? AND ? <= end_line) AS holds FROM chunks WHERE path = ? AND symbol = ?)"
            " ORDER BY kind != ?, holds DESC, CASE WHEN holds THEN -part ELSE part END LIMIT 1",
            (line, line, ref.path, ref.symbol, ref.kind)).fetchone()
        return (row[0], row[1]) if row else ("", ref.start_line)

    def subclasses(self, name: str) -> list[SymbolRef]:
        """Classes (and Rust/Go types) that inherit from or implement ``name``."""
        found: dict[tuple[str, str], SymbolRef] = {}
        for path, source, target, line in self._references_to(name, "inherits"):
            ref = self._enclosing(path, source, line)
            ref.via = target
            found.setdefault((ref.path, ref.symbol), ref)
        return list(found.values())

    def bases(self, name: str) -> list[SymbolRef]:
        """What ``name`` inherits from, resolved to definitions where possible."""
        found: dict[tuple[str, str], SymbolRef] = {}
        for definition in self.definitions(name):
            for target, line in self.connection.execute(
                "SELECT target, line FROM edges WHERE kind = 'inherits' AND path = ? AND source = ?",
                (definition.path, definition.symbol),
            ):
                targets = self.definitions(target) or [SymbolRef("", target, "external", 0, 0)]
                for ref in targets[:3]:
                    ref.line, ref.via = line, target
                    found.setdefault((ref.path, ref.symbol), ref)
        return list(found.values())

    def importers(self, name: str) -> list[SymbolRef]:
        """Modules that import ``name`` (a module or a symbol inside one)."""
        name = name.replace("::", ".").replace("/", ".").strip(".")
        last = _like(_name(name))
        found: dict[str, SymbolRef] = {}
        # Absolute (``pkg.mod``, ``pkg.mod.Name``) and relative (``.mod``, ``..mod.Name``) spellings.
        for path, source, target, line in self.connection.execute(
            "SELECT path, source, target, line FROM edges WHERE kind = 'imports' AND (target = ? COLLATE NOCASE"
            " OR target LIKE ? ESCAPE '\\' OR target LIKE ? ESCAPE '\\' OR target LIKE ? ESCAPE '\\'"
            " OR target LIKE ? ESCAPE '\\') ORDER BY path, line LIMIT ?",
            (name, "%." + _like(name), _like(name) + ".%", "%." + last + ".%", "%/" + last, MAX_ROWS * 5),
        ):
            found.setdefault(path, SymbolRef(path, source or path.rsplit("/", 1)[-1], "module", line, line,
                                             line, via=target))
        return list(found.values())

    def hierarchy(self, name: str) -> dict:
        """Bases and subclasses of ``name`` together."""
        return {"symbol": name, "bases": [r.to_dict() for r in self.bases(name)],
                "subclasses": [r.to_dict() for r in self.subclasses(name)]}
