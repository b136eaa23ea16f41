"""A pasted message read as words with value holes, and laid over the templates the code holds (issue #25)."""

from pathlib import Path

import pytest
from grepgraph.retrievers.rank.exact import exact_chunk_evidence, is_printed_message
from grepgraph.retrievers.rank.message_values import (
    delimited_runs,
    literal_runs,
    shows_values,
    speaker_end,
    value_spans,
    word_runs,
)
from grepgraph.retrievers.rank.printers import statement_lines
from grepgraph.retrievers.rank.templates import string_literals, template_around, template_fit
from grepgraph.retrievers.store.textstore import TextStore

from tests.conftest import lexical_searcher


def values(message: str) -> list[str]:
    return [message[start:end] for start, end in value_spans(message)]


# --------------------------------------------------------------------------- what a program printed
@pytest.mark.parametrize(("message", "printed"), [
    (r"Invalid non-printable ASCII character in URL, '\x07' at position 12.", [r"'\x07'", "12"]),
    ("URL component 'path' too long", ["'path'"]),
    ('no plugin named "zoom pan" among 3 plugins', ['"zoom pan"', "3"]),
    ("unknown field `colour`, expected `name`", ["`colour`", "`name`"]),
    (r"bad escape \n and \u00e9 in 'a\'b'", [r"\n", r"\u00e9", r"'a\'b'"]),
    ("read 12KB of 1.5MB at offset 0x7f3a, -3 left, 99.5%", ["12KB", "1.5MB", "0x7f3a", "-3", "99.5%"]),
    ("cannot open /var/lib/app.db or C:\\data\\app.db via https://example.org/x?y=1.", [
        "/var/lib/app.db", "C:\\data\\app.db", "https://example.org/x?y=1"]),
    ("Cannot apply patch, path doesn't resolve: [object Object]", ["[object Object]"]),
    ("got undefined, null, NaN and None", ["undefined", "null", "NaN", "None"]),
    ("Cannot send <Request object at 0x7f3a9c2b1d60> twice", ["<Request object at 0x7f3a9c2b1d60>"]),
    ("expected {'a': 1} or [1, 2] or ('x', 3), not []", ["{'a': 1}", "[1, 2]", "('x', 3)", "[]"]),
    ("unknown key max_retries in app.settings for fetchAll()", ["max_retries", "app.settings", "fetchAll()"]),
    ("Error: No such option: --frobnicate Did you mean -f?", ["--frobnicate", "-f"]),
    ("Unsupported patch operation: frob", ["frob"]),  # a lone token after the last colon
    ("path doesn't resolve: items,0,name", ["items,0,name"]),  # JavaScript's array as a string
    # a pattern, an index and an operator: characters no word of prose holds
    ("does not match ^[a-z]+$ @ data['name'] for a|b", ["^[a-z]+$", "data['name']", "a|b"]),
])
def test_the_values_a_program_printed_are_told_from_its_words(message, printed):
    assert values(message) == printed


def test_words_of_the_message_are_no_values():
    # An apostrophe inside a word opens no quote; a bracketed word or aside is the template's own text.
    assert values("[Drafts] the path doesn't resolve (see below)") == []
    assert values("users' names don't matter") == []


def test_unclosed_quotes_brackets_and_long_words_are_read_in_one_pass():
    # Look-aheads are bounded and runs are read token by token: no input makes them retry every position.
    assert values("'a" * 3_000) == []
    assert values("(" * 5_000 + " x") == []
    assert values("[" * 3_000 + "]") == []
    assert word_runs("x" * 20_000) == []
    assert string_literals('f("' + '\\"' * 10_000 + ")") == []  # one quote unclosed to the end of its line


def test_a_name_may_be_a_word_of_the_template():
    # ``WidgetError`` reads as a printed name; the runs between the delimited values keep it as the template's word
    assert delimited_runs("Not a WidgetError: <Gadget object at 0x7f3a>") == ["Not a WidgetError"]


def test_literal_runs_are_the_text_between_the_values():
    message = r"config: unknown key 'colour' at line 12 (section [server])"
    assert literal_runs(message) == ["config: unknown key", "at line", "section [server"]
    assert word_runs(r"Invalid non-printable ASCII character in URL, '\x07' at position 12.") == [
        "Invalid non-printable ASCII character in URL", "at position"]


