"""A search run's deadline: when it is, how much time is left, and stopping once it has passed.

A run given ``run_timeout_s`` (``grepgraph serve`` gives each request what is left of its own
timeout) keeps its deadline in the state as ``time.time()`` seconds, a clock every thread and
process reads alike. Synchronous nodes run in worker threads that a cancelled caller cannot
stop, so each node checks the deadline before its work and stops the run once it has passed,
and an LLM call is cut (and its HTTP request cancelled) when the deadline comes first.
"""

from __future__ import annotations

import time

# The searcher checks the same deadline between its stages and raises the same exception.
from grepgraph.retrievers.core.deadline import SearchDeadlineExceeded


def deadline_after(timeout_s: float) -> float | None:
    """The deadline ``timeout_s`` from now; ``None`` (no bound) for 0 or less."""
    return time.time() + timeout_s if timeout_s > 0 else None


def time_left(deadline: float | None) -> float | None:
    """Seconds until ``deadline`` (negative once passed); ``None`` without a deadline."""
    return None if deadline is None else deadline - time.time()


def stop_if_late(deadline: float | None, node: str) -> None:
    """Raise :class:`SearchDeadlineExceeded` if ``deadline`` has passed, before ``node`` does its work."""
    left = time_left(deadline)
    if left is not None and left <= 0:
        raise SearchDeadlineExceeded(f"the search ran past its deadline ({-left:.2f}s ago) and stopped before {node}")
