"""The pure parts of literal/regex search: patterns, line matching, definition lines, exact phrases, spans."""

from __future__ import annotations

import re

import pytest
from grepgraph.retrievers.grep.definitions import is_definition_line
from grepgraph.retrievers.grep.lines import LineMatch, rank_lines
from grepgraph.retrievers.grep.literals import required_literals
from grepgraph.retrievers.grep.patterns import PatternError, compile_pattern, tolerant_pattern
from grepgraph.retrievers.grep.scan import lines_in
from grepgraph.retrievers.grep.spans import ChunkSpan, innermost, nearest
from grepgraph.retrievers.rank.exact import exact_phrases, is_code_block

from tests.conftest import hang_deadline


# --------------------------------------------------------------------------- patterns
def test_literals_are_exact_and_need_their_whole_text():
    pattern = compile_pattern("a.b(", "literal")
    assert pattern.literals == ("a.b(",)
    assert [found[0] for found in lines_in(b"a.b(\naxb(\n  a.b(x)\n", pattern)] == [1, 3]


@pytest.mark.parametrize(("text", "mode", "message"), [
    ("", "literal", "the literal is empty"),
    ("   ", "literal", "only whitespace"),
    ("a\x00b", "literal", "NUL byte"),
    ("a\x00b", "regex", "NUL byte"),
    ("x" * 10_001, "literal", "the limit is 10,000"),
    ("(unclosed", "regex", "missing )"),
    ("[z-a]", "regex", "invalid character class range"),
    ("(?<=a)b", "regex", "lookarounds and backreferences are not supported"),
    (r"(\w+)\1", "regex", "lookarounds and backreferences are not supported"),
    ("x", "glob", "mode must be one of literal, regex"),
])
def test_patterns_that_cannot_run_say_why_in_one_line(text, mode, message):
    with pytest.raises(PatternError) as caught:
        compile_pattern(text, mode)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_catastrophic_backtracking_patterns_run_on_a_linear_time_engine():
    data = b"a" * 50_000 + b"!"
    assert re.compile("(a+)+$")  # Python's re would take forever on this input; RE2 does not
    for text in ("(a+)+$", "(a|aa)+$", "(a*)*b", "(.*a){20}$"):
        pattern = compile_pattern(text, "regex")
        assert type(pattern.regex).__module__ == "re2", text
        with hang_deadline(60):  # a backtracking engine would hang here (the timings: benchmarks/grep_speed.py)
            assert list(lines_in(data, pattern)) == [], text


@pytest.mark.parametrize(("pattern", "literals"), [
    (r"def \w+_args\(", ["def ", "_args("]),
    (r"raise (ValueError|TypeError)\(", ["raise "]),
    (r"(?:timeout){1,3}_ms", ["timeout", "_ms"]),
    (r"(?i)connection refused", []),  # the trigram index is case-sensitive
    (r"[A-Z]{5,}_[A-Z]+", []),
    (r"ab|cd", []),  # an alternative of literals requires neither
    (r"x(?:abc)?y", []),  # an optional group requires nothing
    (r"\p{Greek}+ alpha", []),  # RE2-only syntax Python's parser can't read: no prefilter, still correct
])
def test_required_literals_are_what_every_match_contains(pattern, literals):
    assert required_literals(pattern) == literals


def test_one_result_per_line_and_line_numbers_count_newlines():
    data = b"x = 1\r\nfoo foo\n\nfoo\nbar foo"
    found = list(lines_in(data, compile_pattern("foo", "literal")))
    assert [line for line, *_ in found] == [2, 4, 5]
    line, line_start, line_end, start, end = found[-1]
    assert data[line_start:line_end] == b"bar foo" and data[start:end] == b"foo"


def test_regexes_match_within_lines_like_grep():
    pattern = compile_pattern(r"^\s*def f", "regex")
    assert [line for line, *_ in lines_in(b"x\n\n  def f():\n", pattern)] == [3]  # \s does not reach back a line
    assert [line for line, *_ in lines_in(b"a\nb\n", compile_pattern(r"a\nb", "regex"))] == []
    assert [line for line, *_ in lines_in(b"a\nb\n", compile_pattern("a\nb", "literal"))] == [1]  # literal blocks


# --------------------------------------------------------------------------- definitions
@pytest.mark.parametrize(("line", "needle"), [
    ("def parse_args(argv):", "parse_args"),
    ("async def parse_args(argv):", "def parse_args("),
    ("class Ledger(Base):", "Ledger"),
    ("func (s *Server) Start(ctx context.Context) error {", "Start"),
    ("func Start() {", "Start"),
    ("pub(crate) fn start(&self) -> u32 {", "start"),
    ("export function startServer(port: number) {", "startServer"),
    ("export const startServer = (port) => {", "startServer"),
    ("    public static int startServer(int port) {", "startServer"),
    ("interface Server {", "Server"),
    ("macro_rules! bail {", "bail"),
    ("DEFAULT_TIMEOUT = 30", "DEFAULT_TIMEOUT"),
    ("var ErrClosed = errors.New(\"closed\")", "ErrClosed"),
    ("\tValidArgsFunction func(cmd *Command, args []string) ([]string, Directive)", "ValidArgsFunction"),
    ("\tName string `json:\"name\"` // shown in help", "Name"),
    ("\tClose() error", "Close"),
    ("    retries: int = 3", "retries"),
    ("  onSuccess?: (data: TData) => void;", "onSuccess"),
])
def test_definition_lines_of_the_matched_name(line, needle):
    assert is_definition_line(line, line.index(needle), len(needle))


