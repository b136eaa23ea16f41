"""Waiting for something to happen: poll a condition under a generous deadline instead of sleeping a guess."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float = 30, interval: float = 0.05, what: str = "") -> T:
    """Call ``condition`` every ``interval`` seconds until it returns something true, and return that.

    The deadline is there so that a thing that never happens fails the test instead of hanging it; it is not
    a measurement, so make it generous (a busy machine must never reach it).

    Raises:
        AssertionError: ``condition`` still returned something false after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what or 'the condition'} did not happen within {timeout:g} s (last: {value!r})")
        time.sleep(interval)
