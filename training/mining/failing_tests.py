"""Issue reports with a real traceback: a fix's own test, run on the code before the fix.

A mined bug fix (:mod:`mining.commits`) that also changed a Python test file is replayed as SWE-bench checks its
tasks: the tree at the parent commit, with the fix's test files laid over it, runs those tests under pytest; a
test that fails there and passes at the fix commit fails because of the bug. Its node id and traceback
(``--tb=native``, as a user pastes one) are what this finds; ``mine_failures.py`` writes the query around them.
Unlike a made-up stack trace (:mod:`mining.stack_traces`), nothing places the answer in a frame: the frames are
wherever the failure surfaced (often only the test, for a wrong value).

The tests run in a virtual environment of their own, with the tree on ``PYTHONPATH``; a fix whose tests cannot be
collected there is skipped, as is one whose failing test fails at the fix commit too.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grepgraph.retrievers.lexical.tokenize import split_identifier

from .commits import changed_lines, definitions_at, git, unpack_tree
from .common import is_test_path
from .doc_text import first_sentence

# Each pytest run is cut off after this long (a fix's test files, not the suite).
TEST_SECONDS = 120
# Tests picked by name at most (more: the changed files run whole).
MAX_TEST_NAMES = 20
# The traceback kept, from its end (where the error is): a pasted trace is rarely longer.
MAX_TRACE_LINES = 40
# A user's checkout, as the traceback's paths show it (the temporary tree's path is replaced).
CHECKOUT = "/home/dev/src"
_FAILED = re.compile(r"^FAILED (\S+?::\S+?)(?: - .*)?$", re.M)
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$", re.M)
_FRAME = re.compile(r'^  File "([^"]+)", line \d+')
_WARNING_PLACE = re.compile(r"^\S+\.py:\d+$")  # the warnings summary after a failure
# A report's title is at most this long (an issue tracker's titles are one line).
MAX_TITLE_CHARS = 120
_REFERENCE = re.compile(r"\S+://\S+|#\d+")
# A test's description names the bug only when it has this many words besides links and issue numbers.
MIN_DESCRIPTION_WORDS = 4


@dataclass(frozen=True)
class FailingTest:
    """A test of the fix that fails before it: its node id and the traceback pytest printed."""

    node: str
    traceback: str


def changed_tests(git_dir: Path, parent: str, commit: str) -> list[str]:
    """The Python test files the fix added or changed (what it tests the fix with)."""
    names = git(git_dir, "diff", "--name-only", "--diff-filter=AM", parent, commit).split()
    return [name for name in names if name.endswith(".py") and is_test_path(name)]


def changed_test_names(git_dir: Path, parent: str, commit: str, sources: dict[str, str]) -> list[str]:
    """The test functions the fix added or edited in those files (``sources``: each one's text at the fix)."""
    found = set()
    for name, source in sources.items():
        added = changed_lines(git(git_dir, "diff", "-U0", parent, commit, "--", name))[1]
        found |= {gold["symbol"].rsplit(".", 1)[-1] for gold in definitions_at(name, source, sorted(added))}
    return sorted(test for test in found if test.startswith("test"))


def run_pytest(python: Path, tree: Path, targets: list[str], tests: list[str] | None = None) -> str:
    """The output of pytest for ``targets`` in ``tree``, only ``tests`` by name when given (native tracebacks)."""
    paths = [str(tree / "src"), str(tree)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONDONTWRITEBYTECODE": "1"}
    chosen = ["-k", " or ".join(tests)] if tests and len(tests) <= MAX_TEST_NAMES else []
    command = [str(python), "-m", "pytest", "-q", "-rf", "--tb=native", "-p", "no:cacheprovider",
               "--no-header", "-o", "addopts=", "--rootdir", str(tree), *chosen, *targets]
    try:
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, errors="replace",
                              timeout=TEST_SECONDS)
    except subprocess.TimeoutExpired:
        return ""
    return done.stdout + done.stderr


def failed_nodes(output: str) -> list[str]:
    """The node ids of the failed tests, from pytest's short summary."""
    return [match.group(1) for match in _FAILED.finditer(output)]


def section_of(output: str, node: str) -> str:
    """The failure section pytest printed for ``node`` (its header names the test, without the file)."""
    test = node.split("::")[-1]
    headers = list(_SECTION.finditer(output))
    for number, header in enumerate(headers):
        if header.group(1).split(".")[-1] == test or header.group(1).endswith(test):
            end = headers[number + 1].start() if number + 1 < len(headers) else len(output)
            summary = output.find("short test summary", header.end())
            if 0 <= summary < end:
                end = output.rfind("\n", 0, summary)
            return output[header.end():end].strip("\n")
    return ""


def native_traceback(section: str, tree: Path) -> str:
    """The section's last traceback as a user's script would print it, cut to its last lines.

    The test runner's own frames (pytest, pluggy: files outside the tree) are dropped, as is what pytest prints
    after the error (captured output, warnings); the temporary tree's paths become a checkout's.
    """
    start = section.rfind("Traceback (most recent call last):")
    if start < 0:
        return ""
    lines: list[str] = []
    keep = True
    for line in section[start:].splitlines():
        if line.startswith(("----", "====")) or _WARNING_PLACE.match(line):
            break
        frame = _FRAME.match(line)
        if frame:
            keep = frame.group(1).startswith((str(tree), "<"))
        elif not line.startswith("    "):
            keep = True  # the error's lines (and a chained traceback's header)
        if keep:
            lines.append(line)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) > MAX_TRACE_LINES:
        lines = [lines[0], *lines[-(MAX_TRACE_LINES - 1):]]
    return "\n".join(lines).replace(str(tree), CHECKOUT)


