"""Hits read from one snapshot's rows: ranked chunk ids hydrated, and types lifted by their members' evidence.

The SQL side of the ranking; the weights and rules it applies are named in :mod:`retrievers.rank.ranking`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping

import numpy as np

from ..core.model import TYPE_KINDS
from ..core.sql import batched
from .learned import PoolRow, owner_of
from .ranking import MAX_LIFT_MEMBERS, MEMBER_EVIDENCE, Hit

Hydrate = Callable[[list[tuple[int, float]]], list[Hit]]


def hydrate(connection: sqlite3.Connection, ranked: list[tuple[int, float]], components: dict) -> list[Hit]:
    """Hits for ranked chunk ids, in order, each with its per-component evidence (unknown ids are left out)."""
    if not ranked:
        return []
    rows = {row[0]: row for ids, marks in batched(chunk_id for chunk_id, _ in ranked) for row in connection.execute(
        "SELECT id, path, start_line, end_line, symbol, kind, language, is_test, text, signature, docstring"
        f" FROM chunks WHERE id IN ({marks})", ids)}  # noqa: S608
    hits = []
    for chunk_id, score in ranked:
        row = rows.get(chunk_id)
        if row is None:
            continue
        hits.append(Hit(chunk_id, score, row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]),
                        row[8], row[9], row[10],
                        {name: round(values[chunk_id], 4) for name, values in components.items()
                         if chunk_id in values}))
    return hits


def scored_hits(connection: sqlite3.Connection, ids: list[int], scores: np.ndarray, components: dict,
                cut: int) -> list[Hit]:
    """The best ``cut`` of the pool by a learned blend's log-scores, hydrated, scored ``exp`` (the best 1.0)."""
    if not ids:
        return []
    scores = np.exp(scores - scores.max())
    order = np.argsort(-scores, kind="stable")[:cut]
    return hydrate(connection, [(ids[i], float(scores[i])) for i in order], components)


def lift_types_by_members(connection: sqlite3.Connection, hits: list[Hit], hydrate_ids: Hydrate) -> list[Hit]:
    """Give each type the evidence of its best-scoring member (fetching the type if it ranked lower)."""
    best_member: dict[tuple[str, str], float] = {}
    for hit in hits:
        if hit.kind in ("method", "function") and "." in hit.symbol:
            owner = (hit.path, hit.symbol.rsplit(".", 1)[0])
            best_member[owner] = max(best_member.get(owner, 0.0), hit.score)
    if not best_member:
        return hits
    present = {(hit.path, hit.symbol): hit for hit in hits}
    missing = [owner for owner in best_member if owner not in present]
    if missing:
        ids_of: dict[tuple[str, str], list[int]] = {}
        for chunk_id, row in types_named(connection, set(missing)).items():
            ids_of.setdefault((row.path, row.symbol), []).append(chunk_id)
        found = [chunk_id for owner in missing for chunk_id in sorted(ids_of.get(owner, ()))]
        for fetched in hydrate_ids([(chunk_id, 0.0) for chunk_id in found]):
            present[(fetched.path, fetched.symbol)] = fetched
            hits.append(fetched)
    for owner, score in best_member.items():
        owner_hit = present.get(owner)
        if owner_hit is None or owner_hit.kind not in TYPE_KINDS:
            continue
        if member_count(connection, *owner) > MAX_LIFT_MEMBERS:
            continue
        if MEMBER_EVIDENCE * score > owner_hit.score:
            owner_hit.score = MEMBER_EVIDENCE * score
            owner_hit.components["member"] = round(owner_hit.score, 4)
    return hits


def member_count(connection: sqlite3.Connection, path: str, symbol: str) -> int:
    """How many definitions a type holds directly."""
    return connection.execute(
        "SELECT count(*) FROM chunks WHERE path = ? AND parent = ?", (path, symbol)).fetchone()[0]


# The columns of a PoolRow, in its order, after the id.
POOL_ROW_COLUMNS = "id, path, symbol, kind, start_line, end_line, language, is_test, name, card_key, code_key"


def pool_rows(connection: sqlite3.Connection, ids: set[int] | list[int]) -> dict[int, PoolRow]:
    """Path, symbol, kind, name and vector keys of each pooled chunk: what the learned path reads (no texts)."""
    return {row[0]: PoolRow(*row[1:]) for batch, marks in batched(sorted(ids)) for row in connection.execute(
        f"SELECT {POOL_ROW_COLUMNS} FROM chunks WHERE id IN ({marks})", batch)}  # noqa: S608


def owner_types(connection: sqlite3.Connection, methods: Mapping[int, PoolRow],
                rows: Mapping[int, PoolRow]) -> dict[int, PoolRow]:
    """The types the ``methods`` belong to that the pool's ``rows`` lack (a type ranks by its members' evidence)."""
    owners = {owner for row in methods.values() if (owner := owner_of(row)) is not None}
    present = {(row.path, row.symbol) for row in rows.values()} if owners else set()
    return types_named(connection, owners - present)


def types_named(connection: sqlite3.Connection, owners: set[tuple[str, str]]) -> dict[int, PoolRow]:
    """The type definitions (class, struct, ...) of these ``(path, symbol)`` pairs."""
    if not owners:
        return {}
    kinds = ",".join("?" * len(TYPE_KINDS))
    found = {}
    # By symbol (the NOCASE index; the exact pair is checked here): a file's rows are many, a type's name few.
    for batch, marks in batched(sorted({symbol for _, symbol in owners})):
        for chunk_id, *row in connection.execute(
                f"SELECT {POOL_ROW_COLUMNS} FROM chunks"
                f" WHERE symbol COLLATE NOCASE IN ({marks}) AND kind IN ({kinds})",  # noqa: S608
                (*batch, *TYPE_KINDS)):
            if (row[0], row[1]) in owners:
                found[chunk_id] = PoolRow(*row)
    return found
