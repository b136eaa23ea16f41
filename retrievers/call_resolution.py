"""Resolve a call as written (``self.send``, ``client.Client``, ``new Foo``) to the definitions it reaches.

The index stores references as written; this module reads the ``files``, ``chunks`` and
``edges`` tables and resolves what the code itself says, at query time:

- ``self.m()`` / ``this.m()`` / ``cls.m()``: the enclosing class's method, else the first base
  class (``inherits`` edges) that defines it, plus overrides in the class's subclasses (dynamic
  dispatch reaches them); ``super().m()`` / ``super.m()``: the bases only.
- A bare name: a definition in an enclosing function scope or at the file's top level, then a
  name the file imports (Python ``from m import n`` and aliases; for JavaScript/TypeScript, whose
  import edges keep only the module, a top-level definition of an imported in-repo module), then
  the same package (Go, Java), then the language's built-ins.
- ``mod.f`` / ``Class.m`` through an imported module or a known class; ``Foo(...)`` and
  ``new Foo`` reach the class (and its constructor).
- Anything else — a method called on a variable, attribute or expression whose type is unknown —
  stays unresolved: callers list it as *by name only*.
"""

from __future__ import annotations

import builtins
import posixpath
import sqlite3
from dataclasses import dataclass, field
from functools import lru_cache

RESOLVED = "resolved"
BY_NAME = "by name only"
EXTERNAL = "external"
BUILTIN = "built-in"
UNRESOLVED = "unresolved"

MAX_HOPS = 8
"""Re-exports and base classes followed before giving up (cycles and deep chains)."""
CLASS_KINDS = frozenset({"class", "interface", "struct", "trait", "impl", "enum", "record", "type"})
CONSTRUCTOR_NAMES = frozenset({"__init__", "__new__", "constructor"})
SELF_NAMES = {"python": ("self", "cls"), "rust": ("self", "Self")}
DEFAULT_SELF_NAMES = ("this",)
# Java calls a method of the enclosing class without ``this.``; Python, JavaScript and Rust never do.
IMPLICIT_THIS_LANGUAGES = frozenset({"java"})
# Same-package names are visible without an import in Go and Java.
PACKAGE_SCOPED_LANGUAGES = frozenset({"go", "java"})
JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
JS_MODULE_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts", "/index.ts",
                      "/index.tsx", "/index.js", "/index.jsx", "/index.mjs")
BUILTINS = {
    "python": frozenset(dir(builtins)),
    "javascript": frozenset(
        "Array Boolean Date Error EvalError JSON Map Math Number Object Promise Proxy RangeError Reflect RegExp Set "
        "String Symbol TypeError URL URLSearchParams WeakMap WeakSet BigInt console clearInterval clearTimeout "
        "decodeURIComponent encodeURIComponent fetch isFinite isNaN parseFloat parseInt queueMicrotask require "
        "setImmediate setInterval setTimeout structuredClone".split()),
    "go": frozenset("append cap clear close complex copy delete imag len make max min new panic print println "
                    "real recover".split()),
    "java": frozenset("String Object Integer Long Double Boolean Character Math System Thread StringBuilder "
                      "RuntimeException IllegalArgumentException IllegalStateException NullPointerException "
                      "UnsupportedOperationException Exception Error ArrayList HashMap HashSet".split()),
    "rust": frozenset("Some None Ok Err Box Vec String Option Result drop".split()),
}
BUILTINS["typescript"] = BUILTINS["tsx"] = BUILTINS["javascript"]

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

    def bindings(self, scope: str, name: str) -> list[str]:
        """Import targets ``name`` is bound to in ``scope`` (module-level imports count everywhere)."""
        visible = [t for s, n, t in self.aliases if n == name and _encloses(s, scope)]
        visible += [t for s, t in self.imports if _bound_name(t) == name and _encloses(s, scope)]
        return visible


