"""Path/glob and language filters: which files a search may return.

``--path`` takes gitignore-style globs (``src/**``, ``*.go``, ``internal/``, ``!**/testdata/**``),
matched against repository-relative paths: a glob without a ``/`` matches a name at any depth.
``--lang`` takes the index's language names or a common alias (``py``, ``ts``, ``rs``...);
``typescript`` includes TSX. Both are applied to the chunk ids before any top-k cut, so a filter
that keeps a small part of a repository still gets that part's best results.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..core.sql import batched
from ..source.globs import GlobError, GlobRules
from ..source.languages import LANGUAGE_BY_EXTENSION
from .limits import MAX_GLOB_CHARS, MAX_GLOBS

LANGUAGES = (*dict.fromkeys(LANGUAGE_BY_EXTENSION.values()), "text")
LANGUAGE_ALIASES = {
    "py": "python", "js": "javascript", "jsx": "javascript", "node": "javascript", "ts": "typescript",
    "golang": "go", "rs": "rust", "docs": "text", "config": "text",
}
# Asking for a language includes its dialects.
LANGUAGE_FAMILIES = {"typescript": ("typescript", "tsx")}


class ScopeError(ValueError):
    """A filter that is malformed or matches no indexed file; the message says which and why."""


def split_values(values: str | Iterable[str] | None) -> list[str]:
    """Repeated options and comma lists as one list (``["a,b", "c"]`` -> ``a, b, c``), blanks dropped."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    found: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise ScopeError(f"filters must be strings, got {value!r}")
        found += [part.strip() for part in value.split(",") if part.strip()]
    return found


def canonical_language(name: str) -> str:
    """The index's name for a language (``ts`` -> ``typescript``); :class:`ScopeError` for an unknown one."""
    lowered = name.strip().lower()
    lowered = LANGUAGE_ALIASES.get(lowered, lowered)
    if lowered not in LANGUAGES:
        shown = name if len(name) <= 40 else name[:40] + "..."
        raise ScopeError(f"unknown language {shown!r}; use one of: {', '.join(LANGUAGES)}")
    return lowered


def _clean_glob(glob: str) -> str:
    if "\x00" in glob:
        raise ScopeError("a path filter contains a NUL byte")
    if len(glob) > MAX_GLOB_CHARS:
        raise ScopeError(f"a path filter is {len(glob):,} characters; the limit is {MAX_GLOB_CHARS}")
    glob = glob.replace("\\", "/")
    return glob[2:] if glob.startswith("./") else glob


@dataclass(frozen=True)
class Scope:
    """Which files a search may return: globs (any may match) and languages (any may match)."""

    paths: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()

    @classmethod
    def of(cls, paths: str | Iterable[str] | None = None, languages: str | Iterable[str] | None = None) -> Scope:
        """A validated scope from option values (repeatable, comma lists); raises :class:`ScopeError`."""
        globs = tuple(dict.fromkeys(_clean_glob(glob) for glob in split_values(paths)))
        if len(globs) > MAX_GLOBS:
            raise ScopeError(f"{len(globs)} path filters; the limit is {MAX_GLOBS}")
        names = tuple(dict.fromkeys(canonical_language(name) for name in split_values(languages)))
        scope = cls(globs, names)
        scope.spec()  # a glob that can't be read fails here, not at search time
        return scope

    @property
    def is_everything(self) -> bool:  # noqa: D102
        return not self.paths and not self.languages

    def spec(self) -> GlobRules | None:
        """The compiled globs (``None`` without path filters); only negative globs keep everything else.

        Matched in linear time (:mod:`retrievers.source.globs`): no glob can stall a search.
        """
        if not self.paths:
            return None
        # `!tests/**` alone means "all but the tests", as in a .gitignore read the other way round.
        only_negative = all(glob.startswith("!") for glob in self.paths)
        try:
            return GlobRules(("**", *self.paths) if only_negative else self.paths)
        except GlobError as error:
            raise ScopeError(f"invalid path filter {error}") from None

    def language_set(self) -> set[str]:
        """The languages allowed, dialects included (empty: any)."""
        return {member for name in self.languages for member in LANGUAGE_FAMILIES.get(name, (name,))}

    def allowed_paths(self, languages_by_path: Mapping[str, str]) -> list[str]:
        """The paths (of ``{path: language}``) this scope keeps, in the mapping's order."""
        spec = self.spec()
        wanted = self.language_set()
        return [path for path, language in languages_by_path.items()
                if (not wanted or language in wanted) and (spec is None or spec.matches(path))]

    def unanchored(self) -> Scope | None:
        """This scope with each glob anchored at the root (``tests/**``) matching at any depth (``**/tests/**``).

        ``None`` when no glob is anchored that way: the nearest reading of globs that matched no file.
        """
        globs = tuple(glob if glob.startswith(("!", "/", "**/")) or "/" not in glob.rstrip("/") else f"**/{glob}"
                      for glob in self.paths)
        return Scope(globs, self.languages) if globs != self.paths else None

    def no_match(self, languages_by_path: Mapping[str, str]) -> str:
        """Why this scope keeps none of the paths (of ``{path: language}``), with the nearest scope that keeps some."""
        message = f"no indexed file matches {self.describe()}"
        nearer = self.unanchored()
        count = len(nearer.allowed_paths(languages_by_path)) if nearer is not None else 0
        if nearer is not None and count:
            message += f"; globs start at the repository root, and {nearer.describe()} matches {count:,} files"
        return message

    def describe(self, terms: Literal["fields", "flags"] = "fields") -> str:
        """The filters as the caller wrote them, in fields or in the command line's flags.

        Fields (``paths ["src/**"] and languages ["go"]``) for the graph's input, HTTP and MCP; flags
        (``--path 'src/**' --lang go``) for the command line, which rewords the graph's errors with them.
        """
        if terms == "flags":
            return " ".join([f"--path {glob!r}" for glob in self.paths] + [f"--lang {name}" for name in self.languages])
        fields = (("paths", self.paths), ("languages", self.languages))
        return " and ".join(f"{name} {json.dumps(list(values))}" for name, values in fields if values)


def chunk_ids_in(connection: sqlite3.Connection, paths: list[str]) -> np.ndarray:
    """Sorted ids of the chunks of ``paths``."""
    ids: list[int] = []
    for batch, marks in batched(paths):
        ids += [row[0] for row in connection.execute(f"SELECT id FROM chunks WHERE path IN ({marks})", batch)]  # noqa: S608
    return np.unique(np.asarray(ids, dtype=np.int64))


def within(scores: dict[int, float], allowed: np.ndarray) -> dict[int, float]:
    """``scores`` of the ids in the sorted array ``allowed`` only."""
    if not scores:
        return scores
    ids = np.fromiter(scores, dtype=np.int64, count=len(scores))
    return {int(chunk_id): scores[int(chunk_id)] for chunk_id in ids[np.isin(ids, allowed)]}


def dense_depth(candidates: int, allowed: np.ndarray | None, chunk_count: int, ceiling: int) -> int:
    """How many nearest vectors to ask for so that about ``candidates`` survive the filter (``ceiling`` at most)."""
    if allowed is None or not allowed.size:
        return candidates
    share = allowed.size / max(chunk_count, 1)
    return min(max(candidates, int(candidates / share)), ceiling)
