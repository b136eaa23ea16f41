"""The rows one indexing run writes for the files it parsed: chunks (with their cards and vector keys), edges, files."""

from __future__ import annotations

import sqlite3

from ..core.model import TYPE_KINDS
from ..dense.vectors import vector_key
from ..parse.cards import card_text, members_by_parent, returned_summary, type_summaries


def documented_types(connection: sqlite3.Connection, parsed: list, removed: list[str],
                     rebuild: bool) -> dict[str, str]:
    """Documented types of the repository after this run: the unchanged files' and the new chunks'."""
    if not parsed:
        return {}  # no new chunk needs a card
    changed = set(removed) | {item[0].path for item, *_ in parsed}
    kinds = tuple(sorted(TYPE_KINDS))
    stored = [] if rebuild else [
        (name, docstring) for path, name, docstring in connection.execute(
            f"SELECT path, name, docstring FROM chunks WHERE docstring != '' AND part = 0"  # noqa: S608
            f" AND kind IN ({','.join('?' * len(kinds))})", kinds)
        if path not in changed]
    fresh = [(chunk.symbol.rsplit(".", 1)[-1], chunk.docstring) for _, result in parsed for chunk in result.chunks
             if chunk.kind in TYPE_KINDS and chunk.docstring and not chunk.part]
    return type_summaries(stored + fresh)


def table_rows(parsed: list, summaries: dict[str, str], card_model: str,
               code_model: str) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """``(chunk rows, edge rows, file rows)`` for the parsed files, in the tables' column order."""
    rows: list[tuple] = []
    edge_rows: list[tuple] = []
    file_rows: list[tuple] = []
    for (source, data, digest, mtime), result in parsed:
        file_rows.append((source.path, digest, len(data), mtime, source.language, len(result.chunks), result.error))
        members: dict[str, list[str]] | None = None
        for chunk, document, card, code in zip(result.chunks, result.documents, result.cards, result.codes,
                                               strict=True):
            returns = returned_summary(chunk, summaries)
            if returns:  # the repository's types were not known where the file was parsed
                members = members if members is not None else members_by_parent(result.chunks)
                card = card_text(chunk, members.get(chunk.symbol), returns)
            rows.append((
                chunk.path, chunk.language, chunk.kind, chunk.symbol, chunk.symbol.rsplit(".", 1)[-1],
                chunk.start_line, chunk.end_line, chunk.signature, chunk.docstring, chunk.parent,
                int(chunk.is_test), chunk.text, document, card,
                vector_key(card_model, card), vector_key(code_model, code), chunk.part,
            ))
        edge_rows.extend((e.path, e.source, e.target, e.kind, e.line) for e in result.edges)
    return rows, edge_rows, file_rows
