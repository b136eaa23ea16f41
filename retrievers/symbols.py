"""The symbol graph: definitions, callers, callees, class hierarchy and importers.

Edges are stored as written (``self.save``, ``os.path.join``, ``.store.GraphStore``) and
resolved here, at query time, by name: a reference matches a symbol when it names it
exactly or ends with ``.<name>``. That is deliberately forgiving — Python has no
static types to resolve ``obj.save`` — so results list every plausible match.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

MAX_ROWS = 200


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

    def to_dict(self) -> dict:  # noqa: D102
        return {"path": self.path, "symbol": self.symbol, "kind": self.kind, "start_line": self.start_line,
                "end_line": self.end_line, "line": self.line or self.start_line, "via": self.via}


def _like(text: str) -> str:
    r"""Escape a literal for a LIKE pattern (with ESCAPE '\')."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _name(reference: str) -> str:
    return reference.replace("::", ".").rsplit(".", 1)[-1]


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
        refs = [SymbolRef(*row) for row in rows]
        if "." in name:
            wanted = name.lower()
            exact = [r for r in refs if r.symbol.lower() == wanted or r.symbol.lower().endswith("." + wanted)]
            refs = exact or refs
        # Exact-case matches first: ``Searcher`` before ``searcher``.
        return sorted(refs, key=lambda r: _name(r.symbol) != _name(name))

    def _enclosing(self, path: str, source: str, line: int) -> SymbolRef:
        """The chunk a reference sits in (its source symbol, or the module)."""
        if source:
            row = self.connection.execute(
                "SELECT path, symbol, kind, start_line, end_line FROM chunks WHERE path = ? AND symbol = ?"
                " ORDER BY start_line LIMIT 1", (path, source)).fetchone()
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
        """Functions, methods and modules that call ``name`` (one entry per calling symbol)."""
        found: dict[tuple[str, str], SymbolRef] = {}
        for path, source, target, line in self._references_to(name, "calls"):
            if _name(target) != _name(name):
                continue
            ref = self._enclosing(path, source, line)
            ref.via = target
            found.setdefault((ref.path, ref.symbol), ref)
        return list(found.values())[:MAX_ROWS]

    def callees(self, name: str) -> list[SymbolRef]:
        """What ``name``'s definitions call, resolved to definitions in the repository where possible."""
        found: dict[tuple[str, str], SymbolRef] = {}
        for definition in self.definitions(name):
            for target, line in self.connection.execute(
                "SELECT target, line FROM edges WHERE kind = 'calls' AND path = ? AND source = ? ORDER BY line",
                (definition.path, definition.symbol),
            ):
                targets = self.definitions(target)
                if not targets:
                    found.setdefault(("", target), SymbolRef("", target, "external", 0, 0, line, via=target))
                for ref in targets[:3]:
                    ref.line, ref.via = line, target
                    found.setdefault((ref.path, ref.symbol), ref)
        return list(found.values())[:MAX_ROWS]

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
