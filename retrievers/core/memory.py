"""Handing freed memory back to the system, for processes that stay up (the service, ``serve``, MCP)."""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

# glibc's mallopt parameter for the number of malloc arenas.
_M_ARENA_MAX = -8
# Arenas a long-running process may use. glibc gives a thread that starts allocating an arena of its own (up to
# 8 per core), and what an arena's threads free in pieces stays with that arena, out of a trim's reach: a
# service whose request, watcher and Chroma threads take turns grew with every re-index. With two, the service
# over 500 re-indexes grew +25.6 MB, all in the first 50, instead of +89.8 MB and rising (BENCHMARKS.md).
LONG_RUNNING_ARENAS = 2


def return_freed_memory() -> None:
    """Give the C heap's free pages back to the system (glibc only; elsewhere nothing to do).

    Chroma's native threads allocate from their own malloc arenas, which keep what a stopped
    database freed, and a closed index generation frees many small blocks the heap keeps: without a
    trim a service re-indexing all day grows by a fraction of a megabyte each time.
    """
    trim = _glibc_function("malloc_trim")
    if trim is not None:
        trim(0)


def limit_malloc_arenas(arenas: int = LONG_RUNNING_ARENAS) -> None:
    """Cap glibc's malloc arenas for the rest of this process (call before its threads start).

    Elsewhere (musl, macOS) there is no such setting and nothing is done.
    """
    mallopt = _glibc_function("mallopt")
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, arenas)


@functools.cache
def _glibc_function(name: str) -> Callable[..., int] | None:
    try:
        return getattr(ctypes.CDLL(None), name)  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not glibc (musl, macOS)
        return None
