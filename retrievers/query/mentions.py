"""Which indexed files the paths a query mentions name, looked up by file name rather than searched for.

A mention (``File "/home/me/proj/requests/sessions.py"``, ``src/app.py``) names the indexed files whose paths end
with the longest run of its trailing parts that any path ends with, up to :data:`MAX_SUFFIX_PARTS`; a bare file
name counts only when few files carry it. Comparing each mention with every indexed path took seconds for a
query full of paths on a large repository; here the candidates are the paths that share its last two parts.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

MAX_SUFFIX_PARTS = 6
# A bare file name (``utils.py``) names its files only when there are at most this many.
MAX_NAME_ONLY_FILES = 3


class PathNames:
    """The indexed paths by file name and by their last two parts, built once per snapshot."""

    def __init__(self, paths: Iterable[str]) -> None:
        """Index ``paths`` (repository-relative, ``/`` between parts)."""
        self._by_name: dict[str, list[str]] = {}
        self._by_tail: dict[str, list[str]] = {}
        for path in paths:
            head, _, name = path.rpartition("/")
            self._by_name.setdefault(name, []).append(path)
            if head:
                self._by_tail.setdefault(f"{head.rpartition('/')[2]}/{name}", []).append(path)

    def named_by(self, mention: str) -> list[str]:
        """The indexed files ``mention`` names (none when it names no file, or a common bare name)."""
        parts = PurePosixPath(mention).parts
        if not parts:
            return []
        if len(parts) > 1:
            candidates = self._by_tail.get(f"{parts[-2]}/{parts[-1]}", [])
            # Match the longest repository-relative suffix of the mentioned path.
            for width in range(min(len(parts), MAX_SUFFIX_PARTS), 1, -1):
                suffix = "/".join(parts[-width:])
                hits = [path for path in candidates if path == suffix or path.endswith("/" + suffix)]
                if hits:
                    return hits
        hits = self._by_name.get(parts[-1], [])
        return list(hits) if len(hits) <= MAX_NAME_ONLY_FILES else []

    def files_mentioned(self, mentions: Iterable[str]) -> set[str]:
        """Every indexed file some mention names."""
        return {path for mention in mentions for path in self.named_by(mention)}
