"""The malloc arena cap of long-running processes, checked in a child process against glibc itself."""

from __future__ import annotations

import ctypes
import platform
import re
import subprocess
import sys

import pytest

# A child that (optionally) caps the arenas, then lets four threads allocate at once and asks glibc
# to print its arenas (``malloc_stats`` writes "Arena N:" per arena to stderr).
CHILD = """
import ctypes, sys, threading
from grepgraph.retrievers.core.memory import limit_malloc_arenas
if sys.argv[1] != "none":
    limit_malloc_arenas(int(sys.argv[1]))
started = threading.Barrier(4)
def allocate():
    started.wait()
    blocks = [bytearray(4096) for _ in range(2000)]
    started.wait()
threads = [threading.Thread(target=allocate) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
ctypes.CDLL(None).malloc_stats()
"""


def _glibc() -> bool:
    try:
        return platform.libc_ver()[0] == "glibc" and hasattr(ctypes.CDLL(None), "mallopt")
    except OSError:
        return False


def _arenas(cap: str) -> int:
    done = subprocess.run([sys.executable, "-c", CHILD, cap], capture_output=True, text=True, check=True, timeout=60)
    return len(re.findall(r"^Arena \d+:", done.stderr, flags=re.MULTILINE))


@pytest.mark.skipif(not _glibc(), reason="malloc arenas are glibc's")
def test_arena_cap_holds_the_threads_of_a_process_to_that_many_arenas():
    assert _arenas("none") > 2  # each thread that starts allocating gets an arena of its own
    assert _arenas("2") == 2
    assert _arenas("1") == 1