def opening_comment(source: str) -> str:
    """The comment block that opens a test's body (its description when it has no docstring)."""
    lines = source.splitlines()
    body = next((number + 1 for number, line in enumerate(lines) if line.rstrip().endswith(":")
                 and line.lstrip().startswith(("def ", "async def "))), len(lines))
    comment = []
    for line in lines[body:]:
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        comment.append(stripped.lstrip("#").strip())
    return "\n".join(comment)


def report_title(node: str, source: str, docstring: str) -> str:
    """A title for the failure as a user reports it, before anyone knows the fix.

    What the test says about itself (its docstring, else the comment opening its body: a regression test's
    describes the bug), else the test's name in words (``test_merge_keeps_defaults``: what should hold). The error
    itself is in the report's traceback; as a title it made a pasted traceback read as a report. The fix commit's
    subject is not used: it names the fix.
    """
    test = node.split("::")[-1].split("[", 1)[0]
    named = " ".join(word for word in split_identifier(test) if word != "test")
    description = first_sentence(docstring or opening_comment(source), "python")
    if len(re.findall(r"[A-Za-z]{2,}", _REFERENCE.sub(" ", description))) < MIN_DESCRIPTION_WORDS:
        description = ""  # "See #123.", a link, a line of sample data
    title = description or named
    return title[:MAX_TITLE_CHARS]


def failing_test(git_dir: Path, parent: str, commit: str, python: Path) -> FailingTest | None:
    """The first test of the fix that fails at ``parent`` (with the fix's tests) and passes at ``commit``."""
    tests = changed_tests(git_dir, parent, commit)
    if not tests:
        return None
    with tempfile.TemporaryDirectory(prefix="failing-") as scratch:
        before, after = Path(scratch, "before"), Path(scratch, "after")
        unpack_tree(git_dir, parent, before)
        sources = {name: git(git_dir, "show", f"{commit}:{name}") for name in tests}
        for name, source in sources.items():  # the fix's tests over the code before it
            target = before / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(source)
        names = changed_test_names(git_dir, parent, commit, sources)
        # The tests the fix edited first (quick); failing none, every test of its files (a fixture it changed).
        for selection in (names, None) if names else (None,):
            output = run_pytest(python, before, tests, selection)
            for node in failed_nodes(output):
                trace = native_traceback(section_of(output, node), before)
                if not trace:
                    continue
                if not after.exists():
                    unpack_tree(git_dir, commit, after)
                fixed = run_pytest(python, after, [node])
                if failed_nodes(fixed) or " passed" not in fixed:
                    continue  # not the bug's: it fails with the fix too (or cannot run)
                return FailingTest(node, trace)
    return None
