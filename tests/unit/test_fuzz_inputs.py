"""Fuzzed parsers: each raises only its documented error, and answers as a reference does where one exists.

What a user, a client or a repository can hand grepgraph: query text, path globs and ``.gitignore`` rules, the
service's request lines and replies, ``grepgraph.toml``. A CI-sized run (200 examples each); the references are
the slower or backtracking implementations these parsers replaced, on inputs small enough for them.
"""

from __future__ import annotations

import json
import re
import socket
import tempfile
from dataclasses import fields
from pathlib import Path, PurePosixPath

import pathspec
import pytest
from grepgraph.graphs import heuristics
from grepgraph.graphs.context import Context, resolve_context
from grepgraph.retrievers.core.index_settings import IndexSettings, resolve_index_settings
from grepgraph.retrievers.core.service_settings import ServiceSettings, resolve_service_settings
from grepgraph.retrievers.lexical.tokenize import content_words, tokenize_query
from grepgraph.retrievers.query import described, parsing, shape
from grepgraph.retrievers.query.mentions import PathNames
from grepgraph.retrievers.query.scope import Scope, ScopeError
from grepgraph.retrievers.source.globs import GlobError, GlobRules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grepgraph.daemon import BadRequest, parse_request
from grepgraph.service_client import HEARTBEAT, read_reply_line

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def joined(tokens: list[str], max_size: int) -> st.SearchStrategy[str]:
    """Strings made of ``tokens`` (words and punctuation the parsers look for), up to ``max_size`` of them."""
    return st.lists(st.sampled_from(tokens), max_size=max_size).map("".join)


QUERY_TOKENS = [*"aZb_19 .:/\\-()'\"`\n\t?!=,;{}[]<>#$*é", "py", "pyi", "ts", "go", "File \"", "\", line 3",
                ", in run", "Error", "Traceback (most recent call last)", "and", "then", "also", "as well as",
                "<think>", "</think>", "```", "json", "::", "->", "Returns", "Which class", "  ", "  \n"]
QUERY = joined(QUERY_TOKENS, 60) | st.text(max_size=120)
# Denser in what the linear rewrites look for: path characters and file endings, stops and spaces, calls.
PATHS_AND_STOPS = joined([*"ab/\\.-_1 ()\n\té`", "py", "pyi", "ts", "tsx", "go", "rs", "java", "Ab", ". ", "```"], 30)


# ----------------------------------------------------------------------------- query parsing
@FUZZ
@given(QUERY)
def test_query_parsing_takes_any_text(text: str):
    assert all(isinstance(token, str) for token in parsing.code_tokens(text))
    assert all(isinstance(path, str) for path in parsing.mentioned_paths(text))
    assert isinstance(parsing.without_environment_listing(text), str)
    assert isinstance(parsing.plain_text(text), str)
    parsing.reads_as_prose(text)
    assert described.described_kind(text) in ("type", "callable", None)
    probability = described.type_probability(text)
    assert probability is None or 0.0 <= probability <= 1.0
    shape.describes_exception(text)
    shape.head_phrase(text)
    tokenize_query(text)
    content_words(text)
    parts, mode = heuristics.decompose(text, 3)
    assert parts and mode in ("single", "union", "sequential")
    heuristics.looks_pasted(text)
    heuristics.classify_graph_question(text)
    heuristics.should_rewrite(text, top=1.0, second=0.5, intent=None, min_content_words=2, stopword_share=0.5,
                              long_words=200, strong_score=5.0, strong_gap=0.3)
    assert heuristics.parse_json_object(text) is None or isinstance(heuristics.parse_json_object(text), dict)


OLD_PATH_MENTION = re.compile(r"[A-Za-z0-9_\-./\\]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|mjs|cjs)\b")
OLD_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+)\s*([A-Z][a-z]+)\b")
OLD_CALL = re.compile(r"\w\(.*\)")
OLD_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


@FUZZ
@given(QUERY | PATHS_AND_STOPS)
def test_linear_parsing_finds_what_the_backtracking_regexes_found(text: str):
    assert parsing._path_mentions(text) == OLD_PATH_MENTION.findall(text)
    assert ([match.start(1) for match in parsing.SENTENCE_START.finditer(text)]
            == [match.start(1) for match in OLD_SENTENCE_START.finditer(text)])
    assert heuristics._has_call(text) == bool(OLD_CALL.search(text))
    assert re.sub(r"^```(?:json)?\s*|(?<!\s)\s*```$", "", text) == OLD_FENCE.sub("", text)


