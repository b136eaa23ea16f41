"""Literal and regex search over the text store: every matching line, ranked and definition-aware.

Like ripgrep, a result is a matching line; unlike it, each line comes with the innermost
definition that contains it (the file, for module-level lines), and lines are ranked:

1. in-focus files first (implementation before tests and docs under the default focus; the
   reverse under ``focus="tests"``), the same demotion ordinary search applies;
2. then lines that *define* the text (``def parse_args(``, ``class Foo``, ``const X =``,
   ``func (s *S) Name(``, ``public int size(``) before lines that use it;
3. then path and line order.

Regexes run on RE2 (``google-re2``): a linear-time engine, so no pattern can backtrack
catastrophically; lookarounds and backreferences, which need backtracking, are refused with a
clear message. Python's ``re`` with a timeout was the alternative, but a running ``re`` match
cannot be interrupted from Python. The scan itself is bounded too: at most
``MAX_MATCHED_LINES`` lines are collected and ``TIME_BUDGET_S`` seconds spent, and a result
says when it stopped early.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import re2

from ..core.results import CodeResult, code_result
from ..store.textstore import TextStore

MODES = ("literal", "regex")
MAX_PATTERN_CHARS = 10_000
MAX_MATCHED_LINES = 1_000  # as many as a caller may ask to see (MAX_MATCH_LIMIT)
TIME_BUDGET_S = 5.0
SNIPPET_CHARS = 300
DEFINITION_SCORE = 1.0
USE_SCORE = 0.6  # above an out-of-focus definition (0.5 x 1.0): focus decides first
SQL_BATCH = 500
LINE_MODE = "(?m)"  # ``^`` and ``$`` match at every line, as in grep
# Jumping to a regex's literal (bytes.find, then the regex on that line) beats scanning with the regex
# while the literal occurs less than once per this many bytes.
SPARSE_ANCHOR_BYTES = 4_000

MODIFIERS = (r"(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|final|abstract|"
             r"async|unsafe|extern|override|readonly|declare|sealed|synchronized|native|const|open|inline)\s+)")
NAME = r"[A-Za-z_$][\w$]*"
# Words that start statements, never a field's name (``return err``, ``go run()``, ``defer f()``).
STATEMENT_WORDS = (r"(?:return|go|defer|goto|break|continue|fallthrough|else|case|default|package|import|yield|"
                   r"raise|await|throw|delete|typeof|new|assert|del|pass|print|not|in|is|panic)")
# One regex, three shapes of line, each naming the defined name in its own group (one match call per line).
DEFINITION_LINE = re.compile("|".join((
    # keyword definitions in every indexed language: def, class, fn, func (with a Go receiver), type, let...
    rf"^\s*{MODIFIERS}*(?:def|class|function\*?|func|fn|interface|type|struct|enum|trait|record|module|namespace|"
    rf"macro_rules!|let|var|const|val)\s+(?:\([^)]*\)\s*)?(?P<keyword>{NAME})",
    # a typed declaration with at least one modifier (Java, C#, TypeScript members)
    rf"^\s*{MODIFIERS}+(?:[\w$<>\[\],.?]+\s+)+(?P<typed>{NAME})\s*[(=;:]",
    # an assignment at the start of a line (module constants, Go ``X := ...``, class attributes)
    rf"^\s*(?P<assigned>{NAME})\s*(?::[^=\n]*)?:?=(?!=)",
    # an annotated member: ``name: str``, ``name?: Type;`` (Python and TypeScript fields, object keys)
    rf"^\s*{MODIFIERS}*(?P<member>{NAME})\??\s*:\s*[^\s=].*$",
    # a Go struct field or interface method: ``Name Type``, ``Run func(cmd *Command)``, ``Close() error``
    rf"^\s*(?!{STATEMENT_WORDS}\b)(?P<field>{NAME})(?:\s+(?:func\b.*|[*\[\]]*[A-Za-z_][\w.]*(?:\[[^\]]*\])?"
    rf"(?:\s+`[^`]*`)?\s*(?://.*)?)|\([^)]*\)[\w*\[\](), .\t]*(?://.*)?)$",
)))


class PatternError(ValueError):
    """A literal or regex that can't be searched; the message says why in one line."""


