#!/usr/bin/env python3
"""Issue-report queries with real tracebacks: each Python bug fix's own test, run before the fix.

For every commit query of a Python repository (``data/queries/by_package/<name>.jsonl``, from
``mine_queries.py``), :mod:`mining.failing_tests` runs the fix's test files on the parent commit's tree; a test
that fails there and passes at the fix gives a ``failing_test`` query written as an issue report is: a title, the
code that fails (the test's source) and the traceback; the gold stays the definitions the fix changed. The title is
what a user could write before the fix (``--titles test``, what the shipped weights learned from: what the test
says about itself, else its name in words; :func:`mining.failing_tests.report_title`), or the commit's subject
(``--titles subject``, what they learned from until 2026-11-30), which names the fix. The commit's body is left
out: it explains the fix, which a report written before it cannot.
Output: ``data/queries/by_package/<name>.failing.jsonl``, read by ``features.py --commits --failing``. The tests
run in their own virtual environment, made once:

    python3 -m venv training/data/test-venv
    training/data/test-venv/bin/pip install -r training/mining/test-requirements.txt
    python training/mine_failures.py                          # every Python repository not done yet (~30 min)
    python training/mine_failures.py --only attrs-git --again  # one repository again
    python training/mine_failures.py --requery                # the queries' text again, the tests not run again
    python training/mine_failures.py --requery --titles subject  # ... titled by the fix's subject
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from grepgraph.retrievers.parse.chunking import parse_file  # noqa: E402
from mining.commits import git  # noqa: E402
from mining.common import DATA, FAILING, MANIFEST_FILE, QUERIES, read_json, say, write_jsonl  # noqa: E402
from mining.failing_tests import failing_test, report_title  # noqa: E402
from mining.registries import ensure_repository  # noqa: E402

TEST_PYTHON = DATA / "test-venv" / "bin" / "python"
# The failing test's lines shown at most (a report's snippet is short).
MAX_TEST_LINES = 30
# A report's title: what the failing test says about itself, or the fix commit's subject (see the docstring).
TITLES = ("test", "subject")


def test_source(git_dir: Path, commit: str, node: str) -> tuple[str, str]:
    """The failing test's source at the fix commit (``path::Class::test[params]``), cut, and its docstring."""
    path, *names = node.split("::")
    symbol = ".".join([*names[:-1], names[-1].split("[", 1)[0]])
    source = git(git_dir, "show", f"{commit}:{path}")
    for chunk in parse_file(path, source, "python").chunks:
        if chunk.symbol == symbol:
            lines = source.splitlines()[chunk.start_line - 1:chunk.end_line][:MAX_TEST_LINES]
            return "\n".join(lines), chunk.docstring
    return "", ""


def issue_text(title: str, source: str, traceback: str) -> str:
    """A report of the failure: its title, the failing code, the traceback."""
    return "\n\n".join(part for part in (title, source, traceback) if part)


def requery(record: dict, git_dir: Path, titles: str = "test") -> dict:
    """A failing-test query with its text made again from its fields (``titles``: one of :data:`TITLES`)."""
    source, docstring = test_source(git_dir, record["fix_commit"], record["test"])
    title = (record["message"].split("\n", 1)[0] if titles == "subject"
             else report_title(record["test"], source, docstring))
    return {**record, "query": issue_text(title, source, record["traceback"])}


def mine(record: dict, python: Path, titles: str) -> list[dict]:
    """The failing-test queries of one repository's commit queries."""
    lines = [json.loads(line) for line in (QUERIES / "by_package" / f"{record['name']}.jsonl").read_text().splitlines()]
    git_dir = ensure_repository(record["repo"])
    found = []
    for query in lines:
        if query["kind"] != "commit_message":
            continue
        failing = failing_test(git_dir, query["corpus"]["commit"], query["fix_commit"], python)
        if failing is None:
            continue
        found.append(requery({**query, "id": query["id"].replace("commit_message", "failing_test"),
                              "kind": "failing_test", "message": query["query"], "test": failing.node,
                              "traceback": failing.traceback}, git_dir, titles))
    return found


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated repository names")
    parser.add_argument("--again", action="store_true", help="mine the repositories already done too")
    parser.add_argument("--requery", action="store_true",
                        help="write the mined queries' text again from their fields (no test is run)")
    parser.add_argument("--titles", choices=TITLES, default="test",
                        help="a report's title: the fix commit's subject, or what the failing test says about itself")
    parser.add_argument("--python", type=Path, default=TEST_PYTHON, help="the interpreter the tests run with")
    args = parser.parse_args()
    records = [record for record in read_json(MANIFEST_FILE)["repositories"] if record["language"] == "python"
               and (QUERIES / "by_package" / f"{record['name']}.jsonl").exists()]
    if args.only:
        records = [record for record in records if record["name"] in args.only.split(",")]
    for record in records:
        target = QUERIES / "by_package" / f"{record['name']}{FAILING}.jsonl"
        if args.requery:
            if target.exists():
                git_dir = ensure_repository(record["repo"])
                lines = [requery(json.loads(line), git_dir, args.titles) for line in target.read_text().splitlines()]
                write_jsonl(target, lines)
            continue
        if target.exists() and not args.again:
            continue
        started = time.perf_counter()
        found = mine(record, args.python, args.titles)
        write_jsonl(target, found)
        say(f"{record['name']:<20} {record['split']:<10} {len(found)} failing tests "
            f"({time.perf_counter() - started:.0f}s)")


if __name__ == "__main__":
    main()
