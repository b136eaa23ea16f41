r"""The values a program printed into a message, told apart from the words its template spells.

A pasted message (``Invalid character in URL, '\x07' at position 12.``) is a template's words with values where
the template had placeholders: quoted strings and their escapes, numbers and sizes (``0x7f``, ``12KB``), paths
and URLs, names (``user_id``, ``app.models``), what a language prints for a value (``None``, ``undefined``,
``NaN``, ``[object Object]``, ``<Pool object at 0x7f3a>``, ``[1, 2]``), and a lone token after the message's last
``": "``. What is left are the message's literal runs, which the code spells the same way.

A single pass over the message with bounded look-aheads: no pattern is built from the input, and nothing
backtracks over more than ``MAX_VALUE_CHARS``.
"""

from __future__ import annotations

import re
from bisect import bisect_right

# A quoted or bracketed value longer than this is more likely two quotes of the prose than one value.
MAX_VALUE_CHARS = 200
QUOTES = "'\"`"
QUOTE = re.compile("['\"`]")
# Each nesting bracket with what closes it, as a pattern finding either (brackets are visited, not every character).
BRACKETS = {opening: re.compile(f"[{re.escape(opening + closing)}]") for opening, closing in ("[]", "{}", "()")}
# What a program prints for an absent or odd value, in the languages we index.
PRINTED_WORDS = frozenset(
    "None True False null undefined NaN nil Infinity -Infinity true false NULL nullptr Some Ok Err".split())
# A word of prose: letters, with inner hyphens and apostrophes (``non-printable``, ``doesn't``, ``café``). Matched
# against one token at a time: a pattern finding runs of them would retry every start of a long word.
WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")
# Punctuation a word of prose may open with (``(see``, ``.env``): it ends the run before the word.
WORD_MARKS = "\"'`([{<."
# ``ValueError: ``, ``app.errors.InvalidURL: ``, ``error[E0308]: ``, ``Uncaught TypeError: ``: who speaks, not
# the message. One character class repeated, so a long line costs one pass.
SPEAKER = re.compile(r"(?:Uncaught |Unhandled |Exception in thread \"[^\"\n]{0,100}\" )?"
                     r"[A-Za-z_$][\w$.]{0,120}(?:\[\w{1,20}\])?: ")
WHITESPACE = re.compile(r"\s+")
# What a literal run loses at its ends: the quotes and brackets around a value, the colon before it.
RUN_EDGES = " \t:;,.!?'\"`()[]{}<>=-"
TOKEN = re.compile(r"\S+")
LEADING_MARKS = "([{"
TRAILING_MARKS = ".,;:!?)]}"
NUMBER_START = re.compile(r"[-+.]?\d")
# A command-line option a program echoes back (``--frobnicate``, ``-v``).
OPTION = re.compile(r"--?[A-Za-z]")
# A name a program printed: an identifier that is snake_case, camelCase or has digits (``user_id``, ``maxSize``,
# ``utf8``), or one marked as a name (``$ref``, ``#12``, ``@user``). Two patterns without nested repeats: linear.
IDENTIFIER = re.compile(r"[A-Za-z_$#@][\w$]*")
NAME_MARK = re.compile(r"_\w|[a-z][A-Z]|[A-Za-z]\d|^[$#@]\w")
DOTTED = re.compile(r"\w\.\w")
# Characters no word of prose holds, once a token's edge punctuation is off: a pattern (``^[a-z]+$``), an index
# (``data['name']``), an operator or a type (``a|b``, ``Map<K>``) the program printed.
VALUE_MARK = re.compile(r"[\^$*+|~\[\]{}<>]")
# A name as code spells it, called or dotted (``os.path.join``, ``parse()``): printed, or named by a description.
CODE_NAME = re.compile(r"[A-Za-z_$][\w$.]*(?:\(\))?")


def normalized(message: str) -> str:
    """``message`` with its runs of whitespace as single spaces, stripped: as templates are compared."""
    return WHITESPACE.sub(" ", message).strip()


def speaker_end(message: str) -> int:
    """Where the message proper begins after a leading exception or tool name (``KeyError: ``), else 0."""
    found = SPEAKER.match(message)
    return found.end() if found else 0