@dataclass(frozen=True)
class Pattern:
    """A compiled literal or regex, and the substrings every match must contain (for the trigram index)."""

    mode: str
    text: str
    literals: tuple[str, ...]
    needle: bytes = b""
    regex: object = None
    anchor: bytes = b""  # a regex's longest required literal: memchr-speed jumps to the lines that may match

    def find(self, data: bytes, position: int) -> tuple[int, int] | None:
        """``(start, end)`` of the first match at or after ``position``, or ``None``."""
        if self.regex is None:
            start = data.find(self.needle, position)
            return None if start < 0 else (start, start + len(self.needle))
        match = self.regex.search(data, position)  # type: ignore[attr-defined]
        return None if match is None else match.span()


def _check_text(text: object, what: str) -> str:
    if not isinstance(text, str):
        raise PatternError(f"the {what} must be a string")
    if not text:
        raise PatternError(f"the {what} is empty")
    if "\x00" in text:
        raise PatternError(f"the {what} contains a NUL byte")
    if len(text) > MAX_PATTERN_CHARS:
        raise PatternError(f"the {what} is {len(text):,} characters; the limit is {MAX_PATTERN_CHARS:,}")
    return text


def compile_pattern(text: str, mode: str) -> Pattern:
    """A literal (exact, case-sensitive) or RE2 regex (``(?m)``: ``^``/``$`` match at lines); raises PatternError."""
    if mode == "literal":
        text = _check_text(text, "literal")
        if not text.strip():
            raise PatternError("the literal is only whitespace")
        return Pattern("literal", text, (text,), needle=text.encode("utf-8", "replace"))
    if mode != "regex":
        raise PatternError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    text = _check_text(text, "regex")
    try:
        compiled = re2.compile(LINE_MODE + text, quiet_options(within_lines=True))
    except re2.error as error:
        detail = _error_text(error).replace(": " + LINE_MODE, ": ", 1)
        hint = (" (lookarounds and backreferences are not supported: matching runs in linear time)"
                if re.search(r"\(\?<?[=!]|\\[1-9]", text) else "")
        raise PatternError(f"invalid regex {text[:80]!r}: {detail}{hint}") from None
    literals = tuple(required_literals(text))
    anchor = max(literals, key=len).encode("utf-8") if literals else b""
    return Pattern("regex", text, literals, regex=compiled, anchor=anchor)


def quiet_options(within_lines: bool = False) -> re2.Options:
    """RE2's options without its logging of syntax errors to stderr (they are raised anyway).

    ``within_lines``: a match never spans a newline (whitespace classes stop at line ends), as in grep.
    """
    options = re2.Options()
    options.log_errors = False
    options.never_nl = within_lines
    return options


def _error_text(error: re2.error) -> str:
    detail = error.args[0] if error.args else ""
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    return str(detail) or "invalid syntax"


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


# --------------------------------------------------------------------------- matching lines
@dataclass
class LineMatch:
    """One matching line; its number is counted only if it is shown (counting newlines is the costly part)."""

    path: str
    offset: int  # where the line starts in the file's bytes
    text: str
    column: int  # characters before the match on its line
    width: int  # characters of the match on its line
    definition: bool = False
    score: float = 0.0
    data: bytes = field(default=b"", repr=False)

    @property
    def line(self) -> int:  # noqa: D102
        return self.data.count(b"\n", 0, self.offset) + 1


@dataclass
class LineSearch:
    """Every matching line found (up to the bounds), and whether the scan covered everything."""

    matches: list[LineMatch] = field(default_factory=list)
    complete: bool = True
    stopped: str = ""


