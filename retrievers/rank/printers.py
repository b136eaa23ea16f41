"""The definitions that printed a message: its words looked up inside the string literals of the stored texts.

A message's runs of plain words (between the values it printed) occur verbatim in the code's template, inside a
string literal of an implementation file; each place found counts for the innermost definition around it. The
template around the place (:func:`retrievers.rank.templates.template_around`, read over the lines a
concatenation spans) is then laid over the whole message, so the one definition whose template the message fits
is told from the others that share a few of its words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..grep.patterns import Pattern, plain_pattern
from ..grep.scan import CandidateLine, candidate_lines
from ..grep.spans import chunk_spans, enclosing
from ..source.languages import is_test_path
from ..store.textstore import TextStore
from .templates import MAX_PREFIX, Part, template_around, template_fit

MIN_FRAGMENT_CHARS = 12
MAX_FRAGMENTS = 12
# A text in more implementation lines than this is a common phrase or word, no evidence of one place.
MAX_LITERAL_LOCATIONS = 10
QUOTES = (b'"', b"'", b"`")
# Where a literal names a message without printing it: documentation quoting it, and module-level tables and
# constants (the code that prints them is elsewhere). Counting them cost an issue report its file's rank.
NO_PRINTER_KINDS = frozenset({"text", "module"})
# A template spread over lines (``"a " +`` / ``+ b``, adjacent literals, a multi-line template literal) is read
# over at most this many lines before and after the one found.
MAX_CONTINUATION_LINES = 4
# ... and at most this many characters either side of the place found (a minified file is one long line).
MAX_TEMPLATE_REACH = 2_000
# A message fitting a template this well (see :func:`retrievers.rank.templates.template_fit`) was printed by the
# definition holding it; a looser fit is a few shared words.
MIN_TEMPLATE_FIT = 0.6


def inside_literal(line: bytes, column: int) -> bool:
    """Whether ``column`` of ``line`` is in a string literal opened on that line (an odd count of a quote before it)."""
    before = line[:column]
    return any(before.count(quote) % 2 == 1 for quote in QUOTES)


def literal_matches(store: TextStore, pattern: Pattern, paths: list[str] | None,
                    accept: Callable[[bytes, int], bool]) -> list[CandidateLine]:
    """The matches ``accept`` (line bytes, match column) keeps in implementation files.

    Tests that print or pass the same text use it, they do not make it; empty when it occurs in more than
    ``MAX_LITERAL_LOCATIONS`` lines (a common phrase or word, no evidence of one place).
    """
    found: list[CandidateLine] = []
    for match in candidate_lines(store, pattern, paths, lambda path: not is_test_path(path)):
        _, data, _, line_start, line_end, start, _ = match
        if accept(data[line_start:line_end], start - line_start):
            found.append(match)
            if len(found) > MAX_LITERAL_LOCATIONS:
                return []
    return found


def holder_of(store: TextStore, locations: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """The innermost definition around each location that can hold a message (see ``NO_PRINTER_KINDS``)."""
    spans = chunk_spans(store.connection, list(dict.fromkeys(path for path, _ in locations)))
    held = {}
    for path, line in locations:
        span = enclosing(spans[path], line)
        if span is not None and span.kind not in NO_PRINTER_KINDS:
            held[(path, line)] = span.chunk_id
    return held


def shorter_runs(run: str) -> list[str]:
    """``run`` without its last word, then without its first: a value printed without quotes (``plugin sparkle``)."""
    words = run.split()
    return [part for part in (" ".join(words[:-1]), " ".join(words[1:]))
            if len(words) > 2 and len(part) >= MIN_FRAGMENT_CHARS]


def lookup_runs(runs: list[str]) -> list[str]:
    """The runs worth a lookup: long enough to be one place's words, de-duplicated, longest first."""
    kept = dict.fromkeys(run for run in runs if len(run) >= MIN_FRAGMENT_CHARS)
    return sorted(kept, key=len, reverse=True)[:MAX_FRAGMENTS]