def value_spans(message: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each value printed into ``message``, in order, without overlaps."""
    spans: list[tuple[int, int]] = []
    closing = closing_quotes(message)
    position, size = 0, len(message)
    while position < size:
        if message[position].isspace():
            position += 1
            continue
        end = quoted_end(message, position, closing) or bracketed_end(message, position)
        if end:
            spans.append((position, end))
            position = end
            continue
        token = TOKEN.match(message, position)
        end = token.end() if token else size
        start, stop = position, end
        while start < stop and message[start] in LEADING_MARKS:
            start += 1
        stop = trimmed_end(message, start, stop)
        if start < stop and is_value_token(message[start:stop]):
            spans.append((start, stop))
        position = end
    return sorted(spans + trailing_value(message, spans))


def trimmed_end(message: str, start: int, stop: int) -> int:
    """Where the token ``start:stop`` ends without its trailing punctuation (``below).``).

    A bracket closing one the token opened stays: ``data['name']`` and ``fetchAll()`` are whole values.
    """
    token = message[start:stop]
    unopened = {closer: token.count(closer) - token.count(opener) for opener, closer in ("()", "[]", "{}")}
    while stop > start and message[stop - 1] in TRAILING_MARKS:
        closer = message[stop - 1]
        if closer in unopened:
            if unopened[closer] <= 0:
                break
            unopened[closer] -= 1
        stop -= 1
    return stop


def closing_quotes(message: str) -> dict[str, list[int]]:
    """Where each kind of quote can close a quoted value, in order: not escaped, and before a non-word."""
    closing: dict[str, list[int]] = {quote: [] for quote in QUOTES}
    for found in QUOTE.finditer(message):
        position = escapes = found.start()
        while escapes > 0 and message[escapes - 1] == "\\":
            escapes -= 1
        after = message[position + 1:position + 2]
        if (position - escapes) % 2 == 0 and not (after.isalnum() or after == "_"):
            closing[message[position]].append(position)
    return closing


def quoted_end(message: str, start: int, closing: dict[str, list[int]]) -> int:
    r"""The end of a quoted value opening at ``start`` (``'\x07'``, ``"a b"``, reST's ````name````), or 0.

    An apostrophe inside a word (``doesn't``) opens nothing, and a quote closes only before a non-word (the
    ``closing`` places of :func:`closing_quotes`), at most ``MAX_VALUE_CHARS`` on.
    """
    quote = message[start]
    if quote not in QUOTES or (start and (message[start - 1].isalnum() or message[start - 1] == "_")):
        return 0
    limit = start + MAX_VALUE_CHARS
    if message.startswith("``", start):
        close = message.find("``", start + 2, limit)
        return close + 2 if close >= 0 else 0
    places = closing[quote]
    following = bisect_right(places, start)
    return places[following] + 1 if following < len(places) and places[following] < limit else 0


def bracketed_end(message: str, start: int) -> int:
    """The end of a printed collection or object opening at ``start``, or 0.

    ``<Pool object at 0x7f3a>``, ``[object Object]``, ``[1, 2]``, ``{'a': 1}``, ``('x', 3)``; a bracketed word
    of the message itself (``[Drafts]``, ``(see below)``) is no value.
    """
    opening = message[start]
    if opening == "<":  # a repr does not nest: its first ``>`` closes it
        close = message.find(">", start + 1, start + MAX_VALUE_CHARS)
        inside = message[start + 1:close] if close > start else ""
        return close + 1 if inside.strip() and "<" not in inside else 0
    brackets = BRACKETS.get(opening)
    if brackets is None:
        return 0
    depth, position = 0, -1
    for found in brackets.finditer(message, start, start + MAX_VALUE_CHARS):
        depth += 1 if found.group() == opening else -1
        if depth == 0:
            position = found.start()
            break
    if position < 0:
        return 0
    inside = message[start + 1:position]
    if opening == "(":
        printed = not inside or inside[0] in QUOTES or inside[0].isdigit()
    else:
        printed = not inside or inside.startswith("object ") or any(mark in inside for mark in "0123456789'\",:")
    return position + 1 if printed else 0


def is_value_token(token: str) -> bool:
    """Whether one token (its surrounding brackets and punctuation off) is a value rather than a word."""
    return bool(
        NUMBER_START.match(token)
        or OPTION.match(token)
        or token in PRINTED_WORDS
        or "/" in token or "\\" in token or "=" in token
        or DOTTED.search(token)
        or VALUE_MARK.search(token)
        or (IDENTIFIER.fullmatch(token) and NAME_MARK.search(token))
        or (token.endswith("()") and IDENTIFIER.fullmatch(token[:-2].replace(".", "_"))))


def trailing_value(message: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A lone token after the message's last ``": "`` (``Unsupported operation: frob``), if no span holds it."""
    colon = message.rfind(": ")
    if colon < 0:
        return []
    start = colon + 2
    rest = message[start:].rstrip()
    stop = start + len(rest.rstrip(TRAILING_MARKS))
    if stop <= start or " " in message[start:stop] or any(a <= start < b for a, b in spans):
        return []
    return [(start, stop)]


def literal_runs(message: str, spans: list[tuple[int, int]] | None = None) -> list[str]:
    """The text between the printed values of ``message`` (each of ``spans``, if given), its end spaces and marks off.

    A speaker's name stays in (``config: unknown key``): a Go error spells its package in the template.
    """
    runs, position = [], 0
    for start, end in value_spans(message) if spans is None else spans:
        runs.append(message[position:start])
        position = end
    runs.append(message[position:])
    stripped = (run.strip(RUN_EDGES) for run in runs)
    return [run for run in stripped if run]


def without_values(message: str, spans: list[tuple[int, int]] | None = None, mark: str = "x") -> str:
    """``message`` with each printed value (each of ``spans``, if given) replaced by ``mark``."""
    pieces, position = [], 0
    for start, end in value_spans(message) if spans is None else spans:
        pieces += [message[position:start], mark]
        position = end
    return "".join(pieces) + message[position:]


def delimited_values(message: str) -> list[tuple[int, int]]:
    """The value spans a program's output marks as such: quoted, bracketed, or a called name (``parse()``).

    Unlike a bare token they never hold code's own syntax (``parser.add(x)`` is one token).
    """
    return [(start, end) for start, end in value_spans(message)
            if message[start] in QUOTES or message[start] in "<[{(" or message.endswith("()", start, end)]


def delimited_runs(message: str) -> list[str]:
    """The text between the delimited values of ``message`` only (see :func:`delimited_values`).

    A name may be a word of the template rather than a value: ``Not a ZodError: [object Object]``.
    """
    return literal_runs(message, delimited_values(message))


def word_runs(message: str) -> list[str]:
    """Runs of two or more plain words, one space apart, between the printed values of ``message``, in order.

    A word with punctuation on it still counts (``URL,``, ``(see``, ``done]``) but the run ends at the
    punctuation; a token that is no word (``x=1``, ``abc1``) ends the run.
    """
    runs: list[str] = []
    for literal in literal_runs(message):
        run: list[str] = []
        for token in literal.split(" "):
            core = token.lstrip(WORD_MARKS)
            word = WORD.match(core)
            rest = core[word.end():] if word else ""
            if core != token or word is None or rest[:1].isalnum() or rest[:1] == "_":
                runs.append(" ".join(run))
                run = []
            if word is None or rest[:1].isalnum() or rest[:1] == "_":
                continue
            run.append(word.group())
            if rest:
                runs.append(" ".join(run))
                run = []
        runs.append(" ".join(run))
    return [run for run in runs if " " in run]


def shows_values(message: str) -> bool:
    """Whether ``message`` shows who printed it (``KeyError: ``) or a value: output, not a description.

    A bare name (``max_retries``, ``os.path.join``, ``parse()``), in backticks too (Markdown's and reST's way to
    name code), is not enough: descriptions name code as well. Unless it stands alone after the message's last
    ``": "`` (``Unknown schema type: custom``): that is how a program prints a value, not how prose names one.
    """
    values = (message[start:end] for start, end in value_spans(message))
    return bool(speaker_end(message) or trailing_value(message, [])) or any(
        value in PRINTED_WORDS or not CODE_NAME.fullmatch(value.strip("`")) for value in values)


def alnum_count(text: str) -> int:
    """How many letters and digits ``text`` holds: what a comparison of messages counts (punctuation is noise)."""
    return sum(char.isalnum() for char in text)