def line_spans(data: bytes, pattern: Pattern) -> Iterator[tuple[int, int, int, int]]:
    """``(line start, line end, match start, match end)`` of each matching line, in order.

    A regex with a required literal first jumps from one occurrence of the literal to the next
    (``bytes.find``, what ripgrep does with SIMD) and matches only those lines: every match holds
    the literal and stays within a line. Where the literal turns out to be common (more than one
    per ``SPARSE_ANCHOR_BYTES`` of the file), the rest of the file is scanned by the regex itself.
    """
    position = 0
    size = len(data)
    if pattern.anchor:
        jumps_left = size // SPARSE_ANCHOR_BYTES + 1
        while jumps_left:
            jumps_left -= 1
            hit = data.find(pattern.anchor, position)
            if hit < 0:
                return
            line_start = data.rfind(b"\n", 0, hit) + 1
            line_end = data.find(b"\n", hit)
            line_end = size if line_end < 0 else line_end
            match = pattern.regex.search(data, line_start, line_end)  # type: ignore[attr-defined]
            if match is not None:
                yield (line_start, line_end, *match.span())
            position = line_end + 1
    while position <= size:
        found = pattern.find(data, position)
        if found is None:
            return
        start, end = found
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", start)
        line_end = size if line_end < 0 else line_end
        yield line_start, line_end, start, end
        # One result per line; a match spanning lines goes on after its end.
        position = max(line_end + 1, end)


def lines_in(data: bytes, pattern: Pattern) -> Iterator[tuple[int, int, int, int, int]]:
    """:func:`line_spans` with the line number first: ``(line, line start, line end, match start, match end)``."""
    line, counted_to = 1, 0
    for line_start, line_end, start, end in line_spans(data, pattern):
        line += data.count(b"\n", counted_to, line_start)
        counted_to = line_start
        yield line, line_start, line_end, start, end


def is_definition_line(text: str, column: int, width: int) -> bool:
    """Whether the match (``column``, ``width`` on the line ``text``) covers the name a definition line defines.

    ``def parse_args(`` and ``parse_args`` both do on ``def parse_args(argv):``; ``def`` and ``parse``
    do not, nor does ``parse_args`` on ``def test_parse_args():`` (a definition of another name).
    """
    found = DEFINITION_LINE.match(text)
    if found is None:
        return False
    name = found.lastgroup or ""
    return column <= found.start(name) and column + width >= found.end(name)


def search_lines(store: TextStore, pattern: Pattern, paths: list[str] | None,
                 priority: Callable[[str], float], max_lines: int = MAX_MATCHED_LINES,
                 budget_s: float = TIME_BUDGET_S) -> LineSearch:
    """Every matching line of the stored texts among ``paths`` (all when ``None``), in-focus files first.

    ``priority`` scores a path (higher is scanned, and ranked, first); the scan stops after
    ``max_lines`` lines or ``budget_s`` seconds, and says so.
    """
    deadline = time.monotonic() + budget_s
    ids = store.candidate_ids(pattern.literals)
    texts = list(store.iter_texts(ids, paths))
    texts.sort(key=lambda item: -priority(item[0]))
    found = LineSearch()
    for path, data in texts:
        if time.monotonic() > deadline:
            found.complete, found.stopped = False, f"stopped after {budget_s:g}s"
            break
        for line_start, line_end, start, end in line_spans(data, pattern):
            if len(found.matches) >= max_lines:
                found.complete, found.stopped = False, f"stopped after {max_lines:,} matching lines"
                return found
            raw = data[line_start:line_end]
            text = raw.decode("utf-8", "replace").rstrip("\r")
            if len(text) == len(raw):  # ASCII: byte offsets are character offsets
                column, width = start - line_start, min(end, line_end) - start
            else:
                column = len(data[line_start:start].decode("utf-8", "replace"))
                width = len(data[start:min(end, line_end)].decode("utf-8", "replace"))
            found.matches.append(LineMatch(path, line_start, text, column, width,
                                           is_definition_line(text, column, width), data=data))
    return found


def rank_lines(matches: list[LineMatch], priority: Callable[[str], float]) -> list[LineMatch]:
    """Score each line (focus factor x definition or use) and sort: best first, then path and line."""
    for match in matches:
        match.score = priority(match.path) * (DEFINITION_SCORE if match.definition else USE_SCORE)
    return sorted(matches, key=lambda m: (-m.score, m.path, m.offset))


