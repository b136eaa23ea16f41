"""The training miners' pure rules: licences, doc sentences, error messages, definitions, commit messages."""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mining import licences  # noqa: E402
from mining.commits import changed_lines, changed_old_lines, changes_code, clean_message, is_fix  # noqa: E402
from mining.definitions import definitions, innermost  # noqa: E402
from mining.doc_text import drop_leading_name, first_sentence, usable  # noqa: E402
from mining.error_sites import error_sites  # noqa: E402
from mining.failing_tests import (  # noqa: E402
    CHECKOUT,
    changed_test_names,
    changed_tests,
    failed_nodes,
    failing_test,
    native_traceback,
    report_title,
    section_of,
)
from mining.package_queries import Candidate, SourceFile, blank  # noqa: E402


def test_licences_are_read_and_judged():
    """Licence names normalise to SPDX; permissive expressions pass, copyleft ones fail."""
    assert licences.canonical("MIT or Apache-2.0") == "MIT OR Apache-2.0"
    assert licences.is_permissive("Unlicense/MIT")
    assert licences.is_permissive(licences.canonical("BSD-3-clause~Google"))
    assert not licences.is_permissive("MPL-2.0 AND MIT")
    assert not licences.is_permissive("GPL-3")
    pkg_info = "Metadata-Version: 2.1\nName: x\nClassifier: License :: OSI Approved :: MIT License\n"
    assert licences.from_pkg_info(pkg_info) == "MIT"
    assert licences.from_package_json({"license": "(MIT OR GPL-3.0-or-later)"}) == "MIT OR GPL-3.0-or-later"
    copyright_text = "Format: x\n\nFiles: *\nCopyright: someone\nLicense: Expat\n\nFiles: debian/*\nLicense: GPL-2\n"
    assert licences.from_debian_copyright(copyright_text) == "MIT"


def test_first_sentences_lose_markup_and_the_leading_name():
    """Queries are the first sentence, without tags, markup or a leading copy of the name."""
    javadoc = "/**\n * Returns the {@code int} value of this {@link Number}.\n * <p>More.\n * @return x\n */"
    assert first_sentence(javadoc, "java") == "Returns the int value of this Number."
    go = "// ParseLevel takes a string level and returns the Logrus log level constant.\n// More."
    sentence = first_sentence(go, "go")
    assert drop_leading_name(sentence, "ParseLevel", "ParseLevel") == (
        "Takes a string level and returns the Logrus log level constant.")
    assert drop_leading_name("Filter the rows by a predicate.", "Filter", "Filter") == "Filter the rows by a predicate."
    assert first_sentence("Return a :class:`~x.Y` for the given e.g. name.\n\nMore.", "python") == (
        "Return a x.Y for the given e.g. name.")
    assert first_sentence("/// \\[Generic\\] Compute a minimum spanning tree.", "rust") == (
        "[Generic] Compute a minimum spanning tree.")
    assert not usable("foo(a, b) -> int", "foo")
    assert usable("Return the attrs attribute values of inst as a dict.", "asdict")


def test_error_messages_are_rendered_with_plausible_values():
    """Placeholders become values that read naturally; too short messages are dropped."""
    python = b'def f(path):\n    raise ValueError(f"cannot open {path!r} for reading")\n'
    assert [s.message for s in error_sites("a.py", python, "python")] == [
        "ValueError: cannot open '/tmp/data/config.json' for reading"]
    go = b'package a\nfunc f() error { return fmt.Errorf("invalid port number %d in address", port) }\n'
    assert [s.message for s in error_sites("a.go", go, "go")] == ["invalid port number 3 in address"]
    java = b'class A { void f() { throw new IllegalStateException("Cannot add entry " + name + " twice"); } }'
    assert [s.message for s in error_sites("A.java", java, "java")] == [
        "IllegalStateException: Cannot add entry foo twice"]
    escaped = b'class A { void f() { throw new IllegalArgumentException("Malformed \\\\uxxxx in \\"the\\" input"); } }'
    assert [s.message for s in error_sites("A.java", escaped, "java")] == [
        'IllegalArgumentException: Malformed \\uxxxx in "the" input']
    short = b'def f():\n    raise ValueError("bad")\n'
    assert error_sites("a.py", short, "python") == []


