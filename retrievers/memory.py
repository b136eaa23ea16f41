"""Handing freed memory back to the system, for processes that stay up (the service, ``serve``, MCP)."""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


def return_freed_memory() -> None:
    """Give the C heap's free pages back to the system (glibc only; elsewhere nothing to do).

    Chroma's native threads allocate from their own malloc arenas, which keep what a stopped
    database freed, and a closed index generation frees many small blocks the heap keeps: without a
    trim a service re-indexing all day grows by a fraction of a megabyte each time.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not glibc (musl, macOS)
        return None