@dataclass
class GrepAnswer:
    """The best matching lines as results, how many lines matched, and whether the scan saw everything."""

    results: list[CodeResult]
    total: int
    complete: bool = True
    stopped: str = ""
    generation: str = ""  # the index generation searched


# --------------------------------------------------------------------------- enclosing definitions
@dataclass(frozen=True)
class ChunkSpan:
    """Where a chunk lies in its file."""

    chunk_id: int
    start_line: int
    end_line: int
    symbol: str
    kind: str


def chunk_spans(connection: sqlite3.Connection, paths: list[str]) -> dict[str, list[ChunkSpan]]:
    """The chunks of ``paths``, by path."""
    spans: dict[str, list[ChunkSpan]] = {path: [] for path in paths}
    for start in range(0, len(paths), SQL_BATCH):
        batch = paths[start : start + SQL_BATCH]
        marks = ",".join("?" * len(batch))
        for chunk_id, path, first, last, symbol, kind in connection.execute(
                f"SELECT id, path, start_line, end_line, symbol, kind FROM chunks WHERE path IN ({marks})",  # noqa: S608
                batch):
            spans[path].append(ChunkSpan(chunk_id, first, last, symbol, kind))
    return spans


def innermost(spans: list[ChunkSpan], line: int) -> ChunkSpan | None:
    """The smallest chunk whose lines contain ``line`` (``None`` if none does)."""
    containing = [span for span in spans if span.start_line <= line <= span.end_line]
    return min(containing, key=lambda s: (s.end_line - s.start_line, s.kind == "module"), default=None)


def nearest(spans: list[ChunkSpan], line: int) -> ChunkSpan | None:
    """For a line no chunk contains: the file's module chunk, else the definition that ends closest before it.

    Without either (a line above every definition), the file's first chunk.
    """
    module = next((span for span in spans if span.kind == "module"), None)
    if module is not None:
        return module
    before = [span for span in spans if span.start_line <= line]
    if before:
        return max(before, key=lambda s: (s.end_line, -s.start_line))
    return min(spans, key=lambda s: s.start_line, default=None)


def enclosing(spans: list[ChunkSpan], line: int) -> ChunkSpan | None:
    """The chunk a line counts for: the innermost one around it, else (a line no chunk covers) :func:`nearest`."""
    return innermost(spans, line) or nearest(spans, line)


def line_result(match: LineMatch, spans: list[ChunkSpan]) -> CodeResult:
    """The public result of a matching line: the shared result fields plus ``line``."""
    line = match.line
    span = innermost(spans, line)
    if span is None:  # a module-level line no chunk covers: the file is the answer
        symbol, kind, first, last = PurePosixPath(match.path).stem, "module", 1, match.data.count(b"\n") + 1
    else:
        symbol, kind, first, last = span.symbol, span.kind, span.start_line, span.end_line
    return code_result(match.path, first, last, symbol, kind, match.score, match.text[:SNIPPET_CHARS], line=line)


def results_for(connection: sqlite3.Connection, matches: list[LineMatch]) -> list[CodeResult]:
    """Results (with enclosing definitions) for already ranked, already cut matches."""
    spans = chunk_spans(connection, list(dict.fromkeys(match.path for match in matches)))
    return [line_result(match, spans[match.path]) for match in matches]


# --------------------------------------------------------------------------- exact evidence for ordinary search
MIN_EXACT_CHARS = 20
MIN_QUOTED_CHARS = 8
MAX_EXACT_CHARS = 2_000
MAX_EXACT_PHRASES = 8
# A phrase found in more places than this says little about which one is meant.
MAX_EXACT_LOCATIONS = 20
# A message quoted in a question: several words between straight quotes. Backticks name code (symbol
# matching's job), and a quoted single word is a name, not a message.
QUOTED = re.compile("|".join(rf"(?<!\w){quote}([^{quote}\n]*\w\s+\w[^{quote}\n]*){quote}(?!\w)" for quote in "\"'"))
# A line of code, not prose: a call, an assignment, a brace or semicolon, or a statement keyword first.
CODE_LINE = re.compile(r"\w\(|[^=!<>]=[^=]|[{};]|^(?:def|class|return|raise|import|from|if|elif|for|while|with|"
                       r"func|fn|let|const|var|throw|try|catch|assert|await|yield|pub|public|private)\b")
