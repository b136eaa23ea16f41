"""A machine-wide cache of embedded texts, shared by every index on the machine.

Vectors are content-addressed (model + text), so a second clone, a worktree, another
branch or the next release of a project re-uses what was embedded before instead of
paying ~10 ms per chunk again. One SQLite file per user; ``GREPGRAPH_EMBEDDING_CACHE``
moves it, ``off`` disables it.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..core.settings import embedding_cache_setting, user_cache_dir

log = logging.getLogger(__name__)


def default_cache_path() -> Path | None:
    """``$GREPGRAPH_EMBEDDING_CACHE``, else ``$XDG_CACHE_HOME/grepgraph/embeddings.sqlite``; None when off."""
    configured = embedding_cache_setting()
    if configured.lower() in ("off", "0", "false", "none"):
        return None
    if configured:
        return Path(configured).expanduser()
    return user_cache_dir() / "grepgraph" / "embeddings.sqlite"


class EmbeddingCache:
    """``key -> float32 vector`` in one SQLite table; failures degrade to cache misses."""

    def __init__(self, path: Path) -> None:  # noqa: D107
        path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self._lock = threading.Lock()

    @classmethod
    def open_default(cls) -> EmbeddingCache | None:
        """The user's cache, or None when disabled or not writable."""
        path = default_cache_path()
        if path is None:
            return None
        try:
            return cls(path)
        except (OSError, sqlite3.Error) as error:
            log.warning("embedding cache %s unusable (%s); embedding without it", path, error)
            return None

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for the keys that have one."""
        found: dict[str, np.ndarray] = {}
        try:
            with self._lock:
                for start in range(0, len(keys), 500):
                    batch = list(keys[start : start + 500])
                    marks = ",".join("?" * len(batch))
                    for key, blob in self._connection.execute(
                        f"SELECT key, vector FROM vectors WHERE key IN ({marks})", batch  # noqa: S608
                    ):
                        found[key] = np.frombuffer(blob, dtype=np.float32)
        except sqlite3.Error as error:
            log.warning("embedding cache read failed (%s); embedding %d texts again", error, len(keys))
            return {}
        return found

    def put_many(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Remember vectors (best effort)."""
        try:
            with self._lock:
                self._connection.executemany(
                    "INSERT OR IGNORE INTO vectors VALUES (?, ?)",
                    [(key, np.asarray(vector, dtype=np.float32).tobytes()) for key, vector in zip(keys, vectors)],
                )
                self._connection.commit()
        except sqlite3.Error as error:
            log.warning("embedding cache write failed (%s); %d vectors not cached", error, len(keys))
