"""Resolve a call as written (``self.send``, ``client.Client``, ``new Foo``) to the definitions it reaches.

The index stores references as written; this module reads the ``files``, ``chunks`` and
``edges`` tables and resolves what the code itself says, at query time:

- ``self.m()`` / ``this.m()`` / ``cls.m()``: the enclosing class's method, else the first base
  class (``inherits`` edges) that defines it, plus overrides in the class's subclasses (dynamic
  dispatch reaches them); ``super().m()`` / ``super.m()``: the bases only.
- Go ``r.m()`` where ``r`` is the method's receiver: the receiver type's method, in any file of
  the package, or one promoted from an embedded type.
- A bare name: a definition in an enclosing function scope or at the file's top level, then a
  name the file imports (Python ``from m import n`` and aliases; JavaScript/TypeScript named,
  default and namespace imports and ``require``, followed through re-exports to the in-repo file
  that defines them; Go packages by name or alias), then the same package (Go, Java), then the
  language's built-ins.
- ``mod.f`` / ``Class.m`` through an imported module or a known class; ``Foo(...)`` and
  ``new Foo`` reach the class (and its constructor).
- Anything else — a method called on a variable, attribute or expression whose type is unknown —
  stays unresolved: callers list it as *by name only*.
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from functools import lru_cache

from ..core.model import CLASS_LIKE_KINDS
from .facts import BUILTIN, EXTERNAL, RESOLVED, UNKNOWN, UNRESOLVED, FileFacts, Key, Resolution
from .language_rules import (
    BUILTINS,
    DEFAULT_SELF_NAMES,
    GO_DOT_IMPORT,
    IMPLICIT_THIS_LANGUAGES,
    JS_DEFAULT_EXPORT,
    JS_LANGUAGES,
    JS_MODULE_SUFFIXES,
    JS_NAMESPACE,
    PACKAGE_SCOPED_LANGUAGES,
    SELF_NAMES,
)
from .local_types import LocalTypes

MAX_HOPS = 8
"""Re-exports and base classes followed before giving up (cycles and deep chains)."""
_GO_RECEIVER = re.compile(r"^\s*func\s*\(\s*(\w+)\s+\*?\s*([\w]+)")
"""``func (c *Client[T]) Do(`` -> ``c``, ``Client``."""


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
        self._go_directories: dict[str, tuple[str, ...]] = {}
        self.local_types = LocalTypes(self)

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
                "SELECT source, target, kind FROM edges WHERE path = ?"
                " AND kind IN ('imports', 'aliases', 'inherits', 'types')",
                (path,)):
            if kind == "imports":
                facts.imports.append((source, target))
            elif kind == "aliases" and " as " in target:
                name, _, bound = target.rpartition(" as ")
                facts.aliases.append((source, bound, name))
            elif kind == "inherits":
                facts.bases.setdefault(source, []).append(target)
            elif kind == "types":
                name, _, spec = target.partition(": ")
                facts.types.append((source, name, spec))
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
        if facts.language == "go" and rest and head == self._go_receiver(facts.path, source)[0]:
            return self._go_receiver_call(facts, source, rest)
        if head in SELF_NAMES.get(facts.language, DEFAULT_SELF_NAMES):
            owner = self._enclosing_class(facts, source)
            if owner is None or not rest:
                return UNKNOWN
            if "." in rest:  # ``self.attr.m()``: a method of the class the attribute holds, if the code says
                attribute, _, method = rest.partition(".")
                return self._method_of(self.local_types.of_attribute(owner, attribute), method)
            return Resolution.to(self._dispatch(owner, rest))
        if not rest and facts.language in IMPLICIT_THIS_LANGUAGES:
            owner = self._enclosing_class(facts, source)
            found = self._dispatch(owner, head) if owner else []
            if found:
                return Resolution.to(found)
        if rest and self._local_definition(facts, source, head) is None and not facts.bindings(source, head):
            typed = self.local_types.of_name(facts, source, head)
            if typed:  # ``response = self.send(...)`` ... ``response.read()``
                return self._method_of(typed, rest)
            if self.local_types.stated_elsewhere(facts, source, head):  # ``d: dict`` ... ``d.get()``
                return Resolution(EXTERNAL, name=target)
        return self.resolve_name(facts, source, target)

    def _method_of(self, classes: list[Key], method: str) -> Resolution:
        """``method`` of the one class a name holds (unknown for several classes or a dotted rest)."""
        if len(classes) != 1 or "." in method or "(" in method:
            return UNKNOWN
        found = self._inherited(classes[0], method, include_own=True)
        return Resolution.to(found) if found else UNKNOWN

    def is_class(self, key: Key) -> bool:
        """Whether ``key`` is a class-like definition (class, interface, struct, ...)."""
        return self.facts(key[0]).kinds.get(key[1]) in CLASS_LIKE_KINDS

    def _method_of_new_object(self, facts: FileFacts, source: str, target: str) -> Resolution:
        """``Foo().m``: a method of the class just constructed; any other call's result has an unknown type."""
        constructor, _, method = target.rpartition("().")
        if not constructor or "(" in constructor or "." in method or "(" in method:
            return UNKNOWN
        classes = [key for key in self.resolve_name(facts, source, constructor).targets if self.is_class(key)]
        return Resolution.to(self._inherited(classes[0], method, include_own=True)) if classes else UNKNOWN

    def resolve_name(self, facts: FileFacts, scope: str, dotted: str, hops: int = 0) -> Resolution:
        """A dotted name as seen from ``scope`` in a file: local, imported, same-package or built-in."""
        head, _, rest = dotted.partition(".")
        local = self._local_definition(facts, scope, head)
        if local is not None:
            return self._member(local, rest, hops)
        if rest and facts.language in JS_LANGUAGES and dotted in facts.kinds:
            return Resolution.to([(facts.path, dotted)])  # a method of an object literal: ``o.m``
        for binding in facts.bindings(scope, head):
            resolution = self._through_binding(facts, binding, head, rest, hops)
            if resolution.status != UNRESOLVED:
                return resolution
        if facts.language == "python" and any(t == head or t.startswith(head + ".") for _, t in facts.imports):
            return self._imported(facts, dotted, hops)  # ``import a.b`` then ``a.b.f()``
        if facts.language == "go" and not rest:
            found = [key for spec in facts.bindings("", GO_DOT_IMPORT) for key in self._go_top_level(spec, head)]
            if found:
                return Resolution.to(found)
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
            if facts.kinds.get(prefix) in CLASS_LIKE_KINDS:
                return facts.path, prefix
        return None

    @staticmethod
    def _local_definition(facts: FileFacts, scope: str, name: str) -> Key | None:
        """``name`` defined in an enclosing function scope or at top level (class bodies are no scope for it)."""
        for prefix in _prefixes(scope):
            candidate = f"{prefix}.{name}"
            if candidate in facts.kinds and facts.kinds.get(prefix) not in CLASS_LIKE_KINDS:
                return facts.path, candidate
        return (facts.path, name) if name in facts.kinds else None

    def _member(self, key: Key, rest: str, hops: int) -> Resolution:
        """``rest`` looked up inside the definition ``key`` (a class's method, inherited ones too)."""
        if not rest:
            return Resolution.to([key])
        if "." in rest or not self.is_class(key):
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
        for base_key in self.base_classes(owner, hops):
            found = self._inherited(base_key, method, include_own=True, hops=hops + 1)
            if found:
                return found
        return []

    def base_classes(self, owner: Key, hops: int = 0) -> list[Key]:
        """The in-repo classes ``owner`` directly derives from, in the order it names them."""
        path, symbol = owner
        facts = self.facts(path)
        scope = symbol.rsplit(".", 1)[0] if "." in symbol else ""
        return [base_key for base in facts.bases.get(symbol, [])
                for base_key in self.resolve_name(facts, scope, base, hops + 1).targets if self.is_class(base_key)]

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
    def _through_binding(self, facts: FileFacts, binding: str, head: str, rest: str, hops: int) -> Resolution:
        """``head.rest`` where ``head`` is bound by an import to ``binding``."""
        if facts.language in JS_LANGUAGES:
            return self._js_imported(facts, binding, rest, hops)
        if facts.language == "go":
            return self._go_imported(binding, head, rest)
        return self._imported(facts, binding + ("." + rest if rest else ""), hops)

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

    def _js_imported(self, facts: FileFacts, binding: str, rest: str, hops: int) -> Resolution:
        """``local.rest`` where ``local`` is bound to ``module.exported``: the definition in the module's file."""
        module, _, exported = binding.rpartition(".")
        if not module:
            return UNKNOWN  # ``export { a as b }``: ``b`` names an export, not a name in this file
        path = self._js_module_file(facts.path, module)
        if path is None:  # a package outside the repository, or a relative path that is not indexed
            dotted = ".".join(p for p in (module, "" if exported == JS_NAMESPACE else exported, rest) if p)
            return UNKNOWN if module.startswith(".") else Resolution(EXTERNAL, name=dotted)
        if exported == JS_NAMESPACE:  # ``ns.f``; a required module called itself runs its default export
            exported, _, rest = rest.partition(".") if rest else (JS_DEFAULT_EXPORT, "", "")
        if rest and f"{exported}.{rest}" in self.facts(path).kinds:
            return Resolution.to([(path, f"{exported}.{rest}")])
        found = self._js_exported(path, exported, hops + 1)
        if len(found) == 1:
            return self._member(found[0], rest, hops)
        return Resolution.to(found) if not rest else UNKNOWN

    def _js_exported(self, path: str, name: str, hops: int) -> list[Key]:
        """What a JS/TS module exports as ``name``: its own definition, or one it re-exports."""
        facts = self.facts(path)
        if name in facts.kinds:
            return [(path, name)]
        if hops >= MAX_HOPS:
            return []
        found: list[Key] = []
        for binding in facts.bindings("", name):
            module, _, exported = binding.rpartition(".")
            source = self._js_module_file(path, module) if module else path  # ``export default foo``: here
            if source is not None and exported != JS_NAMESPACE:
                found += self._js_exported(source, exported, hops + 1)
        if not found and name != JS_DEFAULT_EXPORT:  # ``export * from`` never passes a default on
            for binding in facts.bindings("", JS_NAMESPACE):
                source = self._js_module_file(path, binding.rpartition(".")[0])
                found += self._js_exported(source, name, hops + 1) if source is not None else []
        return list(dict.fromkeys(found))

    def _js_module_file(self, importer: str, spec: str) -> str | None:
        """The indexed file a relative module specifier names (extensions, ``index`` files, ``.js`` for ``.ts``)."""
        if not spec.startswith("."):
            return None
        files = self.languages()
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        stem = base[: -len(posixpath.splitext(base)[1])] if base.endswith((".js", ".mjs", ".cjs", ".jsx")) else base
        match = next((base + s for s in ("",) + JS_MODULE_SUFFIXES if base + s in files), None)
        match = match or next((stem + s for s in JS_MODULE_SUFFIXES if stem + s in files), None)
        return match if match != importer else None

    # ------------------------------------------------------------------ Go packages
    def _go_imported(self, spec: str, head: str, rest: str) -> Resolution:
        """``pkg.F`` through an import: ``F`` at the top level of the package's directory, or outside."""
        if spec == GO_DOT_IMPORT or not rest:
            return UNKNOWN  # a package is not called
        directories = self._go_package_directories(spec)
        if not directories:
            return Resolution(EXTERNAL, name=f"{head}.{rest}")
        name, _, member = rest.partition(".")
        found = self._go_top_level(spec, name)
        if member:  # a method expression ``pkg.Type.Method``
            found = [k for key in found for k in self._go_methods(key[0], key[1], member)]
        return Resolution.to(found)

    def _go_top_level(self, spec: str, name: str) -> list[Key]:
        directories = self._go_package_directories(spec)
        rows = self.connection.execute(
            "SELECT DISTINCT path, symbol FROM chunks WHERE name = ? AND symbol = ? AND kind NOT IN ('module', 'text')",
            (name, name)).fetchall()
        return [(p, s) for p, s in rows if posixpath.dirname(p) in directories and self.languages().get(p) == "go"]

    def _go_package_directories(self, spec: str) -> tuple[str, ...]:
        """The in-repo directories an import path names: the longest match of its last elements.

        The repository root need not be the module root, so ``example.com/mod/internal/log``
        names ``internal/log`` rather than ``cmd/log``; a standard-library path (no dot in its
        first element) is never in the repository.
        """
        if spec in self._go_directories:
            return self._go_directories[spec]
        tail = [p for p in spec.split("/") if p]
        best = 0
        found: list[str] = []
        if tail and "." in tail[0]:
            for directory in {posixpath.dirname(p) for p, language in self.languages().items() if language == "go"}:
                parts = directory.split("/") if directory else []
                size = 0
                while size < min(len(parts), len(tail)) and parts[-1 - size] == tail[-1 - size]:
                    size += 1
                if size and size >= best:
                    found = found + [directory] if size == best else [directory]
                    best = size
        self._go_directories[spec] = tuple(found)
        return self._go_directories[spec]

    def _go_receiver(self, path: str, source: str) -> tuple[str, str]:
        """(receiver name, receiver type) of the Go method ``source`` (``("c", "Client")``), else empty."""
        if "." not in source:
            return "", ""
        row = self.connection.execute(
            "SELECT signature FROM chunks WHERE path = ? AND symbol = ? LIMIT 1", (path, source)).fetchone()
        match = _GO_RECEIVER.match(row[0]) if row and row[0] else None
        return (match.group(1), match.group(2)) if match else ("", "")

    def _go_receiver_call(self, facts: FileFacts, source: str, rest: str) -> Resolution:
        """``c.m()`` in a method whose receiver is ``c``: the receiver type's method (fields' types are unknown)."""
        if "." in rest:
            return UNKNOWN
        return Resolution.to(self._go_methods(facts.path, self._go_receiver(facts.path, source)[1], rest))

    def _go_methods(self, path: str, type_name: str, method: str, hops: int = 0) -> list[Key]:
        """``type_name.method`` in ``path``'s package, else promoted from a type it embeds there."""
        directory = posixpath.dirname(path)
        in_package = [p for p, language in self.languages().items()
                      if language == "go" and posixpath.dirname(p) == directory]
        found = [(p, f"{type_name}.{method}") for p in in_package if f"{type_name}.{method}" in self.facts(p).kinds]
        if found or hops >= MAX_HOPS:
            return found
        embedded = [base for p in in_package for base in self.facts(p).bases.get(type_name, []) if "." not in base]
        return [key for base in embedded for key in self._go_methods(path, base, method, hops + 1)][:5]

    def _same_package(self, facts: FileFacts, name: str) -> list[Key]:
        """A top-level ``name`` in another file of the same directory (Go package, Java package)."""
        directory = posixpath.dirname(facts.path)
        rows = self.connection.execute(
            "SELECT DISTINCT path, symbol FROM chunks WHERE name = ? AND symbol = ? AND kind NOT IN ('module', 'text')",
            (name, name)).fetchall()
        return [(p, s) for p, s in rows if posixpath.dirname(p) == directory and p != facts.path
                and self.languages().get(p) == facts.language]

    def _package_member(self, facts: FileFacts, head: str, rest: str) -> list[Key]:
        """Through an imported type: Java ``Foo`` / ``Foo.m`` (``import a.b.Foo``)."""
        found: list[Key] = []
        for _, spec in facts.imports:
            if facts.language == "java" and spec.rsplit(".", 1)[-1] == head:
                directory, name, member = spec.rsplit(".", 1)[0].replace(".", "/"), head, rest
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