def test_definitions_carry_doc_ranges_and_heads():
    """Doc comments are attached with their lines; a class's head ends before its first member."""
    source = b'/// The view.\nexport class View {\n  x = 1\n  /// Update it.\n  update() { return 1 }\n}\n'
    found = {d.symbol: d for d in definitions("a.ts", source, "typescript")}
    assert found["View"].doc.ranges == [(1, 1)] and found["View"].target_end == 3
    assert found["View.update"].doc.ranges == [(4, 4)]
    assert innermost(list(found.values()), 5).symbol == "View.update"
    rust = b"/// Adds.\npub fn add() {}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n"
    assert [d.symbol for d in definitions("a.rs", rust, "rust")] == ["add"]


def test_blanking_keeps_line_numbers_and_python_bodies():
    """A docstring that was the whole body becomes pass, on the same line."""
    source = b'def f():\n    """Only a docstring here."""\n\ndef g():\n    pass\n'
    defs = definitions("a.py", source, "python")
    file = SourceFile("a.py", "python", source, defs, False)
    new = blank(source, [Candidate(file, defs[0], "q", "q")])
    assert new.count(b"\n") == source.count(b"\n")
    assert new.split(b"\n")[1] == b"    pass"


def test_commit_rules():
    """Fix subjects are recognised, trailers removed, diffs read; comment-only changes are not code."""
    assert is_fix("Fix crash when the config file is empty", "Fix crash when the config file is empty")
    assert not is_fix("Fix typo in docs", "Fix typo in docs about the thing here")
    message = clean_message("Fix x when y is empty", "Body text.\n\nSigned-off-by: A <a@b>\ngit-svn-id: https://x")
    assert message == "Fix x when y is empty\n\nBody text."
    diff = "@@ -3,2 +3,0 @@\n-a = 1\n-b = 2\n@@ -10,0 +9,1 @@\n+c = 3\n"
    assert changed_old_lines(diff) == [3, 4, 10, 11]
    assert changed_lines(diff) == ({3: "a = 1", 4: "b = 2"}, {9: "c = 3"})
    comment_only = "@@ -1,1 +1,1 @@\n-# old words\n+# new words\n"
    assert not changes_code("a.py", comment_only, "# old words\n", "# new words\n")


