"""Running git on a repository without running any of the repository's own programs."""

from __future__ import annotations

from pathlib import Path


def safe_git_command(work_dir: Path, *args: str) -> list[str]:
    """A git command line that runs none of the repository's programs (fsmonitor, hooks, pager) and takes no lock.

    A repository unpacked from an archive can carry its own ``.git/config``; ``core.fsmonitor`` there would
    otherwise run a command of its choosing on a status or a list of files.
    """
    return ["git", "-C", str(work_dir), "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
            "-c", "core.pager=cat", "--no-optional-locks", *args]