def test_who_printed_a_message_is_not_part_of_it():
    assert speaker_end("ValueError: bad mode") == len("ValueError: ")
    assert speaker_end("app.errors.InvalidURL: bad") == len("app.errors.InvalidURL: ")
    assert speaker_end("error[E0308]: mismatched types") == len("error[E0308]: ")
    assert speaker_end('Exception in thread "main" java.lang.IllegalStateException: x') > 0
    assert speaker_end("URL component 'path' too long") == 0


@pytest.mark.parametrize("text", [
    "URL component 'path' too long",
    "TypeError: the shelf is full",
    "Unsupported patch operation: undefined",
    "read 12KB from the socket",
    "Unknown widget kind: sprocket",  # a name alone after the last colon is printed, not named
])
def test_output_shows_a_value_or_who_printed_it(text):
    assert shows_values(text)


@pytest.mark.parametrize("text", [
    "Return the value of max_retries for the pool",  # a name is what a description mentions
    "Validator which succeeds if ``value`` matches ``regex``.",
    "Adds a positional argument named `dest` to the parser.",
    "Convert os.path.join results with normalize()",
])
def test_a_description_naming_code_shows_no_printed_value(text):
    assert not shows_values(text)


# --------------------------------------------------------------------------- the code's templates
def template(code: str, word: str) -> tuple:
    return template_around(code, code.index(word))


@pytest.mark.parametrize(("code", "word", "parts"), [
    ('raise InvalidURL(f"Invalid character in URL, {char!r} at position {idx}.")', "character",
     ("Invalid character in URL,", None, "at position", None, ".")),
    ("raise ValueError('unknown mode %r (expected %(modes)s), %5.2f%% done' % mode)", "unknown",
     ("unknown mode", None, "(expected", None, "),", None, "% done")),
    ('return "{}, stocked from {!r} \\n{} boxes.".format(a, b, c)', "stocked",
     (None, ", stocked from", None, "boxes.")),
    ('log.info("braces {{kept}} and {} filled", x)', "braces", ("braces {kept} and", None, "filled")),
    ("throw new Error(`Cannot apply patch, path doesn't resolve: ${path.join('/')}`)", "Cannot",
     ("Cannot apply patch, path doesn't resolve:", None)),
    ('throw new Error("[Drafts] Unsupported operation: " + op)', "Unsupported",
     ("[Drafts] Unsupported operation:", None)),
    ("return 'path doesn\\'t resolve: ' + path + ' in ' + base", "resolve",
     ("path doesn't resolve:", None, "in", None)),
    ('err := fmt.Errorf("no plugin %q among %d plugins: %+v", name, n, err)', "plugin",
     ("no plugin", None, "among", None, "plugins:", None)),
    ('bail!("unknown field `{}` in {:?} at {line}", name, kind);', "unknown",
     ("unknown field `", None, "` in", None, "at", None)),
    ('raise Error, "no route for #{path} on #{verb}"', "route", ("no route for", None, "on", None)),
    ('error("value $name is not in ${range.first}..${range.last}")', "value",
     ("value", None, "is not in", None, "..", None)),
    ('fatalError("index \\(i) out of range \\x07")', "index", ("index", None, "out of range", None)),
    ('pattern = r"\\d+ items in {count}"', "items", ("\\d+ items in", None)),
])
def test_a_literal_reads_as_its_template(code, word, parts):
    assert template(code, word) == parts


def test_concatenations_and_adjacent_literals_over_lines_are_one_template():
    python = ('raise TypeError(\n    "Expected a timeout in seconds, "\n    f"got {timeout}"\n)')
    assert template(python, "Expected") == ("Expected a timeout in seconds, got", None)
    java = 'throw new IllegalArgumentException("Capacity must be at most "\n        + MAX + ", got " + n);'
    assert template(java, "Capacity") == ("Capacity must be at most", None, ", got", None)
    # two arguments are two texts, not one
    assert template('fail("first text", "second text")', "first") == ("first text",)


def test_comments_lifetimes_and_apostrophes_open_no_literal():
    code = "fn f<'a>(x: &'a str) -> &'a str { x } // don't \"quote\" me\n# it's \"here\" too"
    assert string_literals(code) == []