def test_a_mined_error_message_becomes_each_runtimes_stack_trace_whole_or_by_its_end(tmp_path):
    """The raising frame and its non-test callers in the runtime's own format, which the index's parsers read.

    Pasted whole (from the program's entry frame) or only its innermost frames, as users paste them.
    """
    import sqlite3

    from grepgraph.retrievers.query.parsing import TRACEBACK_FRAME, mentioned_paths
    from mining.stack_traces import traceback_query

    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "core.py").write_text("def load(x):\n    check(x)\n\n\ndef check(x):\n"
                                                      "    raise ValueError('bad value')\n")
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE edges (path TEXT, source TEXT, target TEXT, kind TEXT, line INTEGER)")
    connection.execute("CREATE TABLE chunks (path TEXT, is_test INTEGER)")
    connection.executemany("INSERT INTO edges VALUES (?, ?, ?, 'calls', ?)",
                           [("src/pkg/core.py", "load", "check", 2), ("tests/test_core.py", "test_check", "check", 3),
                            ("src/pkg/cli.py", "run", "load", 9), ("src/pkg/core.py", "check", "check", 6)])
    connection.executemany("INSERT INTO chunks VALUES (?, ?)",
                           [("src/pkg/core.py", 0), ("src/pkg/cli.py", 0), ("tests/test_core.py", 1)])
    gold = {"path": "src/pkg/core.py", "symbol": "check", "kind": "function", "start_line": 5, "end_line": 6,
            "line": 6}
    query = {"id": "pkg-error_message-0001", "package": "pkg", "language": "python", "kind": "error_message",
             "query": "ValueError: bad value", "gold": [gold, {**gold, "symbol": "other"}]}
    trace = traceback_query(query, connection, str(tmp_path))
    assert trace["kind"] == "traceback" and trace["id"] == "pkg-traceback-0001" and trace["gold"] == [gold]
    assert trace["query"].endswith("ValueError: bad value") and "    raise ValueError('bad value')" in trace["query"]
    assert any(path.endswith("pkg/core.py") for path in mentioned_paths(trace["query"]))
    # The chain of callers, outermost first (the recursive call is no caller of its own; a test is none either):
    # whole, from the program's entry frame (no function: None), or its innermost frames only.
    chain = ["run", "load", "check"]
    pasted = set()
    for number in range(12):
        text = traceback_query({**query, "id": f"pkg-error_message-{number:04d}"}, connection, str(tmp_path))["query"]
        frames = [m.group(3) for m in TRACEBACK_FRAME.finditer(text)]
        assert frames in ([None, *chain], chain[1:], chain[2:])
        pasted.add(len(frames))
    assert pasted == {1, 2, 4}
    for language, marker, entry in [("javascript", "    at check (", "app/index.js"),
                                    ("java", "\tat pkg.core.check(core.py:6)", "Main.main("),
                                    ("go", "panic: ValueError: bad value", "main.main()"),
                                    ("rust", "pkg::check\n", "app::main")]:
        texts = [traceback_query({**query, "language": language, "id": f"pkg-error_message-{n:04d}"}, connection,
                                 str(tmp_path))["query"] for n in range(12)]
        assert all(marker in text for text in texts) and any("load" in text for text in texts)
        assert {entry in text for text in texts} == {True, False}
    assert traceback_query({**query, "gold": [{**gold, "line": None}]}, connection, str(tmp_path)) is None


def test_a_mined_code_line_becomes_the_block_around_it_when_the_definition_is_long_enough(tmp_path):
    """The block ends at the definition's end and holds the line; a short definition gives none."""
    from mining.stack_traces import BLOCK_LINES, code_block_query

    body = [f"    total_{n} = compute(value, {n}) + offset * scale  # step {n}" for n in range(40)]
    (tmp_path / "mod.py").write_text("\n".join(["class A:", "  def run(self, value):", *body]) + "\n")
    gold = {"path": "mod.py", "symbol": "A.run", "kind": "method", "start_line": 2, "end_line": 42, "line": 40}
    query = {"id": "p-code_line-0003", "kind": "code_line", "query": body[37].strip(), "gold": [gold]}
    block = code_block_query(query, str(tmp_path))
    lines = block["query"].splitlines()
    assert block["kind"] == "code_block" and block["id"] == "p-code_block-0003" and block["gold"] == [gold]
    assert len(lines) == BLOCK_LINES and lines[-1] == body[-1].strip() and body[37].strip() in lines
    short = {**gold, "end_line": 4, "line": 3}
    assert code_block_query({**query, "gold": [short]}, str(tmp_path)) is None