def _encloses(scope: str, inner: str) -> bool:
    return not scope or inner == scope or inner.startswith(scope + ".")


def _bound_name(target: str) -> str:
    """The name ``from a import b`` / ``import a.b`` binds for calls (``b``; aliases are separate edges)."""
    return target.rstrip(".").rsplit(".", 1)[-1].rsplit("/", 1)[-1]


def _prefixes(symbol: str) -> list[str]:
    """``A.B.f`` -> ``A.B.f``, ``A.B``, ``A``."""
    parts = symbol.split(".") if symbol else []
    return [".".join(parts[:n]) for n in range(len(parts), 0, -1)]


@lru_cache(maxsize=4096)
def _module_parts(path: str) -> tuple[str, ...]:
    """``pkg/sub/mod.py`` -> ``("pkg", "sub", "mod")``; a package's ``__init__.py`` is the package."""
    stem, _ = posixpath.splitext(path)
    parts = tuple(p for p in stem.split("/") if p)
    return parts[:-1] if parts and parts[-1] == "__init__" else parts


class CallResolver:
    """Resolves call edges of one index; caches what it reads about each file for its lifetime."""

    def __init__(self, connection: sqlite3.Connection) -> None:  # noqa: D107
        self.connection = connection
        self._facts: dict[str, FileFacts] = {}
        self._languages: dict[str, str] | None = None
        self._by_module_tail: dict[str, list[str]] | None = None
        self._subclasses: dict[Key, list[Key]] = {}

    # ------------------------------------------------------------------ index reads
    def languages(self) -> dict[str, str]:
        """Every indexed file's language, by path."""
        if self._languages is None:
            self._languages = dict(self.connection.execute("SELECT path, language FROM files"))
        return self._languages

    def facts(self, path: str) -> FileFacts:
        """What ``path`` defines, imports and inherits (read once)."""
        if path in self._facts:
            return self._facts[path]
        facts = FileFacts(path, self.languages().get(path, ""))
        for symbol, kind in self.connection.execute(
                "SELECT symbol, kind FROM chunks WHERE path = ? AND kind NOT IN ('module', 'text')", (path,)):
            facts.kinds.setdefault(symbol, kind)
        for source, target, kind in self.connection.execute(
                "SELECT source, target, kind FROM edges WHERE path = ? AND kind IN ('imports', 'aliases', 'inherits')",
                (path,)):
            if kind == "imports":
                facts.imports.append((source, target))
            elif kind == "aliases" and " as " in target:
                name, _, bound = target.rpartition(" as ")
                facts.aliases.append((source, bound, name))
            elif kind == "inherits":
                facts.bases.setdefault(source, []).append(target)
        self._facts[path] = facts
        return facts

    def _module_files(self, parts: tuple[str, ...]) -> list[str]:
        """Python files whose module path ends with ``parts`` (the repository root need not be on sys.path)."""
        if self._by_module_tail is None:
            self._by_module_tail = {}
            for path, language in self.languages().items():
                module = _module_parts(path)
                if language == "python" and module:
                    self._by_module_tail.setdefault(module[-1], []).append(path)
        if not parts:
            return []
        return [p for p in self._by_module_tail.get(parts[-1], []) if _module_parts(p)[-len(parts):] == parts]

    # ------------------------------------------------------------------ calls
    def resolve(self, path: str, source: str, target: str) -> Resolution:
        """Where the call ``target``, written in ``source`` of ``path``, goes."""
        facts = self.facts(path)
        if not target or target.startswith("."):
            return UNKNOWN  # a method of an expression's value
        if target.startswith(("super().", "super.")):
            rest = target.split(".", 1)[1]
            owner = self._enclosing_class(facts, source)
            if owner is None or "." in rest or "(" in rest:
                return UNKNOWN
            return Resolution.to(self._inherited(owner, rest, include_own=False))
        if "(" in target:
            return self._method_of_new_object(facts, source, target)
        head, _, rest = target.partition(".")
        if head in SELF_NAMES.get(facts.language, DEFAULT_SELF_NAMES):
            owner = self._enclosing_class(facts, source)
            if owner is None or not rest or "." in rest:
                return UNKNOWN  # ``self.attr.m()``: the attribute's type is unknown
            return Resolution.to(self._dispatch(owner, rest))
        if not rest and facts.language in IMPLICIT_THIS_LANGUAGES:
            owner = self._enclosing_class(facts, source)
            found = self._dispatch(owner, head) if owner else []
            if found:
                return Resolution.to(found)
        return self.resolve_name(facts, source, target)

    def _method_of_new_object(self, facts: FileFacts, source: str, target: str) -> Resolution:
        """``Foo().m``: a method of the class just constructed; any other call's result has an unknown type."""
        constructor, _, method = target.rpartition("().")
        if not constructor or "(" in constructor or "." in method or "(" in method:
            return UNKNOWN
        classes = [key for key in self.resolve_name(facts, source, constructor).targets
                   if self.facts(key[0]).kinds.get(key[1]) in CLASS_KINDS]
        return Resolution.to(self._inherited(classes[0], method, include_own=True)) if classes else UNKNOWN

    def resolve_name(self, facts: FileFacts, scope: str, dotted: str, hops: int = 0) -> Resolution:
        """A dotted name as seen from ``scope`` in a file: local, imported, same-package or built-in."""
        head, _, rest = dotted.partition(".")
        local = self._local_definition(facts, scope, head)
        if local is not None:
            return self._member(local, rest, hops)
        for binding in facts.bindings(scope, head):
            resolution = self._imported(facts, binding + ("." + rest if rest else ""), hops)
            if resolution.status != UNRESOLVED:
                return resolution
        if facts.language == "python" and any(t == head or t.startswith(head + ".") for _, t in facts.imports):
            return self._imported(facts, dotted, hops)  # ``import a.b`` then ``a.b.f()``
        if facts.language in JS_LANGUAGES:
            found = [key for module in self._js_imported_files(facts)
                     for key in self._top_level(self.facts(module), head, hops + 1)]
            if found:
                return self._member(found[0], rest, hops) if len(found) == 1 else Resolution.to(found)
        if facts.language in PACKAGE_SCOPED_LANGUAGES:
            same = self._same_package(facts, head)
            if same:
                return self._member(same[0], rest, hops)
            through_import = self._package_member(facts, head, rest)
            if through_import:
                return Resolution.to(through_import)
        if not rest and head in BUILTINS.get(facts.language, ()):
            return Resolution(BUILTIN, name=head)
        if facts.language == "python" and facts.bindings(scope, head):
            return Resolution(EXTERNAL, name=dotted)
        return UNKNOWN

    # ------------------------------------------------------------------ scopes and members
    def _enclosing_class(self, facts: FileFacts, symbol: str) -> Key | None:
        for prefix in _prefixes(symbol):
            if facts.kinds.get(prefix) in CLASS_KINDS:
                return facts.path, prefix
        return None

    @staticmethod
    def _local_definition(facts: FileFacts, scope: str, name: str) -> Key | None:
        """``name`` defined in an enclosing function scope or at top level (class bodies are no scope for it)."""
        for prefix in _prefixes(scope):
            candidate = f"{prefix}.{name}"
            if candidate in facts.kinds and facts.kinds.get(prefix) not in CLASS_KINDS:
                return facts.path, candidate
        return (facts.path, name) if name in facts.kinds else None

    def _member(self, key: Key, rest: str, hops: int) -> Resolution:
        """``rest`` looked up inside the definition ``key`` (a class's method, inherited ones too)."""
        if not rest:
            return Resolution.to([key])
        if "." in rest or self.facts(key[0]).kinds.get(key[1]) not in CLASS_KINDS:
            return UNKNOWN
        return Resolution.to(self._inherited(key, rest, include_own=True, hops=hops))

    def _inherited(self, owner: Key, method: str, include_own: bool, hops: int = 0) -> list[Key]:
        """The first definition of ``method`` in ``owner`` (if ``include_own``) or its bases, depth first."""
        path, symbol = owner
        facts = self.facts(path)
        if include_own and f"{symbol}.{method}" in facts.kinds:
            return [(path, f"{symbol}.{method}")]
        if hops >= MAX_HOPS:
            return []
        scope = symbol.rsplit(".", 1)[0] if "." in symbol else ""
        for base in facts.bases.get(symbol, []):
            resolution = self.resolve_name(facts, scope, base, hops + 1)
            for base_key in resolution.targets:
                if self.facts(base_key[0]).kinds.get(base_key[1]) in CLASS_KINDS:
                    found = self._inherited(base_key, method, include_own=True, hops=hops + 1)
                    if found:
                        return found
        return []

    def _dispatch(self, owner: Key, method: str) -> list[Key]:
        """What ``self.method()`` in ``owner`` may run: the inherited definition and subclass overrides."""
        found = self._inherited(owner, method, include_own=True)
        for subclass in self.subclasses(owner):
            override = f"{subclass[1]}.{method}"
            if override in self.facts(subclass[0]).kinds:
                found.append((subclass[0], override))
        return found

    def subclasses(self, owner: Key, hops: int = 0) -> list[Key]:
        """Classes in the repository that inherit from ``owner``, transitively."""
        if owner in self._subclasses:
            return self._subclasses[owner]
        self._subclasses[owner] = []  # a cycle ends here
        name = owner[1].rsplit(".", 1)[-1]
        direct: list[Key] = []
        for path, source, target in self.connection.execute(
                "SELECT path, source, target FROM edges WHERE kind = 'inherits' AND (target = ? OR target LIKE ?)",
                (name, "%." + name)):
            facts = self.facts(path)
            scope = source.rsplit(".", 1)[0] if "." in source else ""
            if owner in self.resolve_name(facts, scope, target.replace("::", "."), MAX_HOPS - 2).targets:
                direct.append((path, source))
        found = list(direct)
        if hops < MAX_HOPS:
            for subclass in direct:
                found.extend(self.subclasses(subclass, hops + 1))
        self._subclasses[owner] = list(dict.fromkeys(found))
        return self._subclasses[owner]

    # ------------------------------------------------------------------ imports
    def _imported(self, facts: FileFacts, spec: str, hops: int) -> Resolution:
        """A name imported into ``facts``'s file, followed to its definition through re-exports."""
        if hops >= MAX_HOPS:
            return UNKNOWN
        if facts.language != "python":
            return UNKNOWN  # other languages' import edges name modules, handled by their own rules
        level = len(spec) - len(spec.lstrip("."))
        parts = tuple(p for p in spec[level:].split(".") if p)
        for cut in range(len(parts), -1 if level else 0, -1):  # ``from . import x``: the package itself
            for module_path in self._python_module(facts.path, level, parts[:cut]):
                if not parts[cut:]:
                    return UNKNOWN  # a module itself is not called
                return self._top_level_dotted(self.facts(module_path), ".".join(parts[cut:]), hops + 1)
        return UNKNOWN if level else Resolution(EXTERNAL, name=spec)

    def _python_module(self, importer: str, level: int, parts: tuple[str, ...]) -> list[str]:
        if not level:
            return self._module_files(parts)[:1]
        package = _module_parts(importer) if importer.endswith("/__init__.py") else _module_parts(importer)[:-1]
        base = package[: len(package) - (level - 1)] if level - 1 <= len(package) else None
        if base is None:
            return []
        wanted = base + parts
        return [p for p in self._module_files(wanted[-1:] if wanted else ()) if _module_parts(p) == wanted][:1]

    def _top_level_dotted(self, facts: FileFacts, dotted: str, hops: int) -> Resolution:
        """``Name.rest`` at the top level of a module, following its own imports (``__init__`` re-exports)."""
        head, _, rest = dotted.partition(".")
        if head in facts.kinds:
            return self._member((facts.path, head), rest, hops)
        resolution = self.resolve_name(facts, "", dotted, hops + 1) if facts.bindings("", head) else UNKNOWN
        if resolution.status == UNRESOLVED and facts.language == "python":
            for _, target in facts.imports:  # ``from .sub import *``
                if target.endswith(".*") or target.endswith("*"):
                    star = self._imported(facts, target.rstrip("*").rstrip(".") + "." + dotted, hops + 1)
                    if star.status == RESOLVED:
                        return star
        return resolution

    def _top_level(self, facts: FileFacts, name: str, hops: int) -> list[Key]:
        """A JS/TS module's top-level ``name``, or one it re-exports from another in-repo module."""
        if name in facts.kinds:
            return [(facts.path, name)]
        if hops >= 3:
            return []
        return [key for module in self._js_imported_files(facts) for key in self._top_level(self.facts(module), name,
                                                                                           hops + 1)][:5]

    def _js_imported_files(self, facts: FileFacts) -> list[str]:
        files = self.languages()
        found = []
        for _, spec in facts.imports:
            if spec.startswith("."):
                base = posixpath.normpath(posixpath.join(posixpath.dirname(facts.path), spec))
                stem = base[: -len(posixpath.splitext(base)[1])] if base.endswith((".js", ".mjs", ".cjs")) else base
                match = next((base + s for s in ("",) + JS_MODULE_SUFFIXES if base + s in files), None)
                match = match or next((stem + s for s in JS_MODULE_SUFFIXES if stem + s in files), None)
                if match and match != facts.path:
                    found.append(match)
        return list(dict.fromkeys(found))

    def _same_package(self, facts: FileFacts, name: str) -> list[Key]:
        """A top-level ``name`` in another file of the same directory (Go package, Java package)."""
        directory = posixpath.dirname(facts.path)
        rows = self.connection.execute(
            "SELECT DISTINCT path, symbol FROM chunks WHERE name = ? AND symbol = ? AND kind NOT IN ('module', 'text')",
            (name, name)).fetchall()
        return [(p, s) for p, s in rows if posixpath.dirname(p) == directory and p != facts.path
                and self.languages().get(p) == facts.language]

    def _package_member(self, facts: FileFacts, head: str, rest: str) -> list[Key]:
        """Through an imported package or type: Go ``pkg.Func``; Java ``Foo`` / ``Foo.m`` (``import a.b.Foo``)."""
        found: list[Key] = []
        for _, spec in facts.imports:
            if facts.language == "java" and spec.rsplit(".", 1)[-1] == head:
                directory, name, member = spec.rsplit(".", 1)[0].replace(".", "/"), head, rest
            elif facts.language == "go" and spec.rsplit("/", 1)[-1] == head and rest and "." not in rest:
                directory, name, member = spec, rest, ""
            else:
                continue
            rows = self.connection.execute(
                "SELECT DISTINCT path, symbol FROM chunks WHERE name = ? AND symbol = ?", (name, name)).fetchall()
            language = facts.language
            keys = [(p, s) for p, s in rows if _in_directory(p, directory) and self.languages().get(p) == language]
            found += [k for key in keys for k in self._inherited(key, member, include_own=True)] if member else keys
        return found


def _in_directory(path: str, directory: str) -> bool:
    """Whether ``path``'s directory ends with ``directory`` (a package path whose root the repository may lack)."""
    tail = directory.strip("/").split("/")
    parts = posixpath.dirname(path).split("/")
    for size in range(len(tail), 0, -1):  # ``github.com/org/repo/pkg`` matches ``pkg`` at the repository root
        if parts[-size:] == tail[-size:]:
            return True
    return False