# A bare name (``Store.save``, ``parse_args()``) is a question for symbol lookup, which ranks its definition;
# as a pasted phrase it would rank the lines that use it.
BARE_NAME = re.compile(r"[\w$#]+(?:(?:\.|::)[\w$#]+)*(?:\(\))?")
PHRASE_TOKEN = re.compile(r"\w+|[^\w\s]")
MIN_SCAN_TOKENS = 6
PLAIN_WORDS = re.compile(r"\w+(?: \w+)*")
WH_WORDS = frozenset("how what where why which when who whom whose".split())
AUXILIARIES = frozenset("does do did is are was were can could should would will".split())
# Any of these in a text makes it code-like: brackets, operators, quotes, dotted or snake/camel names.
CODE_MARK = re.compile(r"[()\[\]{}=;:<>\"'`]|\w[._]\w|[a-z][A-Z]")
# The longest words of a phrase narrow its candidates enough; more trigrams cost more than they save.
TOLERANT_LITERALS = 3
# Each trigram costs a doclist read; a dozen from the longest words narrow a phrase's files well enough.
EXACT_TRIGRAMS = 12
TOLERANT_EVIDENCE = 0.9


def exact_phrases(query: str) -> list[str]:
    """Parts of a query that may be pasted from the code, longest first.

    The whole query (a pasted line, message or block), quoted strings inside a longer
    question, and the code-looking lines of a multi-line input (a traceback's source lines).
    """
    text = query.strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    candidates: list[str] = []
    # One line (not a question in words), or a block that is mostly code; an issue report as a whole is
    # never in the code.
    pasted = (len(lines) == 1 and not is_prose_question(text) and not BARE_NAME.fullmatch(text)) or is_code_block(text)
    if MIN_EXACT_CHARS <= len(text) <= MAX_EXACT_CHARS and pasted:
        candidates.append(text)
    quoted = (next(group for group in match.groups() if group).strip() for match in QUOTED.finditer(text))
    candidates += [message for message in quoted if MIN_QUOTED_CHARS <= len(message) <= MAX_EXACT_CHARS]
    if len(lines) > 1:
        candidates += [line for line in lines if is_code_line(line)]
    return list(dict.fromkeys(candidate.strip() for candidate in candidates))[:MAX_EXACT_PHRASES]


def plain_pattern(words: str) -> Pattern:
    """A literal for a phrase of plain words, narrowed by its longest words' trigrams (not the spaces')."""
    longest = sorted(words.split(), key=len, reverse=True)[:TOLERANT_LITERALS]
    return Pattern("literal", words, tuple(longest), needle=words.encode("utf-8", "replace"))


def is_code_line(line: str) -> bool:
    """A line of code worth looking up verbatim (long enough, and a call, assignment, brace or keyword)."""
    return len(line.strip()) >= MIN_EXACT_CHARS and CODE_LINE.search(line.strip()) is not None


def is_code_block(text: str) -> bool:
    """Several lines, at least half of them code: a pasted block rather than a report about one."""
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) > 1 and 2 * sum(is_code_line(line) for line in lines) >= len(lines)


def is_prose_question(text: str) -> bool:
    """``how does json decode a string``: a question in plain words, which nobody pasted from the code.

    It opens with a wh-word (or with an auxiliary and ends with ``?``) and has no mark of code at all;
    ``are desired between two values, simply use`` (a docstring line) is not one.
    """
    words = text.split()
    if not words or CODE_MARK.search(QUOTED.sub(" ", text)):  # a quoted message is part of the question
        return False
    first = words[0].lower()
    return first in WH_WORDS or (first in AUXILIARIES and text.rstrip().endswith("?"))


