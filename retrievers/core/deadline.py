"""A search's deadline, passed down so that work nobody waits for any more stops at the next stage.

``grepgraph serve`` answers a request that ran out of time with a 504, but cannot stop the worker
thread searching for it. So a search carries a :class:`Deadline` (``time.time()`` seconds, a clock
every thread and process reads alike) and checks it between its stages: past it, the search raises
:class:`SearchDeadlineExceeded` and lets go of its snapshot, connection and vector store on the way out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


class SearchDeadlineExceeded(TimeoutError):
    """The search went past its deadline; the stage that noticed stopped it."""


@dataclass(frozen=True)
class Deadline:
    """When a search must have finished (``at``: ``time.time()`` seconds; ``None``: no bound)."""

    at: float | None = None

    def left(self) -> float | None:
        """Seconds until the deadline (negative once passed); ``None`` without one."""
        return None if self.at is None else self.at - time.time()

    def check(self, stage: str) -> None:
        """Raise :class:`SearchDeadlineExceeded` if the deadline has passed, before ``stage`` starts."""
        left = self.left()
        if left is not None and left <= 0:
            raise SearchDeadlineExceeded(
                f"the search ran past its deadline ({-left:.2f}s ago) and stopped before {stage}")


NO_DEADLINE = Deadline()
