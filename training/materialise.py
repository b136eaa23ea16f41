#!/usr/bin/env python3
"""Write out the corpus of a commit-message query: the repository's tree at the fix's parent commit.

Commit queries store ``{"repo", "commit"}`` rather than a copy of each tree (a thousand snapshots would take
gigabytes); this unpacks one with ``git archive`` into ``data/commits/<owner>+<name>-<commit12>/`` (or --out).

    python training/materialise.py --query <query id>          # the tree a query is searched in
    python training/materialise.py --repo owner/name --commit <sha> --out /tmp/tree
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mining.commits import unpack_tree  # noqa: E402
from mining.common import DATA, QUERIES, say  # noqa: E402
from mining.registries import ensure_repository  # noqa: E402


def materialise(repo: str, commit: str, out: Path | None = None) -> Path:
    """Unpack the repository's tree at ``commit`` (once); the folder it lies in."""
    out = out or DATA / "commits" / f"{repo.replace('/', '+')}-{commit[:12]}"
    if out.exists():
        return out
    unpack_tree(ensure_repository(repo), commit, out)
    return out


def find_query(query_id: str) -> dict:
    """A query line by id, from either split."""
    for split in ("train", "validation"):
        with open(QUERIES / f"{split}.jsonl", encoding="utf-8") as handle:
            for row in handle:
                line = json.loads(row)
                if line["id"] == query_id:
                    return line
    raise SystemExit(f"no query {query_id}")


def main() -> None:
    """Materialise the corpus of one query, or of one repository at one commit."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--query", help="a commit_message query's id")
    parser.add_argument("--repo", help="owner/name")
    parser.add_argument("--commit", help="a commit id")
    parser.add_argument("--out", type=Path, help="where to unpack (default data/commits/...)")
    args = parser.parse_args()
    if args.query:
        corpus = find_query(args.query)["corpus"]
        if not isinstance(corpus, dict):
            say(str(DATA / corpus))
            return
        repo, commit = corpus["repo"], corpus["commit"]
    elif args.repo and args.commit:
        repo, commit = args.repo, args.commit
    else:
        parser.error("give --query, or --repo and --commit")
    say(str(materialise(repo, commit, args.out)))


if __name__ == "__main__":
    main()
