"""Hits read from one snapshot's rows: the pool's rows and its methods' types, and ranked chunk ids hydrated.

The SQL side of the ranking; the model that scores the rows is :mod:`retrievers.rank.learned`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

import numpy as np

from ..core.model import TYPE_KINDS
from ..core.results import SCORE_DIGITS
from ..core.sql import batched
from .learned import PoolRow, owner_of
from .ranking import Hit


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
                        {name: round(values[chunk_id], SCORE_DIGITS) for name, values in components.items()
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
