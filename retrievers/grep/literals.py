"""The substrings every match of a regex must contain, read from the regex's parse tree.

The trigram index narrows a search to the texts holding them, and a regex's longest one is
the anchor the line scan jumps to. Python's regex parser reads the tree: a private module
(``re._parser``), kept to this one file.
"""

from __future__ import annotations

import re


def required_literals(pattern: str) -> list[str]:
    """Substrings every match of ``pattern`` contains (case-sensitive parts only); empty when unknown.

    Parsed with Python's regex parser, whose syntax RE2 shares for everything that yields a
    literal; anything it can't read simply gets no prefilter.
    """
    try:
        parsed = _regex_parser().parse(pattern)
    except Exception:  # noqa: BLE001 - RE2-only syntax: no prefilter, the scan stays correct
        return []
    if parsed.state.flags & re.IGNORECASE:
        return []
    found: list[str] = []
    _collect_literals(list(parsed), found)
    return [literal for literal in found if len(literal) >= 3]


def _regex_parser():
    """Python's regex parser module (``re._parser`` since 3.11, ``sre_parse`` before)."""
    try:
        from re import _parser  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as _parser  # type: ignore[no-redef]
    return _parser


def _collect_literals(items: list, found: list[str]) -> None:
    """Append the literal runs of a parsed sequence that every match must contain."""
    constants = _regex_parser()  # the parser module re-exports the opcodes

    run: list[str] = []
    for op, argument in items:
        if op is constants.LITERAL:
            run.append(chr(argument))
            continue
        if run:
            found.append("".join(run))
            run = []
        if op is constants.SUBPATTERN:
            _group, add_flags, _del_flags, body = argument
            if not add_flags & re.IGNORECASE:
                _collect_literals(list(body), found)
        elif op in (constants.MAX_REPEAT, constants.MIN_REPEAT) and argument[0] >= 1:
            _collect_literals(list(argument[2]), found)
    if run:
        found.append("".join(run))