def test_a_statement_is_read_over_the_lines_its_text_continues_on():
    data = (b'def f():\n    raise E("Capacity must be at most "\n            + str(limit)\n            + " items")\n'
            b"    x = 1\n")
    line_start = data.index(b"    raise")
    start, end = statement_lines(data, line_start, data.index(b"\n", line_start))
    assert data[start:end].decode().splitlines() == [
        '    raise E("Capacity must be at most "', "            + str(limit)", '            + " items")']


# --------------------------------------------------------------------------- laying a message over a template
def test_a_message_with_other_values_fits_its_template_fully():
    parts = ("Invalid non-printable ASCII character in URL,", None, "at position", None, ".")
    assert template_fit(parts, r"Invalid non-printable ASCII character in URL, '\x07' at position 12.") == 1.0
    assert template_fit(("URL component '", None, "' too long"), "URL component 'path' too long") == 1.0
    assert template_fit(("Cannot apply patch, path doesn't resolve:", None),
                        "Cannot apply patch, path doesn't resolve: [object Object]") == 1.0


def test_who_printed_it_and_a_wrapper_prefix_cost_little_or_nothing():
    parts = ("Unsupported patch operation:", None)
    assert template_fit(parts, "TypeError: Unsupported patch operation: undefined") == 1.0
    assert 0.8 < template_fit(parts, "[Drafts] Unsupported patch operation: undefined") < 1.0


def test_a_template_explaining_part_of_the_message_fits_part_of_it():
    # a hole holding several plain words prints no value: the message may only share the template's opening
    assert template_fit(("Error while loading", None), "Error while loading the configuration of 'x'") == 0.0
    # runs of the template missing from the message count against it
    partial = template_fit(("unknown key", None, "at line", None, "in section", None), "unknown key 'a' at line 3")
    assert 0 < partial < 1.0


def test_a_wrapper_suffix_after_the_last_value_costs_only_its_share():
    # An exception's own str() may append to the message (`` for mapping value @ data['name']``): the template's
    # last hole opens with the value it printed, and the suffix is left unexplained.
    parts = ("value does not fit the pattern", None)
    suffixed = template_fit(parts, "value does not fit the pattern ^[a-z]+$ for mapping value @ data['name']")
    assert 0.6 <= suffixed < template_fit(parts, "value does not fit the pattern ^[a-z]+$") == 1.0
    # words first are no value printed in the hole
    assert template_fit(parts, "value does not fit the pattern of the configuration 'x'") == 0.0


def test_nothing_fits_without_a_printed_value_or_enough_words():
    # A sentence that merely shares a literal's words (a description quoting a log line) was not printed by it.
    assert template_fit(("all worker threads are idle",), "Returns true if all worker threads are idle.") == 0.0
    assert template_fit((None, ":", None), "key: 'value'") == 0.0  # too little of its own text to tell
    assert template_fit(("no such table",), "ValueError: no such table") == 1.0  # who printed it is enough


# --------------------------------------------------------------------------- which pastes are looked up
@pytest.mark.parametrize("text", [
    r"Invalid non-printable ASCII character in URL, '\x07' at position 12.",
    "expected {'a': 1}, got None",
    "TypeError: f() takes 2 positional arguments but 3 were given",
])
def test_a_printed_line_is_a_message(text):
    assert is_printed_message(text)


@pytest.mark.parametrize("text", [
    "parser.add_argument('--dry-run', action='store_true')",  # code, whatever its values
    "x = compute(1, 2)",
    "Return the first item of the list",  # nothing printed in it
    "two lines 'a'\nand 'b'",
])
def test_code_and_descriptions_are_no_messages(text):
    assert not is_printed_message(text)


OPTIONS = '''
def parse_option(name, command):
    if name not in KNOWN:
        raise KeyError(f"Unknown option {name!r} for command {command}")


def describe_dry_run():
    return "dry run"
'''


