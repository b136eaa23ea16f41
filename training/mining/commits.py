"""Commit messages of bug fixes as queries, the definitions each fix changed as their gold.

From a repository's history (every commit reachable from its pinned head, merges left out) a commit is taken
when its subject says it fixes something ("fix", "bug", "crash", "error", "wrong", "incorrect", ...), its message
has at least six words, it changes at most five files, at least one non-test source file, and code rather than
only comments or docstrings. The changed lines of
each non-test source file are mapped, on the file as it was at the parent commit, to the innermost
definitions around them with grepgraph's own parser. The corpus of such a query is the repository at the
parent commit (``git archive <parent>``), so only its id is stored.
"""

from __future__ import annotations

import io
import random
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from grepgraph.retrievers.parse.chunking import parse_file

from .common import is_auxiliary, is_test_path, is_vendored, language_of
from .definitions import definitions

FIX_WORDS = re.compile(r"\b(fix|fixes|fixed|fixing|bug|bugs|crash|crashes|error|errors|wrong|incorrect|incorrectly|"
                       r"broken|regression|fails?|failing|exception|mistake|typo)\b", re.I)
MIN_WORDS = 6
MAX_FILES = 5
MAX_GOLD = 6
DEFINITION_KINDS = {"function", "method", "class", "struct", "interface", "trait", "enum", "type", "impl", "object"}
_TRAILERS = re.compile(r"^\(?(signed-off-by|co-authored-by|reviewed-by|acked-by|cc|change-id|pr-url|refs?|"
                       r"closes|fixes|resolves|see|backport-of|cherry picked from|git-svn-id)\b.*$", re.I | re.M)
_FOOTNOTES = re.compile(r"^\s*(\* \[[ x]\]|- \[[ x]\]).*$|^-{3,}\s*$", re.M)  # checklists, rules
_SQUASHED = re.compile(r"^\* .{0,80}$", re.M)  # a squash merge's list of its commits' subjects
_COMMENT_START = ("#", "//", "/*", "*", "--")
MAX_MESSAGE_CHARS = 4000
_NOT_FIXES = ("merge ", "revert ", "bump ", "release ", "chore(deps)", "build(deps)", "update dependency")
# Fixes of everything but the code's behaviour: style, docs, tests, CI.
_HOUSEKEEPING = re.compile(r"\b(typo|typos|lint|flake8|mypy|ruff|eslint|prettier|formatting|whitespace|docs?|readme|"
                           r"changelog|ci|test|tests|spelling|docstrings?|comments?|wording|grammar|markup|glossary)\b")


@dataclass
class CommitQuery:
    """One fix: its message, the commit and its parent, and the definitions it changed."""

    commit: str
    parent: str
    message: str
    gold: list[dict]


def unpack_tree(git_dir: Path, commit: str, out: Path) -> None:
    """The tree at ``commit`` into ``out`` (``git archive``; a failure raises ``CalledProcessError``)."""
    archive = subprocess.run(["git", "-C", str(git_dir), "archive", "--format=tar", commit],
                             capture_output=True, check=True).stdout
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as handle:
        handle.extractall(out, filter="data")


def git(git_dir: Path, *args: str) -> str:
    """The output of a git command run against a bare repository."""
    done = subprocess.run(["git", "-C", str(git_dir), *args], capture_output=True, text=True, errors="replace")
    if done.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()[-300:]}")
    return done.stdout


def clean_message(subject: str, body: str) -> str:
    """The message a user might have written: trailers, checklists and HTML comments removed."""
    body = re.sub(r"<!--.*?-->", "", body, flags=re.S)
    body = _FOOTNOTES.sub("", _TRAILERS.sub("", body))
    if len(_SQUASHED.findall(body)) >= 2:
        body = _SQUASHED.sub("", body)
    body = re.sub(r"\n\s*\n(\s*\n)+", "\n\n", body).strip()
    return (subject.strip() + ("\n\n" + body if body else ""))[:MAX_MESSAGE_CHARS]


def is_fix(subject: str, message: str) -> bool:
    """A subject naming a fix, and a message long enough to describe the problem."""
    lowered = subject.lower()
    if lowered.startswith(_NOT_FIXES):
        return False
    if _HOUSEKEEPING.search(lowered) and not re.search(r"\b(crash|bug|wrong)\b", lowered):
        return False
    return bool(FIX_WORDS.search(subject)) and len(message.split()) >= MIN_WORDS


def changed_old_lines(diff: str) -> list[int]:
    """Lines of the old file a zero-context diff touches; an insertion counts the lines around it."""
    lines = []
    for match in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", diff, re.M):
        start, count = int(match.group(1)), int(match.group(2) or 1)
        lines.extend(range(start, start + count) if count else (start, start + 1))
    return lines


