"""Gitignore-style glob rules, matched in time linear in the path's length.

pathspec reads each rule (``**``, ``*``, ``?``, ``[...]``, a leading ``/``, a trailing ``/``, ``!``) into a regular
expression; here each runs on RE2, which never backtracks. pathspec's own matching runs them on Python's ``re``
where its RE2 backend is missing (a glob of fourteen ``*?`` then takes seconds per path, holding the GIL), and its
RE2 backend compiles a whole file into one ``re2.Set``, which a large file of intricate rules makes fail to
compile. The last rule that matches a path decides, as in git.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import re2
from pathspec.util import lookup_pattern

GITIGNORE_RULE = lookup_pattern("gitignore")
SURROGATE = re.compile("[\ud800-\udfff]")
# Rules searched together in one expression (see GlobRules).
GROUP_RULES = 64


class GlobError(ValueError):
    """A glob that pathspec cannot read or RE2 cannot compile; the message names it."""


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # errors are raised (or the rule skipped) anyway
    options.never_capture = True  # pathspec's expressions may name groups; one alternation of several repeats them
    return options


def _compile(expression: str) -> re2._Regexp | str:
    """The compiled expression, or why RE2 refused it (an invalid range ``[z-a]``, too large for its memory)."""
    try:
        return re2.compile(_encodable(expression), _options())
    except re2.error as error:
        detail = error.args[0] if error.args else b""
        return (detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)) or "invalid"


def _encodable(text: str) -> str:
    """``text`` as RE2 can take it: a name os.walk could not decode holds lone surrogates, which UTF-8 can't carry."""
    return text if text.isascii() else SURROGATE.sub("\ufffd", text)


class _Group:
    """A run of consecutive rules and one expression of them all: a path that matches none costs one search."""

    def __init__(self, rules: list[tuple[str, re2._Regexp, bool]]) -> None:
        self.rules = [(regex, include) for _, regex, include in rules]
        combined = rules[0][1] if len(rules) == 1 else _compile("|".join(f"(?:{text})" for text, _, _ in rules))
        self.any = None if isinstance(combined, str) else combined
        # Without negations (most .gitignore files) any match decides; with them, the last one does.
        self.uniform = len({include for _, include in self.rules}) == 1

    def decide(self, path: str) -> bool | None:
        if self.any is not None:
            if not self.any.search(path):
                return None
            if self.uniform:
                return self.rules[0][1]
        for regex, include in reversed(self.rules):
            if regex.search(path):
                return include
        return None


class GlobRules:
    """Gitignore-style rules in file order; :meth:`decide` says what the last one matching a path says."""

    def __init__(self, lines: Iterable[str], strict: bool = True) -> None:
        """Read ``lines`` (blank lines and ``#`` comments are no rules).

        Args:
            lines: The rules, one per line.
            strict: Raise :class:`GlobError` for a rule that can't be read; otherwise skip it, as git skips
                a ``.gitignore`` line it can't use.
        """
        rules: list[tuple[str, re2._Regexp, bool]] = []
        for line in lines:
            if not strict and line.removeprefix("!").rstrip(" ") == "/":
                continue  # git matches nothing with a lone "/" ("!/" too); pathspec's rule would match everything
            try:
                expression, include = GITIGNORE_RULE.pattern_to_regex(line)  # type: ignore[attr-defined]
            except (ValueError, TypeError) as error:
                if strict:
                    raise GlobError(f"{line[:80]!r}: {error}") from None
                continue
            if include is None:  # a blank line or a comment
                continue
            compiled = _compile(expression)
            if isinstance(compiled, str):
                if strict:
                    raise GlobError(f"{line[:80]!r}: {compiled}")
                continue
            rules.append((expression, compiled, bool(include)))
        # Groups, not one expression of every rule: RE2 keeps a small group's automaton in memory, while
        # one of a thousand intricate rules overflows it and falls back to a much slower simulation.
        self._groups = [_Group(rules[start : start + GROUP_RULES]) for start in range(0, len(rules), GROUP_RULES)]

    def __bool__(self) -> bool:
        return bool(self._groups)

    def decide(self, path: str) -> bool | None:
        """``True``: the last rule matching ``path`` includes it; ``False``: it excludes it (``!``); ``None``: none.

        ``path`` is relative, with ``/`` between its parts; a directory's ends with ``/`` for rules that name
        directories only (``build/``).
        """
        path = _encodable(path)
        for group in reversed(self._groups):
            verdict = group.decide(path)
            if verdict is not None:
                return verdict
        return None

    def matches(self, path: str) -> bool:
        """Whether the last rule matching ``path`` includes it."""
        return self.decide(path) is True
