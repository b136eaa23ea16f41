"""The evidence a candidate's name and file give: symbols a query spells out, files it mentions, name words it uses.

Functions of one index snapshot and the query; :class:`retrievers.rank.search.Searcher` blends what they return.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from ..core.sql import batched
from ..lexical.tokenize import MIN_COMPOUND_PART, compound_words, split_identifier, stem
from ..query.parsing import TRACEBACK_FRAME, code_tokens, mentioned_paths
from ..store.snapshot import IndexSnapshot
from .learned import PoolRow
from .ranking import MAX_CALL_ANCHORS, MAX_CALL_SITES, MAX_QUERY_SYMBOLS

# Kinds whose name is no definition's (a module's file name, a text window's): no name coverage.
NAMELESS_KINDS = frozenset({"module", "text"})


def name_coverage(snapshot: IndexSnapshot, query_tokens: list[str], pool: set[int],
                  rows: Mapping[int, PoolRow] | None = None) -> dict[int, float]:
    """Share of each candidate's name words that the query uses (``write_usage`` vs "Writes a usage line").

    ``rows``: the pool's rows when the search has read them already (else the names are read here).
    """
    wanted = set(query_tokens)
    if not pool or not wanted:
        return {}
    coverage = {}
    named: Iterable[tuple[int, str]]
    if rows is not None:
        named = ((c, row.name) for c in pool if (row := rows.get(c)) is not None and row.kind not in NAMELESS_KINDS)
    else:
        nameless = ",".join("?" * len(NAMELESS_KINDS))
        named = (row for ids, marks in batched(sorted(pool)) for row in snapshot.connection.execute(
            f"SELECT id, name FROM chunks WHERE id IN ({marks}) AND kind NOT IN ({nameless})",  # noqa: S608
            (*ids, *sorted(NAMELESS_KINDS))))
    for chunk_id, name in named:
        parts = name_parts(name)
        if not parts:
            continue
        used, total = 0, 0
        for part, stemmed in parts:
            found, count = ((0, 0) if stemmed in wanted or len(part) < 2 * MIN_COMPOUND_PART
                            else compound_words(part, wanted, snapshot.knows))
            used += found or stemmed in wanted
            total += count or 1
        if used:
            coverage[chunk_id] = used / total
    return coverage


@lru_cache(maxsize=65536)  # every search's pool meets the same names again
def name_parts(name: str) -> tuple[tuple[str, str], ...]:
    """The words of a definition's name that coverage counts, each with its stem (none for a dunder name)."""
    if name.startswith("__"):
        return ()
    return tuple((part, stem(part)) for part in split_identifier(name) if len(part) > 1)


def symbol_matches(snapshot: IndexSnapshot, query: str) -> tuple[dict[int, float], dict[int, float]]:
    """Chunks whose name the query spells out or begins, and those of them it names exactly: ``(named, exact)``.

    ``named`` is the share of the definition's name the query spells (1.0 for the whole name, ``get`` of
    ``get_config`` 0.3), so a short prefix that begins many names is little evidence of any. A bare name
    (``parse_args``) names each definition of that name exactly; a qualified one (``Store.save``) only those whose
    symbol ends with it. What a match is worth, exact or not, is the learned blend's to weigh.
    """
    named: dict[int, float] = {}
    exact: dict[int, float] = {}
    for token in code_tokens(query)[:MAX_QUERY_SYMBOLS]:
        name = token.rsplit(".", 1)[-1]
        if not name:
            continue
        wanted = token.lower()
        for chunk_id, symbol in snapshot.connection.execute(
            "SELECT id, symbol FROM chunks WHERE name = ? COLLATE NOCASE AND kind NOT IN ('module', 'text')",
            (name,),
        ):
            named[chunk_id] = 1.0
            if "." not in token or symbol.lower() == wanted or symbol.lower().endswith("." + wanted):
                exact[chunk_id] = 1.0
        for chunk_id, longer in snapshot.connection.execute(
            "SELECT id, name FROM chunks WHERE name LIKE ? ESCAPE '\\' AND kind NOT IN ('module', 'text') LIMIT 50",
            (name.replace("_", "\\_") + "%",),
        ):
            named[chunk_id] = max(named.get(chunk_id, 0.0), len(name) / max(len(longer), len(name)))
    return named, exact


def mention_matches(snapshot: IndexSnapshot, query: str) -> tuple[dict[int, float], dict[int, float]]:
    """Chunks in files the query names, and those of them a traceback frame of it names: ``(mentioned, frames)``."""
    mentions = mentioned_paths(query)
    if not mentions:
        return {}, {}
    files = snapshot.path_names().files_mentioned(mentions)
    if not files:
        return {}, {}
    frame_names = {(m.group(3) or "") for m in TRACEBACK_FRAME.finditer(query)}
    mentioned: dict[int, float] = {}
    frames: dict[int, float] = {}
    for paths, marks in batched(sorted(files)):
        for chunk_id, name in snapshot.connection.execute(
            f"SELECT id, name FROM chunks WHERE path IN ({marks})", paths  # noqa: S608
        ):
            mentioned[chunk_id] = 1.0
            if name in frame_names:
                frames[chunk_id] = 1.0
    return mentioned, frames


def call_anchors(exact_symbols: Iterable[int], frames: Iterable[int]) -> list[int]:
    """The definitions a query names most surely: its traceback's frames, then names it spells out exactly.

    Only when they are few: a name defined in many places (``get``) anchors nothing.
    """
    framed = list(frames)
    for group in (framed + list(exact_symbols), framed):
        anchors = list(dict.fromkeys(group))
        if len(anchors) <= MAX_CALL_ANCHORS:
            return anchors
    return []


def resolved_callers(snapshot: IndexSnapshot, anchors: list[int]) -> dict[int, float]:
    """Chunks whose code calls one of the ``anchors``, through calls the code resolves (not by name only).

    A report names the function it saw misbehave (or its traceback passes through it), and the fix is
    often where that function is called from: the caller passes what it mishandles. The call graph
    reaches the caller without it sharing a word with the report.
    """
    if not anchors:
        return {}
    connection = snapshot.connection
    marks = ",".join("?" * len(anchors))
    named = connection.execute(
        f"SELECT DISTINCT path, symbol FROM chunks WHERE id IN ({marks})", anchors).fetchall()  # noqa: S608
    resolver = snapshot.call_resolver()
    callers: set[tuple[str, str]] = set()
    for path, symbol in named:
        short = symbol.rsplit(".", 1)[-1]
        # Index lookups only: bare calls anywhere, ``x.name()`` calls in the definition's own file (a search over
        # every dotted call of a common name scanned the whole edge table: seconds on a large repository).
        sites = connection.execute(
            "SELECT path, source, target FROM edges WHERE kind = 'calls' AND target = ? COLLATE NOCASE"
            " UNION SELECT path, source, target FROM edges WHERE kind = 'calls' AND path = ? AND target LIKE ?"
            " ESCAPE '\\' LIMIT ?", (short, path, "%." + short.replace("_", "\\_"), MAX_CALL_SITES)).fetchall()
        for site_path, source, target in sites:
            if source and (path, symbol) in resolver.resolve(site_path, source, target).targets:
                callers.add((site_path, source))
    callers -= set(named)
    found: dict[int, float] = {}
    for path, symbol in callers:
        for (chunk_id,) in connection.execute(
                "SELECT id FROM chunks WHERE path = ? AND symbol = ? AND kind NOT IN ('module', 'text')",
                (path, symbol)):
            found[chunk_id] = 1.0
    return found
