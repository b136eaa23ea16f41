"""The class hierarchy of one index, read from its ``inherits`` edges: subclasses a word names, exception types.

The learned blend's ``subclass`` and ``exception_type`` columns ask these questions; a snapshot keeps the
exception types it computed (:meth:`retrievers.store.snapshot.IndexSnapshot.exception_types`).
"""

from __future__ import annotations

import sqlite3

from ..core.model import TYPE_KINDS
from ..lexical.tokenize import STOP_WORDS, is_exception_name


def exception_types(connection: sqlite3.Connection) -> dict[int, str]:
    """Chunk id -> symbol of every exception type: named like one, or deriving from one at any depth."""
    roots = {target.rsplit(".", 1)[-1] for (target,) in connection.execute(
        "SELECT DISTINCT target FROM edges WHERE kind = 'inherits'")}
    derived = subclasses_named_by(connection, sorted(root for root in roots if is_exception_name(root)))
    kinds = ",".join("?" * len(TYPE_KINDS))
    return {chunk_id: symbol for chunk_id, symbol, name in connection.execute(
        f"SELECT id, symbol, name FROM chunks WHERE kind IN ({kinds})", tuple(TYPE_KINDS))  # noqa: S608
        if is_exception_name(name) or symbol in derived}


def subclasses_named_by(connection: sqlite3.Connection, words: list[str]) -> set[str]:
    """Symbols of the classes that derive (at any depth) from a class a head-phrase word names."""
    found: set[str] = set()
    frontier = [word for word in words if len(word) > 2 and word not in STOP_WORDS]
    for _ in range(4):  # a few levels of hierarchy; cycles end at ``found``
        if not frontier:
            break
        marks = ",".join("?" * len(frontier))
        children = {source for (source,) in connection.execute(
            f"SELECT DISTINCT source FROM edges WHERE kind = 'inherits' AND target COLLATE NOCASE IN ({marks})"  # noqa: S608
            " LIMIT 500", frontier)} - found
        found |= children
        frontier = [child.rsplit(".", 1)[-1] for child in children]
    return found