@pytest.mark.parametrize(("line", "needle"), [
    ("    result = parse_args(argv)", "parse_args"),
    ("def test_parse_args():", "parse_args"),  # defines another name
    ("def parse_args(argv):", "def"),
    ("    self.entries.append(entry)", "append"),
    ("if DEFAULT_TIMEOUT == 30:", "DEFAULT_TIMEOUT"),
    ("\treturn err", "return"),
    ("\tdefer conn.Close()", "defer"),
    ("    else:", "else"),
    ("\tcmd.Run(args)", "cmd"),
])
def test_uses_are_not_definitions(line, needle):
    assert not is_definition_line(line, line.index(needle), len(needle))


def test_a_megabyte_line_is_classified_by_its_start():
    # Python's backtracking regex took 3 s on 28 KB of these words (quadratic); a megabyte would take hours.
    modifiers = "public static " * 75_000
    assert not is_definition_line(modifiers, 7, 6)
    definition = "def parse_args(" + "argument, " * 100_000 + "):"
    assert is_definition_line(definition, 4, 10)
    assert not is_definition_line(definition, 500_000, 8)  # a name that far in is no definition's
    # the window's cut is no line end: a Go field's shape must hold to the real end of the line
    assert not is_definition_line("Name " + "x" * 1_000_000 + " and more", 0, 4)


def test_ranking_puts_focus_first_then_definitions_then_path_order():
    def match(path: str, line: int, definition: bool) -> LineMatch:
        data = b"x\n" * 20
        return LineMatch(path, 2 * (line - 1), "x", 0, 1, definition, data=data)

    factors = {"src/a.py": 1.0, "src/b.py": 1.0, "tests/test_a.py": 0.5}
    ranked = rank_lines([match("tests/test_a.py", 1, True), match("src/b.py", 9, False),
                         match("src/a.py", 5, False), match("src/b.py", 2, True)], factors.__getitem__)
    assert [(m.path, m.line) for m in ranked] == [("src/b.py", 2), ("src/a.py", 5), ("src/b.py", 9),
                                                  ("tests/test_a.py", 1)]


# --------------------------------------------------------------------------- enclosing definitions
SPANS = [ChunkSpan(1, 1, 40, "mod", "module"), ChunkSpan(2, 5, 30, "Ledger", "class"),
         ChunkSpan(3, 10, 20, "Ledger.record", "method"), ChunkSpan(4, 50, 60, "helper", "function")]


def test_innermost_is_the_smallest_chunk_around_the_line():
    assert innermost(SPANS, 12).symbol == "Ledger.record"
    assert innermost(SPANS, 25).symbol == "Ledger"
    assert innermost(SPANS, 3).symbol == "mod"
    assert innermost(SPANS, 45) is None


def test_a_line_no_chunk_covers_goes_to_the_module_or_the_nearest_definition():
    assert nearest(SPANS, 45).symbol == "mod"
    without_module = SPANS[1:]
    assert nearest(without_module, 45).symbol == "Ledger"  # the definition that ends closest before it
    assert nearest(without_module, 2).symbol == "Ledger"  # nothing before: the first one


# --------------------------------------------------------------------------- exact phrases
def test_exact_phrases_take_the_query_quoted_strings_and_code_lines():
    assert exact_phrases("short") == []
    assert exact_phrases("how does the parser handle a trailing comma") == []  # a question, not a paste
    assert exact_phrases("does the parser keep trailing commas?") == []
    for pasted in ("are desired between two contiguous values, simply use", "where T: Iterator + Clone,"):
        assert exact_phrases(pasted) == [pasted]
    assert exact_phrases("where is config_path(name) resolved") == ["where is config_path(name) resolved"]
    assert exact_phrases('    raise ValueError("frobnicator overheated")  ') == [
        'raise ValueError("frobnicator overheated")', "frobnicator overheated"]
    question = "why does 'connection reset by peer' appear when the pool is full?"
    assert exact_phrases(question) == ["connection reset by peer"]  # the question itself is not a paste
    # Apostrophes are not quotes, backticks name code, and one quoted word is a name, not a message.
    assert exact_phrases("don't ask what's wrong with `find_object` or 'parse'") == [
        "don't ask what's wrong with `find_object` or 'parse'"]
    report = ("The sync fails after an hour and I see this in the log output\nTraceback (most recent call last):\n"
              '  File "app/sync.py", line 12, in run\n    client.push(batch, retries=3)\nTimeoutError: boom')
    phrases = exact_phrases(report)
    assert "client.push(batch, retries=3)" in phrases
    assert "The sync fails after an hour and I see this in the log output" not in phrases  # prose line


def test_a_bare_name_is_left_to_symbol_lookup():
    # As a pasted phrase it would rank the lines that call it above its definition.
    for name in ("GraphStore.store_parse_result", "store_parse_result_for_all()", "crate::parse::read_header"):
        assert exact_phrases(name) == []
    assert exact_phrases("GraphStore.store_parse_result(store, result)") == [
        "GraphStore.store_parse_result(store, result)"]


def test_a_block_of_code_is_told_from_a_report_about_it():
    block = "def load(path):\n    with open(path) as handle:\n        return json.load(handle)\n"
    report = ("Loading fails since the upgrade and I do not know why at all\nIt worked fine last week on my laptop\n"
              "    return json.load(handle)\n")
    assert is_code_block(block) and not is_code_block(report) and not is_code_block("x = compute(1, 2, 3, 4)")


def test_tolerant_patterns_ignore_indentation_and_spacing_around_punctuation():
    pattern = tolerant_pattern("foo(a, b) + bar")
    assert pattern.literals == ("foo", "bar")
    for text in (b"foo(a, b) + bar", b"    foo( a,b )+bar", b"x = foo(a,\n      b) + bar"):
        assert list(lines_in(text, pattern)), text
    assert not list(lines_in(b"foo(ab) + bar", pattern))  # words keep their separation