def tolerant_pattern(phrase: str) -> Pattern | None:
    """A regex matching ``phrase`` whatever its whitespace (indentation, spaces around punctuation).

    Words keep at least one space between them; punctuation may have any or none. The words
    themselves must appear verbatim, so they are what the trigram index narrows by.
    """
    tokens = PHRASE_TOKEN.findall(phrase)
    if not tokens:
        return None
    parts = [re2.escape(tokens[0])]
    for previous, token in zip(tokens, tokens[1:]):
        both_words = previous[0].isalnum() or previous[0] == "_"
        both_words = both_words and (token[0].isalnum() or token[0] == "_")
        parts.append((r"\s+" if both_words else r"\s*") + re2.escape(token))
    words = sorted((t for t in tokens if len(t) >= 3 and (t[0].isalnum() or t[0] == "_")), key=len, reverse=True)
    try:
        compiled = re2.compile("".join(parts), quiet_options())
    except re2.error:  # a pasted block too large for RE2's memory budget
        return None
    # No anchor: a pasted phrase may span lines in the code, and anchor jumps match within one line.
    return Pattern("regex", phrase, tuple(words[:TOLERANT_LITERALS]), regex=compiled)


def exact_locations(store: TextStore, phrase: str, paths: list[str] | None) -> list[tuple[str, int, float]]:
    """``(path, line, evidence)`` where ``phrase`` occurs; empty when it is everywhere or nowhere.

    An occurrence spaced exactly as pasted is worth 1.0; one that differs in whitespace only,
    ``TOLERANT_EVIDENCE`` (so ``Item=Self`` pasted beats ``Item = Self`` elsewhere).

    A phrase without a word of three characters (``"0 1 x 2",``) has nothing for the trigram index:
    every text is scanned, if the phrase has enough tokens to be worth it.
    """
    words = " ".join(phrase.split())
    # Words and single spaces only (a message, a sentence): found as written, at memchr speed.
    pattern = plain_pattern(words) if PLAIN_WORDS.fullmatch(words) else tolerant_pattern(phrase)
    if pattern is None or (not pattern.literals and len(PHRASE_TOKEN.findall(phrase)) < MIN_SCAN_TOKENS):
        return []
    verbatim = phrase.encode("utf-8", "replace")
    found: list[tuple[str, int, float]] = []
    for path, data, line, _, _, start, end in candidate_lines(store, pattern, paths):
        found.append((path, line, 1.0 if verbatim in data[start:end] else TOLERANT_EVIDENCE))
        if len(found) > MAX_EXACT_LOCATIONS:
            return []
    return found


# ``(path, data, line, line start, line end, match start, match end)``
CandidateLine = tuple[str, bytes, int, int, int, int, int]


def candidate_lines(store: TextStore, pattern: Pattern, paths: list[str] | None,
                    keep_path: Callable[[str], bool] | None = None) -> Iterator[CandidateLine]:
    """Each line ``pattern`` matches in the texts the trigram index leaves (among ``paths``, by ``keep_path``)."""
    ids = store.candidate_ids(pattern.literals, EXACT_TRIGRAMS)
    if ids is not None and not ids:
        return
    for path, data in store.iter_texts(ids, paths):
        if keep_path is None or keep_path(path):
            for line, line_start, line_end, start, end in lines_in(data, pattern):
                yield path, data, line, line_start, line_end, start, end


def exact_chunk_evidence(store: TextStore, query: str, paths: list[str] | None) -> dict[int, float]:
    """Chunk ids holding a part of ``query`` verbatim: the innermost definition around each occurrence.

    A line no chunk covers counts for the file's module chunk, else the nearest definition.
    """
    connection = store.connection
    evidence: dict[int, float] = {}
    found: list[str] = []
    for phrase in exact_phrases(query):
        words = " ".join(phrase.split())
        if any(words in longer for longer in found):
            continue  # a quoted string inside a pasted line already found: it would only add noise
        locations = exact_locations(store, phrase, paths)
        if not locations:
            continue
        found.append(words)
        spans = chunk_spans(connection, list(dict.fromkeys(path for path, _, _ in locations)))
        for path, line, value in locations:
            span = enclosing(spans[path], line)
            if span is not None:
                evidence[span.chunk_id] = max(evidence.get(span.chunk_id, 0.0), value)
    return evidence
