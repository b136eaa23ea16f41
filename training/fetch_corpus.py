#!/usr/bin/env python3
"""Fetch every package of ``packages.json`` into ``data/source/`` and write ``manifest.json``.

Each package comes through its registry's ordinary client (pip, npm, apt-get; git for the repositories whose
commit histories give the commit queries). Every name is checked against the evaluation packages
(``excluded.py``) and refused when it matches; the licence is read from the downloaded metadata and a package
that is not permissive is dropped. The manifest pins versions, archive sha256s, the repositories' commit ids and
the train/validation split (by project, fixed seed, every language in both).

    python training/fetch_corpus.py                 # everything (archives are cached in data/archives/)
    python training/fetch_corpus.py --only attrs    # one package (the manifest keeps the others' entries)
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mining import licences  # noqa: E402
from mining.common import (  # noqa: E402
    LANGUAGES,
    MANIFEST_FILE,
    PACKAGES_FILE,
    is_excluded,
    read_json,
    say,
    sha256_of,
    source_dir,
    write_json,
)
from mining.registries import FetchError, download, ensure_repository, unpack  # noqa: E402


def names_to_check(entry: dict) -> list[str]:
    """Every name a package or repository goes by: ours, the registry's, the project's, upstream's."""
    names = [entry["name"], entry.get("package", ""), entry.get("project", ""), entry.get("repo", "")]
    names += entry.get("upstream", [])
    return [n for n in names if n]


def assign_splits(projects: dict[str, str], seed: int, share: float,
                  assigned: dict[str, str] | None = None) -> dict[str, str]:
    """train/validation per project: per language, a seeded shuffle puts ~share of the projects in validation.

    Every language gets at least one project on each side when it has two or more. ``assigned``: the sides of an
    earlier manifest's projects, which they keep; a project added since joins train, so the validation packages
    stay the ones every earlier figure was measured on (a new draw would move projects the models trained on
    into validation).
    """
    if assigned:
        return {project: assigned.get(project, "train") for project in projects}
    split = {}
    for language in LANGUAGES:
        names = sorted(p for p, lang in projects.items() if lang == language)
        random.Random(f"{seed}-{language}").shuffle(names)
        count = max(1, round(share * len(names))) if len(names) > 1 else 0
        for index, name in enumerate(names):
            split[name] = "validation" if index < count else "train"
    return split


def fetch_package(entry: dict, pinned: dict) -> dict:
    """Download, unpack and verify one package; its manifest record (``dropped`` set when refused)."""
    record = {key: entry[key] for key in ("name", "registry", "package", "version", "language") if key in entry}
    record["project"] = entry.get("project", entry["name"])
    for key in ("repo", "tag", "inner_archive", "root", "include", "exclude"):
        if key in entry:
            record[key] = entry[key]
    excluded = [n for n in names_to_check(entry) if is_excluded(n)]
    if excluded:
        record["dropped"] = "excluded: evaluated on"
        return record
    entry = dict(entry)
    if pinned.get("version") == entry["version"] and pinned.get("sha256"):
        entry["sha256"] = pinned["sha256"]
    if pinned.get("version") == entry["version"] and pinned.get("commit"):
        entry["commit"] = pinned["commit"]
    archive = download(entry)
    dest = source_dir(entry)
    dest.parent.mkdir(parents=True, exist_ok=True)
    licence, count = unpack(entry, archive, dest)
    if "commit" in entry:
        record["commit"] = entry["commit"]
    record.update(archive=archive.name, sha256=sha256_of(archive), licence=licence or "unknown", files=count)
    declared = entry.get("licence")
    if declared and licence and not licences.is_permissive(licence):
        licence = ""
    if not licence and declared:  # a git tree's LICENSE file not recognised: the entry says what it is
        record["licence"] = licences.canonical(declared)
    if not licences.is_permissive(record["licence"]):
        shutil.rmtree(dest, ignore_errors=True)
        record["dropped"] = f"licence not permissive: {record['licence']}"
    return record


def repository_record(entry: dict, pinned: dict) -> dict:
    """A commit-history repository: checked, brought in, its head commit pinned on first sight."""
    record = {"name": entry["name"], "registry": "github", "repo": entry["repo"], "language": entry["language"],
              "project": entry.get("project", entry["name"])}
    if any(is_excluded(n) for n in names_to_check(entry)):
        record["dropped"] = "excluded: evaluated on"
        return record
    git_dir = ensure_repository(entry["repo"])
    head = pinned.get("commit") or subprocess.run(["git", "-C", str(git_dir), "rev-parse", "HEAD"],
                                                  capture_output=True, text=True, check=True).stdout.strip()
    record.update(commit=head, licence=licences.canonical(entry.get("licence", "unknown")))
    if not licences.is_permissive(record["licence"]):
        record["dropped"] = f"licence not permissive: {record['licence']}"
    return record


def attempt(make_record: Callable[[dict, dict], dict], entry: dict, old: dict, failures: list[str]) -> dict | None:
    """One entry's manifest record (given its previous one); after a failure, the previous record, if any.

    A failed download keeps what the manifest pinned: dropping the entry would move other projects between the
    splits (they are drawn over the projects present) and lose its pins.
    """
    try:
        return make_record(entry, old.get(entry["name"], {}))
    except (FetchError, OSError, subprocess.CalledProcessError) as error:
        failures.append(entry["name"])
        hint = " (apt-get update first?)" if entry.get("registry") == "debian" else ""
        say(f"FAILED {entry['name']}: {error}{hint}")
        return old.get(entry["name"])


def main() -> None:
    """Fetch the packages, check the repositories, write the manifest."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=None, help="fetch only these package names")
    args = parser.parse_args()
    config = read_json(PACKAGES_FILE)
    previous = read_json(MANIFEST_FILE) if MANIFEST_FILE.exists() else {}
    old = {r["name"]: r for r in previous.get("packages", []) + previous.get("repositories", [])}
    records, failures = [], []
    for entry in config["packages"]:
        if args.only is not None and entry["name"] not in args.only:
            if entry["name"] in old:
                records.append(old[entry["name"]])
            continue
        record = attempt(fetch_package, entry, old, failures)
        if record is None:
            continue
        records.append(record)
        say(f"{record['name']:28} {record['language']:10} {record['version']:24} "
            f"{record.get('licence', '-'):28} {record.get('files', 0):5} files {record.get('dropped', '')}")
    repositories = []
    for entry in config.get("repositories", []):
        record = attempt(repository_record, entry, old, failures)
        if record is None:
            continue
        repositories.append(record)
        say(f"{record['name']:28} {record['language']:10} {record['repo']:40} {record.get('commit', '')[:12]} "
            f"{record.get('dropped', '')}")
    kept = [r for r in records + repositories if "dropped" not in r]
    projects = {}
    for record in kept:
        projects.setdefault(record["project"], record["language"])
    assigned = {r["project"]: r["split"] for r in old.values() if "split" in r}
    split = assign_splits(projects, config.get("seed", 0), config.get("validation_share", 0.2), assigned)
    for record in records + repositories:
        if "dropped" not in record:
            record["split"] = split[record["project"]]
    write_json(MANIFEST_FILE, {"seed": config.get("seed", 0), "validation_share": config.get("validation_share", 0.2),
                               "packages": records, "repositories": repositories})
    for language in LANGUAGES:
        sides = [r["split"] for r in kept if r["language"] == language]
        say(f"{language:10} train {sides.count('train'):3}  validation {sides.count('validation'):3}")
    if failures:
        say(f"failed: {' '.join(failures)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
