"""Python chunking with ``ast``, the syntax-error fallback, and line windows for text files."""

from __future__ import annotations

from textwrap import dedent

import pytest
from grepgraph.retrievers.core.model import Chunk, ParsedFile
from grepgraph.retrievers.parse.chunking import parse_file
from grepgraph.retrievers.parse.line_chunks import TEXT_WINDOW_LINES, TEXT_WINDOW_OVERLAP
from grepgraph.retrievers.parse.python import parse_python

SOURCE = dedent(
    '''\
    """Persist parse results as a graph of edges."""

    import sqlite3
    from collections import abc as collections_abc
    from . import schema
    from ..util.sql import quote

    BATCH = 500


    @register
    @retry(times=3)
    def connect(path: str, timeout: float = 5.0) -> sqlite3.Connection:
        """Open the database.

        Creates the schema on first use.
        """
        connection = sqlite3.connect(path, timeout=timeout)
        schema.create(connection)
        return connection


    class GraphStore(BaseStore, collections_abc.Sized, object):
        """A call graph in SQLite."""

        table = "calls"

        def store_parse_result(self, result):
            """Insert the edges of one parsed file."""
            self.delete_file(result.path)
            return self._insert_edges(quote(self.table), result.calls)

        @property
        def size(self):
            return len(self)

        class Options:
            def merge(self, other):
                return combine(self, other)

        limit = BATCH


    if __name__ == "__main__":
        connect("graph.db")
    '''
)


@pytest.fixture(scope="module")
def parsed() -> ParsedFile:
    return parse_python("graphstore/store.py", SOURCE)


def by_symbol(parsed: ParsedFile) -> dict[str, Chunk]:
    return {chunk.symbol: chunk for chunk in parsed.chunks}


def line_of(text: str, source: str = SOURCE) -> int:
    return next(number for number, line in enumerate(source.splitlines(), 1) if text in line)


def edges(parsed: ParsedFile, kind: str) -> set[tuple[str, str]]:
    return {(edge.source, edge.target) for edge in parsed.edges if edge.kind == kind}


def test_one_chunk_per_definition_with_qualified_symbols(parsed):
    kinds = {chunk.symbol: chunk.kind for chunk in parsed.chunks}
    assert kinds == {
        "store": "module",
        "connect": "function",
        "GraphStore": "class",
        "GraphStore.store_parse_result": "method",
        "GraphStore.size": "method",
        "GraphStore.Options": "class",
        "GraphStore.Options.merge": "method",
    }
    chunks = by_symbol(parsed)
    assert chunks["GraphStore.store_parse_result"].parent == "GraphStore"
    assert chunks["GraphStore.Options.merge"].parent == "GraphStore.Options"
    assert chunks["connect"].parent == ""
    assert all(chunk.path == "graphstore/store.py" and chunk.language == "python" for chunk in parsed.chunks)
    assert parsed.error == ""


def test_chunks_are_in_file_order(parsed):
    starts = [chunk.start_line for chunk in parsed.chunks]
    assert starts == sorted(starts)


def test_function_span_includes_its_decorators(parsed):
    connect = by_symbol(parsed)["connect"]
    assert connect.start_line == line_of("@register")
    assert connect.end_line == line_of("return connection")
    assert connect.text.startswith("@register\n@retry(times=3)\ndef connect(")
    size = by_symbol(parsed)["GraphStore.size"]
    assert size.start_line == line_of("@property")


def test_method_text_is_its_own_lines(parsed):
    method = by_symbol(parsed)["GraphStore.store_parse_result"]
    assert method.start_line == line_of("def store_parse_result")
    assert method.end_line == line_of("return self._insert_edges")
    assert method.text == "\n".join(SOURCE.splitlines()[method.start_line - 1 : method.end_line])


def test_signatures_and_docstrings(parsed):
    chunks = by_symbol(parsed)
    assert chunks["connect"].signature == "def connect(path: str, timeout: float = 5.0) -> sqlite3.Connection:"
    assert chunks["connect"].docstring == "Open the database.\n\nCreates the schema on first use."
    assert chunks["GraphStore"].signature == "class GraphStore(BaseStore, collections_abc.Sized, object):"
    assert chunks["GraphStore"].docstring == "A call graph in SQLite."
    assert chunks["GraphStore.store_parse_result"].signature == "def store_parse_result(self, result):"
    assert chunks["GraphStore.size"].docstring == ""


def test_class_chunk_is_header_and_class_level_lines(parsed):
    graph_store = by_symbol(parsed)["GraphStore"]
    assert graph_store.start_line == line_of("class GraphStore")
    assert graph_store.end_line == line_of("limit = BATCH")
    text = graph_store.text
    for kept in ("class GraphStore(", '"""A call graph in SQLite."""', 'table = "calls"', "limit = BATCH"):
        assert kept in text
    # Methods and nested classes are chunks of their own, not repeated in the class chunk.
    for left_out in ("def store_parse_result", "self.delete_file", "@property", "class Options", "def merge"):
        assert left_out not in text


