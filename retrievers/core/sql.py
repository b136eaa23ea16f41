"""SQLite ``IN (...)`` lists in batches: a list of any length never exceeds SQLite's limit on bound variables.

That limit is 32,766 since SQLite 3.32 and 999 before (a system Python may link either), and a query's
mentioned files, a scope's paths or a candidate pool can be longer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

# Under the smallest limit SQLite has had, with room for a statement's other parameters.
SQL_BATCH = 500

Value = TypeVar("Value")


def batched(values: Iterable[Value], size: int = SQL_BATCH) -> Iterator[tuple[list[Value], str]]:
    """``values`` in slices of at most ``size``, each with its placeholders (``?,?,?``) for an ``IN (...)`` list.

    ``for batch, marks in batched(ids): connection.execute(f"... WHERE id IN ({marks})", batch)``
    """
    values = list(values)
    for start in range(0, len(values), size):
        batch = values[start : start + size]
        yield batch, ",".join("?" * len(batch))
