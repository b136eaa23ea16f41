"""The one shape of a search result, for every caller: the graph, the retriever, serve, MCP and the CLI.

Every result names a piece of code (``path``, ``start_line``, ``end_line``, ``symbol``, ``kind``), how it
ranked (``score``) and what to show (``snippet``). Some answers add why they were chosen:

- ``line``: the matching line (literal and regex mode) or the line a relation is written on;
- ``relation``: the graph question answered (``callers``, ``callees``, ``subclasses``...);
- ``via``: the reference as written (``self.store.save``);
- ``resolution``: how surely a call reaches this definition (``resolved``, ``by name only``...).
"""

from __future__ import annotations

from typing_extensions import NotRequired, TypedDict

SCORE_DIGITS = 4
# Results a search returns unless the caller asks for another number (the graph, the CLI, MCP, the Searcher).
DEFAULT_LIMIT = 10


class CodeResult(TypedDict):
    """One ranked piece of code."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    score: float
    snippet: str
    line: NotRequired[int]
    relation: NotRequired[str]
    via: NotRequired[str]
    resolution: NotRequired[str]


class FileRank(TypedDict):
    """One file of a ranking derived from the results: the best score of its definitions, and their symbols."""

    path: str
    score: float
    symbols: list[str]


RESULT_FIELDS: tuple[str, ...] = tuple(CodeResult.__annotations__)
"""Every field a result may have, the ones always present first."""


def code_result(path: str, start_line: int, end_line: int, symbol: str, kind: str, score: float,
                snippet: str = "", *, line: int | None = None, relation: str = "", via: str = "",
                resolution: str = "") -> CodeResult:
    """A result; the optional fields are left out when empty (``via`` is kept with a relation)."""
    result: CodeResult = {"path": path, "start_line": start_line, "end_line": end_line, "symbol": symbol,
                          "kind": kind, "score": round(float(score), SCORE_DIGITS), "snippet": snippet}
    if line is not None:
        result["line"] = line
    if relation:
        result["relation"] = relation
        result["via"] = via
    elif via:
        result["via"] = via
    if resolution:
        result["resolution"] = resolution
    return result


def rank_files(results: list[CodeResult]) -> list[FileRank]:
    """The files of ``results`` in the order of their best result, each with its symbols in ranked order.

    A ranking of the definitions to change is also one of the files to change: a file ranks where its
    first definition does, so several windows or methods of one file count once.
    """
    files: dict[str, FileRank] = {}
    for result in results:
        entry = files.setdefault(result["path"], {"path": result["path"], "score": result["score"], "symbols": []})
        if result["symbol"] and result["symbol"] not in entry["symbols"]:
            entry["symbols"].append(result["symbol"])
    return list(files.values())
