"""How current an index is: the git commit it was built at, and the files changed since.

``grepgraph index`` records the repository's ``HEAD`` with every run; a status compares the working
tree with the index's file table (stat first, hashing only what stat can't rule out, as indexing does),
so a branch switch or an edit shows up as changed files instead of a silent "fresh".
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from .git import safe_git_command
from .scan import scan_changes

GIT_TIMEOUT_S = 5.0
# Changed paths listed by name in a status; the rest are counted.
LISTED_CHANGES = 20


def git_head(repo: Path) -> dict:
    """``{"commit": short hash, "branch": name}`` of the repository's HEAD (``{}``: not a git work tree)."""
    try:
        commit = _git(repo, "rev-parse", "--short", "HEAD")
    except (OSError, subprocess.SubprocessError):
        return {}
    if not commit:
        return {}
    try:
        branch = _git(repo, "symbolic-ref", "--short", "-q", "HEAD")
    except (OSError, subprocess.SubprocessError):
        branch = ""
    return {"commit": commit, "branch": branch}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(safe_git_command(repo, *args), capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
                          check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def record_git_head(connection: sqlite3.Connection, repo: Path) -> None:
    """Remember the HEAD the index now reflects (the working tree at that commit, edits included)."""
    connection.execute("INSERT OR REPLACE INTO meta VALUES ('git_head', ?)", (json.dumps(git_head(repo)),))
    connection.commit()


def recorded_git_head(connection: sqlite3.Connection) -> dict:
    """The HEAD recorded by the last index run (``{}``: none, or not a git repository)."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'git_head'").fetchone()
    try:
        return json.loads(row[0]) if row else {}
    except ValueError:
        return {}


def changes_since_index(connection: sqlite3.Connection, repo: Path, max_file_bytes: int) -> dict:
    """Files added, changed or removed in the working tree since the index was last updated."""
    known = {row[0]: row[1:] for row in connection.execute("SELECT path, hash, size, mtime_ns FROM files")}
    scan = scan_changes(repo, max_file_bytes, known, lambda phase, done, total: None)
    added = sorted(source.path for source, *_ in scan.changed if source.path not in known)
    modified = sorted(source.path for source, *_ in scan.changed if source.path in known)
    removed = sorted(scan.removed)
    every = added + modified + removed
    return {"count": len(every), "added": len(added), "modified": len(modified), "removed": len(removed),
            "paths": every[:LISTED_CHANGES]}


def freshness(connection: sqlite3.Connection, repo: Path, max_file_bytes: int) -> dict:
    """The commit the index reflects, the HEAD now, and what changed since."""
    return {"indexed_commit": recorded_git_head(connection), "head": git_head(repo),
            "changed_since_index": changes_since_index(connection, repo, max_file_bytes)}
