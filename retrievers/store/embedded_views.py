"""Which vectors an index embeds: its views (card, raw code) and whether test chunks get them.

The settings choose (``views``, ``embed_tests``); under ``auto`` the index's size decides.
"""

from __future__ import annotations

from ..core.index_settings import IndexSettings

# The raw-code view costs ~2x the card view to embed; above this many chunks the
# default ("auto") embeds cards only, to keep a full index of a large repository
# within minutes on a laptop CPU.
AUTO_CODE_VIEW_MAX_CHUNKS = 25_000
# Likewise test files: search demotes them anyway, and in large repositories they are
# most of the code (73% of the CPython standard library's chunks). Above this many
# chunks "auto" leaves them to BM25 and symbol search.
AUTO_TEST_VECTORS_MAX_CHUNKS = 25_000
# Below that, "auto" gives a test chunk its card vector but not its raw-code one (mostly calls and literals):
# the docstring, multi-language and issue rulers ranked every query the same without them, and the docstring
# packages needed 15-35% fewer vectors (BENCHMARKS.md, "What a test file gets embedded").


def embedded_views(settings: IndexSettings, chunk_count: int) -> tuple[str, ...]:
    """The embedded views for an index of ``chunk_count`` chunks."""
    if settings.views == "card":
        return ("card",)
    if settings.views == "card+code":
        return ("card", "code")
    return ("card", "code") if chunk_count <= AUTO_CODE_VIEW_MAX_CHUNKS else ("card",)


def embeds_tests(settings: IndexSettings, chunk_count: int, view: str = "card") -> bool:
    """Whether test-file chunks get a ``view`` vector in an index of ``chunk_count`` chunks."""
    if settings.embed_tests in ("always", "never"):
        return settings.embed_tests == "always"
    return chunk_count <= AUTO_TEST_VECTORS_MAX_CHUNKS and view == "card"