def test_module_chunk_holds_what_no_definition_covers(parsed):
    module = by_symbol(parsed)["store"]
    assert module.kind == "module"
    assert module.docstring == "Persist parse results as a graph of edges."
    assert module.start_line == 1
    for kept in ("import sqlite3", "BATCH = 500", 'if __name__ == "__main__":', 'connect("graph.db")'):
        assert kept in module.text
    for left_out in ("def connect", "class GraphStore", "schema.create"):
        assert left_out not in module.text
    assert "" not in module.text.splitlines()  # blank lines are dropped


def test_call_edges_come_from_the_enclosing_symbol(parsed):
    calls = edges(parsed, "calls")
    assert {
        ("connect", "sqlite3.connect"),
        ("connect", "schema.create"),
        ("GraphStore.store_parse_result", "self.delete_file"),
        ("GraphStore.store_parse_result", "self._insert_edges"),
        ("GraphStore.store_parse_result", "quote"),
        ("GraphStore.size", "len"),
        ("GraphStore.Options.merge", "combine"),
        ("", "connect"),
    } <= calls
    line = line_of("schema.create(connection)")
    assert any(e.target == "schema.create" and e.line == line for e in parsed.edges)


def test_import_edges_keep_relative_levels(parsed):
    assert edges(parsed, "imports") == {
        ("", "sqlite3"),
        ("", "collections.abc"),
        ("", ".schema"),
        ("", "..util.sql.quote"),
    }


def test_inherit_edges_skip_object(parsed):
    assert edges(parsed, "inherits") == {("GraphStore", "BaseStore"), ("GraphStore", "collections_abc.Sized")}


def test_async_functions_and_nested_functions():
    source = dedent(
        """\
        async def fetch(url):
            async def attempt():
                return await get(url)
            return await attempt()
        """
    )
    parsed = parse_python("client.py", source)
    chunks = by_symbol(parsed)
    assert chunks["fetch"].kind == "function"
    assert chunks["fetch"].signature == "async def fetch(url):"
    assert chunks["fetch.attempt"].parent == "fetch"
    assert ("fetch.attempt", "get") in edges(parsed, "calls")
    assert ("fetch", "attempt") in edges(parsed, "calls")


def test_test_files_and_test_functions_are_marked():
    source = "def helper():\n    pass\n\n\ndef test_helper():\n    helper()\n\n\nclass TestStore:\n    pass\n"
    in_tests = parse_python("tests/test_store.py", source)
    assert all(chunk.is_test for chunk in in_tests.chunks)
    elsewhere = by_symbol(parse_python("graphstore/util.py", source))
    assert not elsewhere["helper"].is_test
    assert elsewhere["test_helper"].is_test
    assert elsewhere["TestStore"].is_test


def test_syntax_error_falls_back_to_line_windows():
    source = "def broken(:\n    pass\n" + "\n".join(f"value_{n} = {n}" for n in range(60))
    parsed = parse_python("graphstore/broken.py", source)
    assert parsed.error.startswith("syntax error")
    assert parsed.edges == []
    assert parsed.chunks and all(chunk.kind == "text" and chunk.language == "python" for chunk in parsed.chunks)
    assert parsed.chunks[0].start_line == 1
    assert parsed.chunks[-1].end_line == len(source.splitlines())
    # Nothing of the file is lost.
    covered = set()
    for chunk in parsed.chunks:
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    assert covered == set(range(1, len(source.splitlines()) + 1))


def test_empty_python_file_has_no_chunks():
    assert parse_file("graphstore/__init__.py", "", "python") == ParsedFile()


def test_markdown_becomes_overlapping_line_windows():
    lines = ["# Architecture", "", "Edges are stored in SQLite."] + [f"line {n}" for n in range(4, 101)]
    parsed = parse_file("docs/architecture.md", "\n".join(lines), "text")
    windows = [(chunk.start_line, chunk.end_line) for chunk in parsed.chunks]
    step = TEXT_WINDOW_LINES - TEXT_WINDOW_OVERLAP
    assert windows[0] == (1, TEXT_WINDOW_LINES)
    assert [start for start, _ in windows] == list(range(1, 100, step))[: len(windows)]
    assert windows[-1][1] == 100
    first = parsed.chunks[0]
    assert first.kind == "text"
    assert first.symbol == "architecture.md:1"
    assert first.docstring == "Architecture"  # the window's first heading
    assert first.text.splitlines()[:3] == lines[:3]
    assert not first.is_test
    assert parsed.edges == []


def test_blank_windows_are_dropped():
    parsed = parse_file("notes.txt", "\n" * 100 + "the only line\n", "text")
    assert [chunk.text.strip() for chunk in parsed.chunks] == ["the only line"]


@pytest.mark.parametrize(
    ("source", "signature"),
    [
        ("def commented(a):  # note: keep\n    return a\n", "def commented(a):"),
        ("def first_comment(a):\n    # todo: fix\n    return a\n", "def first_comment(a):"),
        ('def inline(x): return {"a": x}\n', "def inline(x):"),
    ],
)
def test_signature_leaves_out_comments_and_body(source, signature):
    (chunk,) = parse_python("m.py", source).chunks
    assert chunk.signature == signature


def test_decorator_calls_are_call_edges(parsed):
    assert ("", "retry") in edges(parsed, "calls") or ("connect", "retry") in edges(parsed, "calls")