def _commit(repo: Path, message: str) -> str:
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message],
                   check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_a_fix_whose_own_test_fails_before_it_gives_that_tests_traceback(tmp_path):
    """The fix's test runs on the parent's code: it fails there, passes at the fix, and its trace is kept clean."""
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "src" / "pkg" / "__init__.py").write_text("")
    (repo / "src" / "pkg" / "sizes.py").write_text(
        "def parse_size(text):\n    number, unit = text.split()\n    return int(number) * {'kb': 1024}[unit]\n")
    (repo / "tests" / "test_other.py").write_text("def test_nothing():\n    assert True\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    parent = _commit(repo, "first")
    (repo / "src" / "pkg" / "sizes.py").write_text(
        "def parse_size(text):\n    number, unit = text.split()\n    return int(number) * {'kb': 1024}[unit.lower()]\n")
    (repo / "tests" / "test_sizes.py").write_text(
        "from pkg.sizes import parse_size\n\n\ndef test_upper_case_units():\n    assert parse_size('2 KB') == 2048\n")
    fix = _commit(repo, "Fix parse_size for upper-case units")

    assert changed_tests(repo / ".git", parent, fix) == ["tests/test_sizes.py"]
    sources = {"tests/test_sizes.py": (repo / "tests" / "test_sizes.py").read_text()}
    assert changed_test_names(repo / ".git", parent, fix, sources) == ["test_upper_case_units"]
    found = failing_test(repo / ".git", parent, fix, Path(sys.executable))
    assert found is not None
    assert found.node == "tests/test_sizes.py::test_upper_case_units"
    lines = found.traceback.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1] == "KeyError: 'KB'"
    assert f'File "{CHECKOUT}/src/pkg/sizes.py", line 3, in parse_size' in found.traceback
    assert "pluggy" not in found.traceback and "_pytest" not in found.traceback  # the runner's frames are gone


def test_the_failure_section_ends_before_the_warnings_and_the_summary():
    """The output is cut to the failing test's traceback: no runner frames, no warnings, no summary."""
    output = (
        "F.\n=== FAILURES ===\n____ TestSizes.test_units[kb] ____\nTraceback (most recent call last):\n"
        '  File "/tmp/x/tests/test_sizes.py", line 5, in test_units\n    parse_size("2 KB")\n'
        '  File "/usr/lib/python3/site-packages/_pytest/python.py", line 187, in pytest_pyfunc_call\n'
        "    result = testfunction(**testargs)\n"
        '  File "/tmp/x/src/pkg/sizes.py", line 3, in parse_size\n    return table[unit]\nKeyError: \'KB\'\n'
        "src/pkg/sizes.py:1\n  DeprecationWarning: old\n"
        "=== short test summary info ===\nFAILED tests/test_sizes.py::TestSizes::test_units[kb] - KeyError: 'KB'\n"
    )
    assert failed_nodes(output) == ["tests/test_sizes.py::TestSizes::test_units[kb]"]
    section = section_of(output, "tests/test_sizes.py::TestSizes::test_units[kb]")
    assert native_traceback(section, Path("/tmp/x")).splitlines() == [
        "Traceback (most recent call last):",
        f'  File "{CHECKOUT}/tests/test_sizes.py", line 5, in test_units',
        '    parse_size("2 KB")',
        f'  File "{CHECKOUT}/src/pkg/sizes.py", line 3, in parse_size',
        "    return table[unit]",
        "KeyError: 'KB'",
    ]


def test_a_failing_tests_report_can_be_titled_by_its_test_not_by_the_fix():
    """The test's docstring first (markup dropped), else its opening comment, else the test's name in words."""
    documented = 'def test_merge(self):\n    """Merging an empty map drops the defaults. See #12."""\n    merge({})\n'
    docstring = "Merging an empty map drops the :func:`defaults`. See #12."
    title = report_title("tests/t.py::T::test_merge", documented, docstring)
    assert title == "Merging an empty map drops the defaults."
    commented = "def test_merge():\n    # regression: merging twice lost the\n    # second map's keys\n    merge()\n"
    assert report_title("t.py::test_merge", commented, "") == "regression: merging twice lost the second map's keys"
    linked = 'def test_merge_twice():\n    """https://example.org/issues/12"""\n    merge()\n'
    assert report_title("t.py::test_merge_twice", linked, "https://example.org/issues/12") == "merge twice"
    plain = "def testMergeTwice(self):\n    merge()\n"
    assert report_title("t.py::testMergeTwice[case-1]", plain, "") == "merge twice"
