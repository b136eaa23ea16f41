"""Re-score a ruler's results files counting the gold definition itself only.

    python benchmarks/definition_hits.py --bench BENCH benchmarks/results/docstring-*.jsonl

The rulers' scorer counts a result as a hit when its lines overlap the gold's (or it names the gold). grepgraph
reports a class with its methods' lines and a module chunk from its first to its last top-level line, so a class
or a module around the gold is a hit too, and a ranking can score by showing containers. This prints, per results
file (``quality.py --out`` writes one per method) and package, MRR@10 by the rulers' rule and by the definition's
own: a result that names the gold, or overlaps it without holding the whole gold definition (``node_end_line``)
inside a longer span.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

K = 10


def is_hit(result: dict, gold: dict, definition_only: bool) -> bool:
    """The rulers' hit rule, or (``definition_only``) the same without a container around the gold."""
    if result.get("path") != gold["path"]:
        return False
    symbol = result.get("symbol") or ""
    if symbol in (gold["symbol"], gold["symbol"].split(".")[-1]):
        return True
    start, end = int(result["start_line"]), int(result["end_line"])
    if not (start <= gold["end_line"] and end >= gold["start_line"]):
        return False
    if not definition_only:
        return True
    gold_end = gold.get("node_end_line", gold["end_line"])
    holds_it = start <= gold["start_line"] and end >= gold_end and end - start > gold_end - gold["start_line"]
    return not holds_it


def scores(results: Path, golds: dict[str, dict], definition_only: bool, by_kind: bool = False) -> dict[str, float]:
    """MRR@10 per package (or per kind of gold definition) and over all queries of one results file."""
    reciprocal: dict[str, list[float]] = defaultdict(list)
    for line in results.read_text().splitlines():
        answer = json.loads(line)
        query = golds[answer["id"]]
        rank = next((rank for rank, result in enumerate(answer["results"][:K], start=1)
                     if is_hit(result, query["gold"], definition_only)), 0)
        group = query["gold"].get("kind", "") if by_kind else query.get("package", "")
        reciprocal[group].append(1.0 / rank if rank else 0.0)
    found = {package: sum(values) / len(values) for package, values in sorted(reciprocal.items())}
    found["all"] = sum(map(sum, reciprocal.values())) / sum(map(len, reciprocal.values()))
    return found


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, required=True, help="the ruler's folder (its queries.jsonl)")
    parser.add_argument("results", type=Path, nargs="+", help="results files written by quality.py --out")
    parser.add_argument("--by-kind", action="store_true", help="per kind of gold definition instead of per package")
    args = parser.parse_args()
    golds = {query["id"]: query for query in map(json.loads, (args.bench / "queries.jsonl").read_text().splitlines())}
    for results in args.results:
        for definition_only in (False, True):
            found = scores(results, golds, definition_only, args.by_kind)
            rule = "definition" if definition_only else "rulers'"
            print(f"{results.name:<32} {rule:<10} all {found.pop('all'):.3f}  "
                  + "  ".join(f"{package} {value:.3f}" for package, value in found.items()))


if __name__ == "__main__":
    main()
