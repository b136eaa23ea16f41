"""The coverage invariant: every non-blank line of every indexed file lies in some chunk, in every language."""

from __future__ import annotations

from textwrap import dedent

import pytest
from grepgraph.retrievers.core.model import Chunk
from grepgraph.retrievers.lexical.tokenize import tokenize_code
from grepgraph.retrievers.parse.cards import card_text, lexical_tokens
from grepgraph.retrievers.parse.chunking import parse_file
from grepgraph.retrievers.parse.coverage import non_blank_line_count, uncovered_lines
from grepgraph.retrievers.parse.windows import LONG_LINE_CHARS, MAX_CHUNK_CHARS, MAX_CHUNK_LINES, source_lines, windows


def chunk(start: int, end: int, text: str) -> Chunk:
    return Chunk(path="f", language="text", kind="text", symbol="f", start_line=start, end_line=end, text=text)


# --------------------------------------------------------------------------- the definition


def test_a_line_lies_in_a_chunk_whose_range_holds_it_and_whose_text_has_it():
    source = "alpha\n\nbeta\ngamma\n"

    assert uncovered_lines(source, [chunk(1, 3, "alpha\nbeta")]) == [4]
    assert uncovered_lines(source, [chunk(1, 4, "alpha\nbeta\ngamma")]) == []
    # the same text outside the chunk's range does not count, nor does part of a short line
    assert uncovered_lines(source, [chunk(1, 2, "alpha\nbeta"), chunk(4, 4, "gam")]) == [3, 4]


def test_blank_lines_need_no_chunk():
    assert uncovered_lines("\n   \n\t\n", []) == []
    assert non_blank_line_count("a\n \nb\n") == 2


def test_a_long_line_is_covered_by_pieces_that_together_hold_it():
    line = "".join(f"v{i}=f({i});" for i in range(LONG_LINE_CHARS))
    half = len(line) // 2
    pieces = chunk(1, 1, line[: half + 50] + "\n" + line[half - 50 :])

    assert uncovered_lines(line, [pieces]) == []
    assert uncovered_lines(line, [chunk(1, 1, line[: half + 50])]) == [1]


def test_lines_are_split_where_python_counts_them_not_at_form_feeds():
    assert source_lines("a\r\nb\rc\nd\x0ce") == ["a", "b", "c", "d\x0ce"]


def test_windows_overlap_cover_everything_and_respect_both_bounds():
    segments = [(n, f"line {n}") for n in range(1, 451)]
    cut = windows(segments, max_lines=200, overlap=10)

    assert [(w[0][0], w[-1][0]) for w in cut] == [(1, 200), (191, 390), (381, 450)]
    wide = [(n, "x" * 30_000) for n in range(1, 4)]
    assert [len(w) for w in windows(wide, max_lines=200, overlap=10, max_chars=40_000)] == [1, 1, 1]


# --------------------------------------------------------------------------- Python


def long_python_function(lines: int) -> str:
    body = "\n".join(f"    total += step_{n}(total)" for n in range(lines))
    return (
        "def frobnicate(total: int, *, limit: int = 9) -> int:\n"
        '    """Run every frobnication step."""\n'
        f"{body}\n"
        '    raise ValueError("frobnicator overheated beyond tolerance")\n'
    )


def test_any_line_of_a_2000_line_function_is_in_a_window_named_after_it():
    source = "import os\n\n\n" + long_python_function(2000)
    parsed = parse_file("pkg/frob.py", source, "python")
    windows_ = [c for c in parsed.chunks if c.symbol == "frobnicate"]

    assert uncovered_lines(source, parsed.chunks) == []
    assert [w.part for w in windows_] == list(range(len(windows_)))
    assert len(windows_) == 11
    assert all(len(w.text.splitlines()) <= MAX_CHUNK_LINES for w in windows_)
    last = windows_[-1]
    assert 'raise ValueError("frobnicator overheated beyond tolerance")' in last.text
    assert last.end_line == len(source_lines(source)) - 1
    assert last.signature == "def frobnicate(total: int, *, limit: int = 9) -> int:"
    assert last.docstring == "Run every frobnication step."
    # the card and the BM25 document of every window carry the name and the signature
    assert set(tokenize_code("frobnicate limit")) <= set(lexical_tokens(last))
    assert "def frobnicate(total: int" in card_text(last)


