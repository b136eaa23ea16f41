"""Which files of a repository changed since the last index: stat first, hash only what stat can't rule out."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ..core.model import ProgressCallback
from .walk import SkippedFiles, SourceFile, generated_reason, walk_repository

# Files between two progress reports (the bar moves on a small repository too).
SCAN_PROGRESS_EVERY = 25


@dataclass
class ScanResult:
    """The repository against the files the index knows."""

    # (source file, its bytes, content hash, mtime in ns) of new or changed files
    changed: list[tuple[SourceFile, bytes, str, int]] = field(default_factory=list)
    # (path, size, mtime in ns) of files whose content is unchanged but whose stat is new
    touched: list[tuple[str, int, int]] = field(default_factory=list)
    # every indexable path found
    present: set[str] = field(default_factory=set)
    # known paths no longer present (deleted, unreadable, now ignored or generated)
    removed: list[str] = field(default_factory=list)
    # files left out, by reason (and the first few of each by name)
    skipped: SkippedFiles = field(default_factory=SkippedFiles)


def file_hash(data: bytes) -> str:
    """The content hash the index keeps per file."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def scan_changes(repo: Path, max_file_bytes: int, known: dict[str, tuple], progress: ProgressCallback) -> ScanResult:
    """Compare the repository with ``known`` (path -> (hash, size, mtime_ns)) and say what changed."""
    walk = walk_repository(repo, max_file_bytes)
    scan = ScanResult(skipped=walk.skipped)
    for number, source in enumerate(walk.files):
        if number % SCAN_PROGRESS_EVERY == 0:
            progress("scan", number, len(walk.files))
        try:
            stat = source.absolute.stat()
        except OSError:
            scan.skipped.add("unreadable", source.path)
            continue
        previous = known.get(source.path)
        if previous and previous[1] == stat.st_size and previous[2] == stat.st_mtime_ns:
            scan.present.add(source.path)
            continue
        try:
            data = source.absolute.read_bytes()
        except OSError:
            scan.skipped.add("unreadable", source.path)
            continue
        reason = generated_reason(source.absolute.name, data[:8192])
        if reason:
            scan.skipped.add(reason, source.path)
            continue
        scan.present.add(source.path)
        digest = file_hash(data)
        if previous and previous[0] == digest:
            scan.touched.append((source.path, len(data), stat.st_mtime_ns))
            continue
        scan.changed.append((source, data, digest, stat.st_mtime_ns))
    progress("scan", len(walk.files), len(walk.files))
    # Unreadable or vanished files keep no stale rows.
    scan.removed = [path for path in known if path not in scan.present]
    return scan