def test_a_quoted_value_of_a_message_found_by_its_template_is_no_phrase_of_its_own(tmp_path: Path):
    with lexical_searcher(tmp_path, {"options.py": OPTIONS}) as searcher, searcher.reading() as snapshot:
        store = TextStore(snapshot.connection, snapshot.text_cache)
        evidence = exact_chunk_evidence(store, "Unknown option 'dry run' for command sync", None)
        symbols = dict(snapshot.connection.execute("SELECT id, symbol FROM chunks"))
    assert {symbols[chunk_id] for chunk_id in evidence.found} == {"parse_option"}
    assert not evidence.verbatim  # found through its template, not as pasted


PATTERNS = '''
class Pattern:
    def check(self, value):
        if not self.regex.match(value):
            raise ValueError("value does not fit the pattern {}".format(self.regex.pattern))


def describe_pattern(pattern):
    return "the pattern values are checked against"
'''


def test_a_message_printing_a_pattern_ranks_its_raise_first(tmp_path: Path):
    # Without who printed it, the pattern is the value that makes the line output rather than a description.
    with lexical_searcher(tmp_path, {"patterns.py": PATTERNS}) as searcher:
        hits, _ = searcher.search("value does not fit the pattern ^[a-z]+$", limit=3)
    assert hits[0].symbol == "Pattern.check" and hits[0].components["exact"] > 0


def test_a_pasted_message_with_a_wrapper_suffix_ranks_its_raise_first(tmp_path: Path):
    with lexical_searcher(tmp_path, {"patterns.py": PATTERNS}) as searcher:
        hits, _ = searcher.search("value does not fit the pattern ^[a-z]+$ for mapping value @ data['name']", limit=3)
    assert hits[0].symbol == "Pattern.check" and hits[0].components["exact"] > 0


WIDGETS = '''
class WidgetError(Exception):
    """A widget went wrong."""


def ensure_widget_error(value):
    if not isinstance(value, WidgetError):
        raise TypeError(f"Not a WidgetError: {value!r}")
'''


def test_a_message_spelling_a_name_of_the_code_ranks_its_raise_first(tmp_path: Path):
    with lexical_searcher(tmp_path, {"widgets.py": WIDGETS}) as searcher:
        hits, _ = searcher.search("Not a WidgetError: <Gadget object at 0x7f3a>", limit=3)
    assert hits[0].symbol == "ensure_widget_error" and hits[0].components["exact"] > 0


def test_a_message_ending_in_a_printed_name_ranks_its_raise_first(tmp_path: Path):
    kinds = 'def build(kind):\n    raise ValueError(f"Unknown widget kind: {kind}")\n\n\ndef sprocket():\n    pass\n'
    with lexical_searcher(tmp_path, {"kinds.py": kinds}) as searcher:
        hits, _ = searcher.search("Unknown widget kind: sprocket", limit=3)
    assert hits[0].symbol == "build" and hits[0].components["exact"] > 0


def test_a_pasted_message_ranks_its_raise_first_in_a_lexical_index(tmp_path: Path):
    with lexical_searcher(tmp_path, {"options.py": OPTIONS}) as searcher:
        hits, _ = searcher.search("Unknown option '--fast' for command sync", limit=3)
        words, _ = searcher.search("Unknown option for command", limit=3)
    assert hits[0].symbol == "parse_option" and hits[0].components["exact"] > 0
    assert not any(hit.components.get("exact") for hit in words)  # no value printed: no message lookup


SPACED = '''
def tight(items):
    total = sum(x*2 for x in items if x>0)
    return total


def loose(items):
    total = sum(x * 2 for x in items if x > 0)
    return total
'''


def test_a_pasted_line_found_with_other_spacing_is_found_but_not_verbatim(tmp_path: Path):
    with lexical_searcher(tmp_path, {"spaced.py": SPACED}) as searcher, searcher.reading() as snapshot:
        store = TextStore(snapshot.connection, snapshot.text_cache)
        evidence = exact_chunk_evidence(store, "total = sum(x * 2 for x in items if x > 0)", None)
        symbols = dict(snapshot.connection.execute("SELECT id, symbol FROM chunks"))
    assert {symbols[chunk_id] for chunk_id in evidence.found} == {"tight", "loose"}
    assert {symbols[chunk_id] for chunk_id in evidence.verbatim} == {"loose"}
    assert set(evidence.found.values()) == {1.0}  # the blend weighs verbatim spacing through its own column
