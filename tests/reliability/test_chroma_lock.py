"""Chroma's embedded database is written by one process and loaded by others only in turn (real Chroma).

A process that loaded a collection's graph while another saved it could crash; writes and loads take the
database's lock file. Here the test holds that lock, as a writer in another process would, and checks that a
load and a write wait for it and then go through.
"""

import fcntl
import threading
from pathlib import Path

from tests.given_vectors import given_store, random_vectors

NAMESPACE = "gg-locked"
# Long enough for an unguarded open and load of this small collection to finish (it takes well under a second).
STILL_WAITING_S = 2.0


def held_by_another_writer(lock_path: Path):
    """The lock file held as an indexer in another process holds it during a write (its own open file)."""
    handle = open(lock_path, "a")
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def run_in_thread(work) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # noqa: BLE001 - reported by the test
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def test_a_load_waits_for_a_write_in_progress(tmp_path: Path) -> None:
    chroma_dir = tmp_path / "chroma"
    writer = given_store(chroma_dir, NAMESPACE)
    writer.add("card", [f"key-{i}" for i in range(600)], random_vectors(600, seed=0))
    writer.client.close()
    assert writer.client.lock_path == tmp_path / "chroma.lock"

    holder = held_by_another_writer(tmp_path / "chroma.lock")
    thread, outcome = run_in_thread(lambda: given_store(chroma_dir, NAMESPACE))
    thread.join(STILL_WAITING_S)
    assert thread.is_alive(), "the collection was opened and loaded while a write held the lock"
    holder.close()
    thread.join(60)
    assert "error" not in outcome
    reader = outcome["value"]
    assert list(reader.query("card", random_vectors(600, seed=0)[7], 1)) == ["key-7"]
    reader.client.close()


def test_a_write_waits_for_a_load_in_progress(tmp_path: Path) -> None:
    chroma_dir = tmp_path / "chroma"
    writer = given_store(chroma_dir, NAMESPACE)
    holder = held_by_another_writer(tmp_path / "chroma.lock")
    thread, outcome = run_in_thread(lambda: writer.add("card", ["late"], random_vectors(1, seed=3)))
    thread.join(STILL_WAITING_S)
    assert thread.is_alive(), "Chroma was written while another process held the lock"
    holder.close()
    thread.join(60)
    assert "error" not in outcome
    assert writer.missing("card", ["late"]) == set()
    writer.client.close()