def test_class_level_statements_past_the_first_window_are_covered():
    fields = "\n".join(f"    FIELD_{n} = {n}" for n in range(150))
    source = f"class Settings:\n    \"\"\"Knobs.\"\"\"\n{fields}\n\n    def read(self):\n        return 1\n"
    parsed = parse_file("pkg/settings.py", source, "python")
    class_windows = [c for c in parsed.chunks if c.symbol == "Settings"]

    assert uncovered_lines(source, parsed.chunks) == []
    assert len(class_windows) > 1 and all(c.kind == "class" for c in class_windows)
    assert "    FIELD_149 = 149" in class_windows[-1].text


def test_a_long_module_remainder_becomes_windows():
    source = "\n".join(f"CONSTANT_{n} = {n}" for n in range(700)) + "\n"
    parsed = parse_file("pkg/constants.py", source, "python")

    assert uncovered_lines(source, parsed.chunks) == []
    assert [c.part for c in parsed.chunks] == [0, 1, 2, 3]
    assert {c.kind for c in parsed.chunks} == {"module"}


def test_python_with_crlf_and_form_feeds_keeps_line_numbers_and_coverage():
    source = "import os\r\n\x0c\r\ndef first():\r\n    return 1\r\n\x0c\r\nclass Second:\r\n    x = 1\r\n"
    parsed = parse_file("pkg/feeds.py", source, "python")
    spans = {c.symbol: (c.start_line, c.end_line) for c in parsed.chunks}

    assert spans["first"] == (3, 4) and spans["Second"] == (6, 7)
    assert uncovered_lines(source, parsed.chunks) == []


def test_python_syntax_error_fallback_is_covered():
    source = "def broken(:\n" + "\n".join(f"    line_{n}()" for n in range(120)) + "\n"
    parsed = parse_file("pkg/broken.py", source, "python")

    assert parsed.error and uncovered_lines(source, parsed.chunks) == []


# --------------------------------------------------------------------------- tree-sitter languages


def _statements(template: str, count: int) -> str:
    return "\n".join(template.format(n=n) for n in range(count))


LONG_SOURCES = {
    "javascript": lambda: (
        'const { load } = require("./load");\n'
        + _statements("const SETTING_{n} = load({n});", 260)
        + "\n/** Runs it all. */\nfunction runAll(input) {\n"
        + _statements("  input = step{n}(input);", 420)
        + "\n  return input;\n}\n"
        + "class Registry {\n" + _statements("  static entry{n} = {n};", 250) + "\n  get(k) { return k; }\n}\n"
    ),
    "typescript": lambda: (
        'import { load } from "./load";\n'
        + _statements("export const SETTING_{n}: number = load({n});", 260)
        + "\nexport function runAll(input: number): number {\n"
        + _statements("  input = step{n}(input);", 420)
        + "\n  return input;\n}\n"
        + "export interface Registry {\n" + _statements("  entry{n}: number;", 250) + "\n}\n"
    ),
    "tsx": lambda: (
        'import React from "react";\n'
        + "export function Table({ rows }: { rows: number[] }) {\n  return (\n    <table>\n"
        + _statements("      <tr key={{{n}}}><td>{{rows[{n}]}}</td></tr>", 300)
        + "\n    </table>\n  );\n}\n"
    ),
    "go": lambda: (
        "package big\n\n"
        + "type Table struct {\n" + _statements("\tField{n} int", 260) + "\n}\n\n"
        + "// RunAll runs every step.\nfunc RunAll(input int) int {\n"
        + _statements("\tinput = step{n}(input)", 420)
        + "\n\treturn input\n}\n\n"
        + "const (\n" + _statements("\tCode{n} = {n}", 300) + "\n)\n"
    ),
    "rust": lambda: (
        "use std::fmt;\n\n"
        + "pub enum Code {\n" + _statements("    Variant{n},", 260) + "\n}\n\n"
        + "impl Code {\n    pub fn run_all(input: u32) -> u32 {\n        let mut input = input;\n"
        + _statements("        input = step{n}(input);", 420)
        + "\n        input\n    }\n}\n\n"
        + _statements("static TABLE_{n}: u32 = {n};", 230) + "\n"
    ),
    "java": lambda: (
        "package big;\n\nimport java.util.List;\n\n/** Holds it all. */\npublic class Registry {\n"
        + _statements("    static final int CODE_{n} = {n};", 260)
        + "\n\n    /** Runs every step. */\n    int runAll(int input) {\n"
        + _statements("        input = step{n}(input);", 420)
        + "\n        return input;\n    }\n"
        + _statements("    int field{n};", 80)
        + "\n}\n"
    ),
}
EXTENSIONS = {"javascript": "js", "typescript": "ts", "tsx": "tsx", "go": "go", "rust": "rs", "java": "java"}


