#!/usr/bin/env python3
"""Mine training queries from every package and repository of ``manifest.json``.

Four kinds, all derived mechanically from what the projects' authors wrote:
  docstring      a doc comment's first sentence -> its definition (the comment blanked in the corpus copy)
  code_line      a line pasted from the code -> the definition it is in
  error_message  an error's message, as a user sees it -> the definition that raises it
  commit_message a bug fix's commit message -> the definitions the fix changed (corpus: the parent commit)

Output: ``data/queries/{train,validation}.jsonl``, one query per line:
``{"id", "package", "language", "kind", "query", "gold": [{"path", "symbol", "start_line", "end_line", ...}],
"corpus", "split"}``; ``corpus`` is ``corpus/<name>-<version>`` under ``data/``, or for a commit query
``{"repo", "commit"}`` (materialise it with ``python training/materialise.py``). Each package's queries are
also kept in ``data/queries/by_package/`` so ``--only`` can redo a few.

    python training/mine_queries.py                  # everything, then the table per language and kind
    python training/mine_queries.py --only attrs     # redo one package or repository, rebuild the splits
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mining.commits import mine_repository  # noqa: E402
from mining.common import (  # noqa: E402
    DATA,
    LANGUAGES,
    MANIFEST_FILE,
    QUERIES,
    corpus_dir,
    mirror_dir,
    package_id,
    read_json,
    say,
    source_dir,
    write_json,
    write_jsonl,
)
from mining.package_queries import mine_package  # noqa: E402

KINDS = ("docstring", "code_line", "error_message", "commit_message")
LIMITS = {"docstring": 800, "code_line": 150, "error_message": 150, "commit_message": 120}


def package_queries(record: dict, seed: int) -> tuple[list[dict], dict]:
    """The queries of one package, as output lines."""
    found, stats = mine_package(source_dir(record), corpus_dir(record), record["language"],
                                f"{seed}-{record['name']}", LIMITS)
    counters: dict[str, int] = defaultdict(int)
    lines = []
    for kind, query, gold, extra in found:
        lines.append({"id": f"{record['name']}-{kind}-{counters[kind]:04d}", "package": record["name"],
                      "language": record["language"], "kind": kind, "query": query, "gold": gold,
                      "corpus": f"corpus/{package_id(record)}", "split": record["split"], **extra})
        counters[kind] += 1
    stats.update({kind: counters[kind] for kind in KINDS[:3]})
    return lines, stats


def repository_queries(record: dict, seed: int) -> tuple[list[dict], dict]:
    """The commit-message queries of one repository, as output lines."""
    found = mine_repository(mirror_dir(record["repo"]), record["commit"], LIMITS["commit_message"],
                            f"{seed}-{record['name']}")
    lines = [{"id": f"{record['name']}-commit_message-{i:04d}", "package": record["name"],
              "language": record["language"], "kind": "commit_message", "query": fix.message, "gold": fix.gold,
              "corpus": {"repo": record["repo"], "commit": fix.parent}, "fix_commit": fix.commit,
              "split": record["split"]} for i, fix in enumerate(found)]
    return lines, {"commit_message": len(lines)}


def table(lines_by_source: dict[str, list[dict]]) -> list[str]:
    """Rows per language and kind: how many packages gave queries of the kind, and how many queries."""
    packages: dict[tuple[str, str], set] = defaultdict(set)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    splits: dict[tuple[str, str], int] = defaultdict(int)
    for name, lines in lines_by_source.items():
        for line in lines:
            key = (line["language"], line["kind"])
            packages[key].add(name)
            counts[key] += 1
            splits[(line["language"], line["split"])] += 1
    rows = [f"{'language':11} " + " ".join(f"{kind + ' (pkgs/queries)':>30}" for kind in KINDS)
            + f" {'train':>7} {'valid':>7}"]
    for language in LANGUAGES + ("all",):
        cells = []
        for kind in KINDS:
            keys = [(lang, kind) for lang in LANGUAGES] if language == "all" else [(language, kind)]
            cells.append(f"{sum(len(packages[k]) for k in keys):>14} / {sum(counts[k] for k in keys):>13}")
        langs = LANGUAGES if language == "all" else (language,)
        rows.append(f"{language:11} " + " ".join(f"{cell:>30}" for cell in cells)
                    + f" {sum(splits[(lg, 'train')] for lg in langs):>7}"
                    + f" {sum(splits[(lg, 'validation')] for lg in langs):>7}")
    return rows


def main() -> None:
    """Mine every package and repository (or those named), then rebuild the split files and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=None, help="mine only these packages / repositories")
    parser.add_argument("--no-commits", action="store_true", help="skip the commit histories")
    args = parser.parse_args()
    manifest = read_json(MANIFEST_FILE)
    seed = manifest.get("seed", 0)
    by_package = QUERIES / "by_package"
    by_package.mkdir(parents=True, exist_ok=True)
    stats_file = QUERIES / "stats.json"
    all_stats = read_json(stats_file) if stats_file.exists() else {}
    sources = [(r, package_queries) for r in manifest["packages"] if "dropped" not in r]
    if not args.no_commits:
        sources += [(r, repository_queries) for r in manifest["repositories"] if "dropped" not in r]
    lines_by_source = {}
    for record, mine in sources:
        cached = by_package / f"{record['name']}.jsonl"
        if args.only is None or record["name"] in args.only or not cached.exists():
            lines, stats = mine(record, seed)
            write_jsonl(cached, lines)
            all_stats[record["name"]] = stats
            say(f"{record['name']:28} {record['language']:10} " + " ".join(
                f"{key}={value}" for key, value in stats.items()))
        lines_by_source[record["name"]] = [json.loads(row) for row in cached.read_text(encoding="utf-8").splitlines()]
    for split in ("train", "validation"):
        with open(QUERIES / f"{split}.jsonl", "w", encoding="utf-8") as handle:
            for lines in lines_by_source.values():
                for line in lines:
                    if line["split"] == split:
                        handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    write_json(stats_file, all_stats)
    for row in table(lines_by_source):
        say(row)
    say(f"queries in {QUERIES.relative_to(DATA.parent)}/{{train,validation}}.jsonl")


if __name__ == "__main__":
    main()
