"""What an index reports of itself: counts, embedded views, pending vectors, settings and versions.

:meth:`~retrievers.store.index.CodeIndex.status` answers with :func:`index_status`; ``grepgraph status``,
MCP and ``/health`` add freshness and the service's state to it (``grepgraph/status.py``).
"""

from __future__ import annotations

import json
from contextlib import closing
from typing import TYPE_CHECKING

from ..core.index_settings import IndexSettings
from ..dense.embeddings import query_model_for
from ..dense.sync import count_pending_vectors
from .database import same_fingerprint

if TYPE_CHECKING:
    from .index import CodeIndex


def index_status(index: CodeIndex) -> dict:
    """Counts, settings, versions and freshness of the index."""
    index.require()
    with closing(index.connect()) as connection:
        meta = dict(connection.execute("SELECT key, value FROM meta"))
        count = connection.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        views = index.views(count)
        return {
            "repo": str(index.repo),
            "index_dir": str(index.index_dir),
            "files": connection.execute("SELECT COUNT(*) FROM files").fetchone()[0],
            "chunks": count,
            "test_chunks": connection.execute("SELECT COUNT(*) FROM chunks WHERE is_test").fetchone()[0],
            "edges": connection.execute("SELECT COUNT(*) FROM edges").fetchone()[0],
            "languages": dict(connection.execute("SELECT language, COUNT(*) FROM files GROUP BY language")),
            "views": list(views),
            "vectors_pending": {view: count_pending_vectors(connection, view, tests)
                                for view, tests in index.test_views(count).items()},
            "test_vectors": index.embeds_tests(count),
            **settings_status(index, json.loads(meta.get("settings", "{}"))),
            "chroma_url": meta.get("chroma_url", ""),
            "versions": json.loads(meta.get("versions", "{}")),
            "updated_at": float(meta.get("updated_at", 0)),
        }


def settings_status(index: CodeIndex, stored: dict) -> dict:
    """The stored settings, and what the next update would change (environment, grepgraph.toml, explicit).

    ``settings_match`` is false when that change rebuilds the index.
    """
    built = index.stored_settings() or IndexSettings()
    upcoming, sources = index.upcoming_settings()
    changes = {name: {"now": getattr(built, name), "next": value, "from": sources[name]}
               for name, value in upcoming.to_dict().items() if value != getattr(built, name)}
    settings = {**built.to_dict(), **stored}
    return {"settings": settings, "query_embedding": query_model_for(settings["embedding_model"]),
            "settings_match": same_fingerprint(stored, upcoming),
            "settings_changes": changes}