def changed_lines(diff: str) -> tuple[dict[int, str], dict[int, str]]:
    """({old line: text} removed, {new line: text} added) of a zero-context diff."""
    removed, added = {}, {}
    old = new = 0
    for row in diff.splitlines():
        header = re.match(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", row)
        if header:
            old, new = int(header.group(1)), int(header.group(2))
        elif row.startswith("-") and not row.startswith("---"):
            removed[old] = row[1:]
            old += 1
        elif row.startswith("+") and not row.startswith("+++"):
            added[new] = row[1:]
            new += 1
    return removed, added


def _doc_lines(path: str, source: str) -> set[int]:
    """Lines that are doc comments or docstrings in a file version."""
    lines = set()
    for definition in definitions(path, source.encode("utf-8", "replace"), language_of(path)):
        for first, last in definition.doc.ranges if definition.doc else []:
            lines.update(range(first, last + 1))
    return lines


def changes_code(path: str, diff: str, old: str, new: str) -> bool:
    """Whether a diff changes code rather than only comments, docstrings and blank lines."""
    removed, added = changed_lines(diff)
    for rows, version in ((removed, old), (added, new)):
        doc_lines = _doc_lines(path, version) if rows and version else set()
        for number, text in rows.items():
            stripped = text.strip()
            if stripped and not stripped.startswith(_COMMENT_START) and number not in doc_lines:
                return True
    return False


def definitions_at(path: str, source: str, lines: list[int]) -> list[dict]:
    """The innermost definitions (grepgraph chunks, windows merged) that hold any of the lines."""
    language = language_of(path)
    spans: dict[tuple[str, str], list[int]] = {}
    for chunk in parse_file(path, source, language).chunks:
        if chunk.kind in DEFINITION_KINDS:
            span = spans.setdefault((chunk.symbol, chunk.kind), [chunk.start_line, chunk.end_line])
            span[0], span[1] = min(span[0], chunk.start_line), max(span[1], chunk.end_line)
    found = {}
    for line in lines:
        holding = [(end - start, symbol, kind, start, end) for (symbol, kind), (start, end) in spans.items()
                   if start <= line <= end]
        if holding:
            _, symbol, kind, start, end = min(holding)
            found[(symbol, start)] = {"path": path, "symbol": symbol, "kind": kind, "start_line": start,
                                      "end_line": end}
    return sorted(found.values(), key=lambda g: g["start_line"])


def _changed_files(git_dir: Path, parent: str, commit: str) -> list[tuple[str, str]]:
    """(status, path) of every file a commit changed against its parent (renames as their old path)."""
    out = git(git_dir, "diff", "--name-status", "--no-renames", parent, commit)
    return [(row.split("\t")[0], row.split("\t")[-1]) for row in out.splitlines() if row.strip()]


def fix_commits(git_dir: Path, head: str) -> list[tuple[str, str, str]]:
    """(commit, parent, message) of every non-merge commit whose message describes a fix."""
    log = git(git_dir, "log", "--no-merges", "--format=%H%x00%P%x00%s%x00%b%x1e", head)
    found = []
    for record in log.split("\x1e"):
        fields = record.strip("\n").split("\x00")
        if len(fields) < 4 or not fields[1]:
            continue
        commit, parents, subject, body = fields[0].strip(), fields[1].split(), fields[2], fields[3]
        message = clean_message(subject, body)
        if len(parents) == 1 and is_fix(subject, message):
            found.append((commit, parents[0], message))
    return found


def mine_repository(git_dir: Path, head: str, limit: int, seed: str) -> list[CommitQuery]:
    """At most ``limit`` bug-fix commits of one repository with the definitions they changed.

    The fixes are visited in a seeded random order, so the queries spread over the whole history.
    """
    candidates = fix_commits(git_dir, head)
    random.Random(seed).shuffle(candidates)
    found = []
    for commit, parent, message in candidates:
        parents = [parent]
        files = _changed_files(git_dir, parents[0], commit)
        sources = [(status, path) for status, path in files
                   if language_of(path) and not is_test_path(path) and not is_vendored(path)
                   and not is_auxiliary(path)]
        if not files or len(files) > MAX_FILES or not sources:
            continue
        gold = []
        for status, path in sources:
            if status.startswith("A"):
                continue  # a new file: nothing of it existed at the parent
            try:
                old = git(git_dir, "show", f"{parents[0]}:{path}")
            except RuntimeError:
                continue
            diff = git(git_dir, "diff", "-U0", parents[0], commit, "--", path)
            new = "" if status.startswith("D") else git(git_dir, "show", f"{commit}:{path}")
            if not changes_code(path, diff, old, new):
                continue
            gold.extend(g for g in definitions_at(path, old, changed_old_lines(diff))
                        if not re.search(r"(^|\.)tests?\.", g["symbol"]))
        if 1 <= len(gold) <= MAX_GOLD:
            found.append(CommitQuery(commit, parents[0], message, gold))
            if len(found) >= limit:
                break
    return found
