"""The Markdown table every benchmark prints."""

from __future__ import annotations


def print_table(rows: list[dict]) -> None:
    """One row per dict; the columns are every key, in first-seen order."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row.get(column, "")) for column in columns) + " |")