def scanned_files(paths: list[str], mentions: list[str]) -> set[str]:
    """What a mention named when it was compared with every indexed path."""
    files: set[str] = set()
    for mention in mentions:
        parts = PurePosixPath(mention).parts
        for width in range(min(len(parts), 6), 0, -1):
            suffix = "/".join(parts[-width:])
            hits = [p for p in paths if p == suffix or p.endswith("/" + suffix)]
            if hits and (width > 1 or len(hits) <= 3):
                files.update(hits)
                break
    return files


PART = st.sampled_from(["a", "b", "src", "pkg", "__init__.py", "app.py", "util.py", "x.go", "..", "."])
INDEXED_PATH = st.lists(PART.filter(lambda part: part not in ("..", ".")), min_size=1, max_size=5).map("/".join)
MENTION = st.tuples(st.sampled_from(["", "/", "./", "../", "C:\\"]), st.lists(PART, min_size=1, max_size=7)).map(
    lambda pair: pair[0] + "/".join(pair[1]))


@FUZZ
@given(st.lists(INDEXED_PATH, max_size=30, unique=True), st.lists(MENTION, max_size=6))
def test_mentioned_files_are_the_ones_a_scan_of_every_path_finds(paths: list[str], mentions: list[str]):
    mentions = [mention.replace("\\", "/") for mention in mentions]
    assert PathNames(paths).files_mentioned(mentions) == scanned_files(paths, mentions)


# ----------------------------------------------------------------------------- globs
# Few letters, so that rules and paths meet: a negation after a rule that matches, a class, a "**".
GLOB = st.tuples(st.sampled_from(["", "", "!", "/", "!/", "\\#"]),
                 joined([*"ab*?/.\\# -[]", "**", "[ab]", "[!a]", "[a-b]", "[z-a]"], 6)).map("".join)
NAME = joined([*"abab.*?[]!#\\ -é", "\udcff"], 3).filter(lambda name: name not in ("", ".", ".."))
PATH = st.tuples(st.lists(NAME, min_size=1, max_size=4), st.booleans()).map(
    lambda pair: "/".join(pair[0]) + ("/" if pair[1] else ""))


def reference_verdict(lines: list[str], path: str) -> bool | None | type[Exception]:
    """pathspec's answer with its Python ``re`` backend (fast on inputs this small), or the error it raised."""
    try:
        spec = pathspec.PathSpec.from_lines("gitignore", lines, backend="simple")
    except (ValueError, re.error):
        return GlobError
    return spec.check_file(path).include


@FUZZ
@given(st.lists(GLOB, min_size=1, max_size=4), PATH)
def test_glob_rules_agree_with_pathspec(lines: list[str], path: str):
    expected = reference_verdict(lines, path)
    if expected is GlobError:
        with pytest.raises(GlobError):
            GlobRules(lines)
    else:
        assert GlobRules(lines).decide(path) == expected


@FUZZ
@given(st.lists(QUERY, max_size=4) | st.lists(GLOB, max_size=4), st.lists(QUERY, max_size=3))
def test_any_filters_are_a_scope_or_one_scope_error(paths: list[str], languages: list[str]):
    try:
        scope = Scope.of(paths, languages)
    except ScopeError as error:
        assert "\n" not in str(error).strip() or "\n" in "".join(paths + languages)
        return
    files = {"src/a.py": "python", "b/c.go": "go", "d.md": "text"}
    assert set(scope.allowed_paths(files)) <= set(files)


@settings(max_examples=50, deadline=None)
@given(joined([*"ab*?[]!/\\# \n", "**", "\r\n", "[z-a]", "\udcff"], 40))
def test_any_gitignore_is_walked(gitignore: str):
    from grepgraph.retrievers.source.walk import walk_repository

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".gitignore").write_text(gitignore, encoding="utf-8", errors="surrogateescape")
        for relative in ("a.py", "b/a.py", "b/c/ab.go"):
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text("x = 1\n")
        paths = {source.path for source in walk_repository(root).files}
        assert paths <= {"a.py", "b/a.py", "b/c/ab.go"}