@pytest.mark.parametrize("language", sorted(LONG_SOURCES))
def test_long_definitions_containers_and_remainders_are_covered(language):
    source = LONG_SOURCES[language]()
    parsed = parse_file(f"src/big.{EXTENSIONS[language]}", source, language)

    assert parsed.error == ""
    assert uncovered_lines(source, parsed.chunks) == []
    assert any(c.part > 0 for c in parsed.chunks)  # something was long enough to need windows
    assert all(len(c.text.splitlines()) <= MAX_CHUNK_LINES for c in parsed.chunks)
    for chunk_ in parsed.chunks:  # windows of one definition share what describes it
        first = next(c for c in parsed.chunks if c.symbol == chunk_.symbol and c.part == 0)
        assert (chunk_.kind, chunk_.signature, chunk_.docstring) == (first.kind, first.signature, first.docstring)


def test_minified_line_is_covered_in_bounded_pieces():
    bundle = ";".join(f"function f{n}(a){{return g{n}(a)+{n}}}" for n in range(6000))
    source = "/* license: keep me */\n" + bundle + "\nexport default f1;\n"
    parsed = parse_file("web/bundle.js", source, "javascript")

    assert uncovered_lines(source, parsed.chunks) == []
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in parsed.chunks)
    f7 = next(c for c in parsed.chunks if c.symbol == "f7")
    assert f7.text == "function f7(a){return g7(a)+7}"


def test_a_long_line_inside_a_function_is_kept_in_pieces():
    blob = "".join(f"{n:04x}" for n in range(3000))
    source = f'func Data() string {{\n\treturn "{blob}"\n}}\n'
    parsed = parse_file("data.go", source, "go")

    assert uncovered_lines(source, parsed.chunks) == []
    assert all(c.symbol == "Data" for c in parsed.chunks)


def test_unparsable_input_and_missing_grammar_still_cover_every_line(monkeypatch):
    broken = "export function ok() { return 1 }\nconst = = = ;;\n}}}{{{\nfunction (\n"
    parsed = parse_file("src/broken.ts", broken, "typescript")
    assert uncovered_lines(broken, parsed.chunks) == []

    import grepgraph.retrievers.parse.treesitter.walk as walk

    def no_grammar(language):
        raise ImportError(f"no grammar for {language}")

    monkeypatch.setattr(walk, "_parser_for", no_grammar)
    source = dedent(
        """\
        package main

        func main() {
        \tprintln("hi")
        }
        """
    )
    parsed = parse_file("main.go", source, "go")
    assert "unavailable" in parsed.error
    assert uncovered_lines(source, parsed.chunks) == []


def test_text_file_with_a_huge_line_is_covered_in_bounded_windows():
    source = "# Data\n\n" + "x" * 120_000 + "\n\nend\n"
    parsed = parse_file("docs/data.md", source, "text")

    assert uncovered_lines(source, parsed.chunks) == []
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in parsed.chunks)
