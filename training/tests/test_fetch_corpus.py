"""A failed download keeps the manifest's pinned record, so the splits and the pins never shift."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fetch_corpus import assign_splits, attempt  # noqa: E402
from mining.registries import FetchError  # noqa: E402

PINNED = {"name": "somelib", "registry": "debian", "version": "1.0-1", "sha256": "ab" * 32, "split": "train"}


def unreachable(entry: dict, pinned: dict) -> dict:
    """A registry that no longer has the version (as Debian after a security update, or a stale package list)."""
    raise FetchError(f"no .deb of {entry['name']}={entry['version']} after apt-get download")


def test_a_failed_fetch_keeps_the_pinned_record_and_is_reported():
    """The manifest keeps the entry as pinned (so the splits stay); the run still fails, naming it."""
    failures: list[str] = []
    record = attempt(unreachable, {"name": "somelib", "registry": "debian", "version": "1.0-1"},
                     {"somelib": PINNED}, failures)
    assert record == PINNED
    assert failures == ["somelib"]


def test_a_failed_first_fetch_has_no_record():
    """Nothing was pinned before: nothing to keep."""
    failures: list[str] = []
    assert attempt(unreachable, {"name": "newlib", "registry": "pypi", "version": "2.0"}, {}, failures) is None
    assert failures == ["newlib"]


def test_a_fetch_that_works_makes_a_new_record():
    """A download that works replaces the old record with the new one."""
    made = attempt(lambda entry, pinned: {**entry, "files": 3}, {"name": "somelib"}, {"somelib": PINNED}, [])
    assert made == {"name": "somelib", "files": 3}


def test_projects_added_later_join_train_and_the_others_keep_their_side():
    """A new draw over more projects would move some the models trained on into validation; the old sides stay."""
    projects = {f"lib{number}": "python" for number in range(10)}
    first = assign_splits(projects, seed=0, share=0.2)
    assert sorted(first.values()).count("validation") == 2
    grown = {**projects, **{f"new{number}": "python" for number in range(10)}}
    again = assign_splits(grown, seed=0, share=0.2, assigned=first)
    assert {name: again[name] for name in projects} == first
    assert {again[f"new{number}"] for number in range(10)} == {"train"}