@dataclass
class Printers:
    """What the lookups of a message's runs found, by chunk id.

    ``chars``: how many characters of runs each definition's literals hold. ``fits``: the best
    :func:`retrievers.rank.templates.template_fit` of a message over a template the definition holds.
    """

    chars: dict[int, int] = field(default_factory=dict)
    fits: dict[int, float] = field(default_factory=dict)


def find_printers(store: TextStore, runs: list[str], messages: list[str], paths: list[str] | None) -> Printers:
    r"""Look up each of ``runs`` inside string literals and fit the ``messages`` that show it to the templates found.

    A run found nowhere is tried once more without its last word, then without its first (see
    :func:`shorter_runs`); one with an apostrophe also as a single-quoted literal spells it (``doesn\'t``).
    """
    printers = Printers()
    templates: dict[tuple[str, int], tuple[Part, ...] | None] = {}
    for run in lookup_runs(runs):
        for fragment in (run, *shorter_runs(run)):
            matches = [match for spelling in spellings(fragment)
                       for match in literal_matches(store, plain_pattern(spelling), paths, inside_literal)]
            held = holder_of(store, [(path, line) for path, _, line, *_ in matches]) if matches else {}
            if not held:
                continue
            for chunk_id in set(held.values()):
                printers.chars[chunk_id] = printers.chars.get(chunk_id, 0) + len(fragment)
            shown = [message for message in messages if fragment in message]
            for path, data, line, line_start, line_end, start, _ in matches:
                holder = held.get((path, line))
                if holder is None:
                    continue
                if (path, line) not in templates:
                    templates[(path, line)] = template_at(data, line_start, line_end, start)
                template = templates[(path, line)]
                if template is None:
                    continue
                for message in shown:
                    fit = template_fit(template, message)
                    printers.fits[holder] = max(printers.fits.get(holder, 0.0), fit)
            break
    return printers


def spellings(fragment: str) -> list[str]:
    """How a literal may spell ``fragment``: as it reads, and with its apostrophes escaped."""
    return [fragment, fragment.replace("'", "\\'")] if "'" in fragment else [fragment]


def template_at(data: bytes, line_start: int, line_end: int, position: int) -> tuple[Part, ...] | None:
    """The template around byte ``position`` of a file, read over the lines its literal continues on."""
    start, end = statement_lines(data, line_start, line_end)
    start, end = max(start, position - MAX_TEMPLATE_REACH), min(end, position + MAX_TEMPLATE_REACH)
    code = data[start:end].decode("utf-8", "replace")
    return template_around(code, len(data[start:position].decode("utf-8", "replace")))


def statement_lines(data: bytes, line_start: int, line_end: int) -> tuple[int, int]:
    """``(start, end)`` of the line at ``line_start`` widened to the lines a concatenation or literal spans."""
    start, end = line_start, line_end
    for _ in range(MAX_CONTINUATION_LINES):
        if start == 0:
            break
        above = data.rfind(b"\n", 0, start - 1) + 1
        if not continues(data[above:start - 1], data[start:end]):
            break
        start = above
    for _ in range(MAX_CONTINUATION_LINES):
        if end >= len(data):
            break
        below = data.find(b"\n", end + 1)
        below = len(data) if below < 0 else below
        if not (continues(data[start:end], data[end + 1:below]) or data.count(b"`", start, end) % 2):
            break
        end = below
    return start, end


def continues(upper: bytes, lower: bytes) -> bool:
    """Whether the text of ``upper`` goes on in ``lower``: a ``+`` between them, or two adjacent literals."""
    upper, lower = upper.rstrip(), lower.lstrip()
    if upper.endswith((b"+", b"\\")) or lower.startswith(b"+"):
        return True
    unprefixed = lower.lstrip(b"rbufRBUF")
    opens_literal = len(lower) - len(unprefixed) <= MAX_PREFIX and unprefixed[:1] in (b'"', b"'")
    return upper[-1:] in (b'"', b"'") and opens_literal