# ----------------------------------------------------------------------------- the service's protocol
JSON_SCALAR = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
JSON = st.recursive(JSON_SCALAR, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
REQUEST = st.fixed_dictionaries(
    {"op": st.sampled_from(["search", "ping", "status", "stop", "catch_up", "other"]),
     "version": st.text(max_size=20), "input": st.dictionaries(st.text(max_size=8), JSON, max_size=4)},
    optional={"context": st.dictionaries(st.text(max_size=8), JSON, max_size=4),
              "env": st.dictionaries(st.text(max_size=20), st.text(max_size=20), max_size=4)})


@FUZZ
@given(st.binary(max_size=200) | JSON.map(lambda value: json.dumps(value).encode() + b"\n")
       | REQUEST.map(lambda request: json.dumps(request).encode()[:-1]))
def test_any_request_line_is_a_request_or_one_bad_request(line: bytes):
    try:
        request = parse_request(line)
    except BadRequest as error:
        assert str(error) and "\n" not in str(error)
        return
    assert isinstance(request, dict)


@FUZZ
@given(REQUEST)
def test_a_well_formed_request_is_read_as_sent(request: dict):
    assert parse_request(json.dumps(request).encode() + b"\n") == request


@FUZZ
@given(JSON, st.integers(0, 5), st.lists(st.integers(1, 50), min_size=1, max_size=5))
def test_a_reply_is_read_whole_after_its_heartbeats(value, heartbeats: int, cuts: list[int]):
    line = HEARTBEAT * heartbeats + json.dumps({"ok": True, "out": value}).encode() + b"\n"
    server, client = socket.socketpair()
    with server, client:
        start = 0
        for cut in [*cuts, len(line)]:  # sent in pieces, as a socket may deliver it
            server.sendall(line[start : start + cut])
            start += cut
        server.close()
        assert json.loads(read_reply_line(client)) == {"ok": True, "out": value}


# ----------------------------------------------------------------------------- grepgraph.toml
SETTING_NAMES = sorted({f.name for schema in (Context, IndexSettings, ServiceSettings) for f in fields(schema)})
TOML_VALUE = st.sampled_from(["1", "-1", "0.5", "1e400", "inf", "nan", "true", "\"x\"", "'auto'", "[1, 2]", "{a = 1}",
                              "1979-05-27T07:32:00Z", "\"\\udcff\"", "[" * 30 + "]" * 30, "", "\"on\"", "3"])
TOML_LINE = (st.tuples(st.sampled_from([*SETTING_NAMES, "grepgraph", "index", "service", "x y"]), TOML_VALUE)
             .map(lambda pair: f"{pair[0]} = {pair[1]}")
             | st.sampled_from(["[grepgraph]", "[index]", "[service]", "[grepgraph.index]", "[[index]]", "# note", ""]))
TOML = st.lists(TOML_LINE, max_size=8).map("\n".join) | st.text(max_size=80)


@FUZZ
@given(TOML)
def test_any_settings_file_resolves_or_is_one_value_error(text: str):
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "grepgraph.toml").write_text(text, encoding="utf-8", errors="surrogateescape")
        for resolve in (resolve_index_settings, resolve_service_settings,
                        lambda repo: resolve_context({"repo": repo})):
            try:
                resolve(folder)
            except ValueError as error:
                assert str(error)


@pytest.mark.parametrize(("text", "message"), [
    ("index = 3", "[index] must be a table"),
    ("service = [1]", "[service] must be a table"),
    ("[grepgraph]\nindex = 'x'", "[index] must be a table"),
    ("a = " + "[" * 5_000 + "]" * 5_000, "not valid TOML (nested too deeply)"),
    ("a = '\udcff'", "not valid TOML"),
])
def test_settings_files_that_crashed_are_one_value_error(tmp_path: Path, text: str, message: str):
    (tmp_path / "grepgraph.toml").write_text(text, encoding="utf-8", errors="surrogateescape")
    for resolve in (resolve_index_settings, resolve_service_settings, lambda repo: resolve_context({"repo": repo})):
        with pytest.raises(ValueError, match=re.escape(message)) as caught:
            resolve(tmp_path)
        assert str(tmp_path / "grepgraph.toml") in str(caught.value)
