"""Whose index is this? An index folder is read only if this user made it here, on this machine.

A repository can ship a ``.grepgraph/`` folder of its own: its SQLite file, its BM25 segments and its Chroma
folder (which holds pickles) would then be read on the first search. So every index folder grepgraph makes
carries a mark, ``trust.json``: an HMAC, under a key that lives in the user's own configuration folder (outside
every repository), of the user's id and a random nonce. A folder is trusted when it is owned by this
user, is not tracked by git, and its mark verifies; anything else is foreign and never opened (the caller uses
an index in the user's cache instead, see :func:`index_location`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..core.index_settings import INDEX_DIRNAME
from ..core.settings import user_cache_dir, user_config_dir
from ..source.git import safe_git_command

log = logging.getLogger("grepgraph.trust")  # said at every verbosity (grepgraph/logs.py)

MARK = "trust.json"
KEY_FILE = "index.key"
MARK_MAX_BYTES = 4096
GIT_TIMEOUT_S = 5.0


def user_key() -> bytes:
    """This user's index key (32 random bytes), made once, readable by the user alone."""
    path = user_config_dir() / "grepgraph" / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return _read_key(path)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(secrets.token_bytes(32))
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    info = path.lstat()
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(f"{path} is not a file of this user's; remove it and run grepgraph again")
    key = path.read_bytes()
    if len(key) < 32:
        raise PermissionError(f"{path} is damaged; remove it and run grepgraph again")
    return key


def _mac(index_dir: Path, nonce: str) -> str:
    # Not bound to the folder's path: a repository moved with its index keeps it (and its vectors).
    message = f"grepgraph-index\0{os.getuid()}\0{nonce}".encode()
    return hmac.new(user_key(), message, hashlib.sha256).hexdigest()


def mark_as_own(index_dir: Path) -> None:
    """Write the mark that makes ``index_dir`` trusted by this user (call when creating the folder)."""
    nonce = secrets.token_hex(16)
    temporary = index_dir / f".{MARK}.{os.getpid()}"
    temporary.write_text(json.dumps({"format": 1, "nonce": nonce, "mac": _mac(index_dir, nonce)}))
    os.replace(temporary, index_dir / MARK)
    _verdicts.clear()


def own_index_dir(index_dir: Path) -> Path:
    """Make ``index_dir`` (if missing) and mark it as this user's when it holds no mark yet.

    Call only where the folder is new or already judged trusted: a foreign folder is never marked.
    """
    index_dir.mkdir(parents=True, exist_ok=True)
    if not (index_dir / MARK).exists():
        if any(entry.name != MARK for entry in index_dir.iterdir()):
            raise PermissionError(f"{index_dir} holds files grepgraph did not make; not using it as an index")
        mark_as_own(index_dir)
    return index_dir


@dataclass(frozen=True)
class Verdict:
    """Whether an index folder may be read; ``reason`` says why not, in words a user acts on."""

    trusted: bool
    reason: str = ""


NEW = Verdict(True)  # nothing there yet: ours to create
_verdicts: dict[tuple, Verdict] = {}


def verdict(index_dir: Path) -> Verdict:
    """Judge ``index_dir`` without reading anything but its mark (and only when the folder is this user's)."""
    try:
        info = index_dir.lstat()
    except (FileNotFoundError, NotADirectoryError):  # nothing there (or the "repository" is a file: said later)
        return NEW
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return Verdict(False, "it is not a plain folder")
    if info.st_uid != os.getuid():
        return Verdict(False, "it belongs to another user")
    try:
        mark = (index_dir / MARK).lstat()
    except FileNotFoundError:
        return NEW if not any(index_dir.iterdir()) else Verdict(False, "it carries no mark of yours (shipped with "
                                                                     "the repository, or made by an older grepgraph)")
    key = (str(index_dir), info.st_ino, mark.st_ino, mark.st_mtime_ns)
    if key not in _verdicts:
        _verdicts[key] = _judge(index_dir, mark)
    return _verdicts[key]


def _judge(index_dir: Path, mark: os.stat_result) -> Verdict:
    if not stat.S_ISREG(mark.st_mode) or mark.st_uid != os.getuid() or mark.st_size > MARK_MAX_BYTES:
        return Verdict(False, "its mark is not a file of yours")
    if tracked_by_git(index_dir):
        return Verdict(False, "it is tracked by git (shipped with the repository)")
    try:
        fields = json.loads((index_dir / MARK).read_text())
        nonce, mac = str(fields["nonce"]), str(fields["mac"])
    except (ValueError, KeyError, TypeError, OSError):
        return Verdict(False, "its mark is damaged")
    if not hmac.compare_digest(mac, _mac(index_dir, nonce)):
        return Verdict(False, "its mark was not made by you on this machine")
    return Verdict(True)


def tracked_by_git(path: Path) -> bool:
    """Whether git tracks any file under ``path`` (no git, or not in a work tree: no)."""
    try:
        listed = subprocess.run(
            safe_git_command(path.parent, "ls-files", "-z", "--", path.name),
            capture_output=True, timeout=GIT_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listed.returncode == 0 and bool(listed.stdout)


def cache_index_dir(repo: Path) -> Path:
    """The per-user index folder of ``repo``: ``~/.cache/grepgraph/indexes/<name>-<hash of its real path>``."""
    real = repo.expanduser().resolve()
    digest = hashlib.sha256(str(real).encode()).hexdigest()[:16]
    return user_cache_dir() / "grepgraph" / "indexes" / f"{real.name or 'root'}-{digest}"


def refusal(index_dir: Path) -> str:
    """Why ``index_dir`` is not read, and what to do, in one line."""
    return (f"{index_dir} is not an index you made on this machine ({verdict(index_dir).reason}); remove it, or "
            "leave out --index-dir to use the repository's own index")


def index_location(repo: Path) -> Path:
    """Where ``repo``'s index lives: ``<repo>/.grepgraph`` unless that folder is foreign, else the user's cache.

    A foreign folder is left as it is (it may be the repository's own content) and said so once.
    """
    in_repo = repo / INDEX_DIRNAME
    judged = verdict(in_repo)
    if judged.trusted:
        return in_repo
    elsewhere = cache_index_dir(repo)
    if in_repo not in _announced:
        _announced.add(in_repo)
        log.warning("not reading %s: %s; using the index in %s instead", in_repo, judged.reason, elsewhere)
    return elsewhere


_announced: set[Path] = set()
