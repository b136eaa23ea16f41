"""How ``grepgraph search`` prints a result as text: a heading, then the snippet lines that show why it matched.

A snippet can be longer than the few lines shown; when the query was pasted code or a pasted line, the
lines it matched are the ones shown (the first lines of a function are often not where the match is).
"""

from __future__ import annotations

SNIPPET_LINES = 4  # lines of a snippet shown under each result
MAX_MATCHED_LINES = 8  # a longer pasted block shows this many of its lines
MIN_MATCH_CHARS = 8  # shorter lines (`}`, `return x`) match too much to point at anything
LINE_CHARS = 140


def result_heading(result: dict) -> str:
    """``path:start-end  symbol  [kind, score]``; a graph answer shows the line, the call and how it was matched."""
    if "relation" not in result:
        return (f"{result['path']}:{result['start_line']}-{result['end_line']}  {result['symbol']}"
                f"  [{result['kind']}, {result['score']:.3f}]")
    line = result.get("line") or result["start_line"]
    inside = result["start_line"] <= line <= result["end_line"]  # callers: the call's line; callees: the definition
    where = f"{result['path']}:{line if inside else result['start_line']}  " if result["path"] else ""
    label = ", ".join(dict.fromkeys(part for part in (result["kind"], result.get("resolution")) if part))
    via = result.get("via") or ""
    call = f"  via {via}" if via and via != result["symbol"] else ""
    if via and not inside:
        call += f" (line {line})"
    return f"{where}{result['symbol']}  [{label}]{call}"


def snippet_lines(snippet: str, query: str) -> list[str]:
    """The lines of ``snippet`` to show: the first few, or those around the lines the query matched."""
    lines = snippet.splitlines()
    matched = [number for number, line in enumerate(lines) if matches_query_line(line, query)]
    if len(lines) <= SNIPPET_LINES or not matched or matched[-1] < SNIPPET_LINES:
        return [line[:LINE_CHARS] for line in lines[:SNIPPET_LINES]]
    first = matched[0]
    last = max(line for line in matched if line < first + MAX_MATCHED_LINES)
    start = max(0, min(first, last + 1 - SNIPPET_LINES, len(lines) - SNIPPET_LINES))
    end = max(last + 1, start + SNIPPET_LINES)
    return [line[:LINE_CHARS] for line in lines[start:end]]


def matches_query_line(line: str, query: str) -> bool:
    """Whether a snippet line is one the query quotes (or quotes part of), compared without indentation."""
    text = line.strip()
    if len(text) < MIN_MATCH_CHARS:
        return False
    return any(text == part or (len(part) >= MIN_MATCH_CHARS and (part in text or text in part))
               for part in (piece.strip() for piece in query.splitlines()))
