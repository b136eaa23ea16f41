#!/usr/bin/env python3
"""The learned blend against the hand-set blend it replaced and BM25 on the validation packages, with intervals.

Each validation package's sampled queries and each validation history's commit queries (the ones
``features.py`` took; none was seen by the fit) are searched live through :meth:`Searcher.search` on their
index (``data/indexes/``, built by ``features.py``): ``learned`` (the weights in
``retrievers/rank/learned_blend.json``) and ``bm25`` (BM25 alone, no focus, no kind priors: the benchmarks'
baseline), beside the ``hand`` column of a run recorded while the hand-set blend still ranked
(``training/baselines/hand-<model>.json``, made at 0d44e74 with ``--json``; the same queries, checked query by
query). MRR@10 is
scored with the rulers' hit rule and printed per package, per language, per query kind and overall (the mean of
the package means), each with a 95% bootstrap interval (queries resampled within each package), with the paired
difference learned - hand; commit queries also get the issue ruler's function Acc@10 and file Acc@5. A second
table counts the gold definition itself only: the rulers' rule also takes a class or a module chunk whose lines
hold the gold (the index reports a class's lines with its methods, a module's from its first to its last
top-level line), which a blend can learn to lean on; the second rule shows how often the answer itself is found.
A third table, where ``features.py --documented`` made one, has each package's docstring queries searched among
the other definitions' kept doc comments, as the rulers build their corpora (definition rule, no hand column).

    python training/evaluate.py                                   # the recorded packages, beside the hand column
    python training/evaluate.py --no-baseline                     # every validation package with features
    python training/evaluate.py --split train                     # the training packages (fitted on!)
    python training/evaluate.py --split train --no-baseline --only a,b   # some of them (e.g. added since the fit)
    python training/evaluate.py --vectors                         # and vectors alone, what the blends add to
    python training/evaluate.py --no-baseline --without-tower     # the code models' query tower left out
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from contextlib import nullcontext
from pathlib import Path

import numpy as np

TRAINING = Path(__file__).resolve().parent
sys.path.insert(0, str(TRAINING))
sys.path.insert(0, str(TRAINING.parent))

from features import (  # noqa: E402
    DOCUMENTED_TABLE,
    EMBEDDING,
    FAILING_TABLE,
    FEATURES,
    INDEXES,
    LIMIT,
    PASTED_TABLE,
    first_hit_rank,
    is_answer,
    package_records,
    queries_without_the_tower,
    repository_records,
    sampled_queries,
    say,
)
from grepgraph.retrievers.rank.learned import blend_file, load_blend  # noqa: E402
from grepgraph.retrievers.rank.search import Searcher  # noqa: E402
from grepgraph.retrievers.store.index import CodeIndex  # noqa: E402

from benchmarks.quality import METHODS as RULER_METHODS  # noqa: E402

# BM25 and (``--vectors``) the card and code cosines alone as the dev rulers' benchmark runs them.
METHODS = {"learned": {}, "bm25": RULER_METHODS["bm25"]}
# The column a recorded run (``--baseline``) adds: the hand-set blend, which this checkout no longer has.
RECORDED = "hand"
BASELINE = TRAINING / "baselines" / f"hand-{EMBEDDING.replace(':', '_')}.json"
# The second hit rule's column suffix: the gold definition itself, not a class or module whose lines hold it.
DEFINITION = "definition"
RESAMPLES = 2000
SEED = 0
# A package's tables, each searched in the corpus it was made in: its mined queries, its made-up stack traces and
# code blocks (features.py --pasted), its failing tests' tracebacks (--failing). Its docstring queries among kept
# doc comments (--documented) have no recorded hand-set column, so they are scored apart.
TABLES = (".npz", PASTED_TABLE, FAILING_TABLE)


def package_scores(record: dict, tables: tuple[str, ...] = TABLES) -> dict[str, list]:
    """Per query of one package's ``tables``: its kind and each method's reciprocal rank."""
    scores: dict[str, list] = defaultdict(list)
    for suffix in tables:
        if (path := FEATURES / f"{record['name']}{suffix}").exists():
            table_scores(np.load(path), record, scores)
    return scores


def table_index(features: np.lib.npyio.NpzFile, record: dict) -> tuple[CodeIndex, list[dict]]:
    """The index a features table was made in (its own corpus) and the queries it was made of."""
    corpus = str(features["corpus"])
    folder = TRAINING / "data" / str(features["corpus_dir"]) if "corpus_dir" in features else \
        TRAINING / "data" / "corpus" / corpus
    # The queries the features were made of (commit queries carry the head's gold lines), else the same sample.
    queries = json.loads(str(features["queries_json"])) if "queries_json" in features else \
        sampled_queries(record["name"])
    return CodeIndex(folder, INDEXES / (str(features["index"]) if "index" in features else corpus)), queries


def table_scores(features: np.lib.npyio.NpzFile, record: dict, scores: dict[str, list]) -> None:
    """Search one features table's queries live in its own corpus and index; append to ``scores``."""
    index, queries = table_index(features, record)
    searcher = Searcher(index)
    try:
        for query in queries:
            scores["kind"].append(query["kind"])
            for method, options in METHODS.items():
                started = time.perf_counter()
                hits, _ = searcher.search(query["query"], LIMIT, **options)
                scores[f"{method}_ms"].append((time.perf_counter() - started) * 1000)
                ranked = [{"path": h.path, "start_line": h.start_line, "end_line": h.end_line, "symbol": h.symbol,
                           "kind": h.kind} for h in hits]
                rank = first_hit_rank(ranked, query["gold"])
                scores[method].append(1.0 / rank if rank else 0.0)
                # The definition itself: a class or module around the gold (its lines overlap) does not count.
                own = first_hit_rank(ranked, query["gold"], is_answer)
                scores[f"{method}_{DEFINITION}"].append(1.0 / own if own else 0.0)
                # The issue ruler's measures: a gold definition in the top 10, a gold file among the first 5 files.
                scores[f"{method}_function10"].append(float(rank > 0))
                files = list(dict.fromkeys(result["path"] for result in ranked))[:5]
                scores[f"{method}_file5"].append(float(any(gold["path"] in files for gold in query["gold"])))
    finally:
        searcher.close()


def bootstrap(groups: list[np.ndarray], rng: np.random.Generator) -> tuple[float, float, float]:
    """The mean of the group means and its 95% interval, resampling each group's queries."""
    estimate = float(np.mean([group.mean() for group in groups]))
    draws = np.zeros(RESAMPLES)
    for group in groups:
        picks = rng.integers(0, len(group), size=(RESAMPLES, len(group)))
        draws += group[picks].mean(axis=1)
    draws /= len(groups)
    low, high = np.percentile(draws, [2.5, 97.5])
    return estimate, float(low), float(high)


def cell(groups: list[np.ndarray], rng: np.random.Generator) -> str:
    """``mean [low, high]`` of a group of packages' reciprocal ranks."""
    estimate, low, high = bootstrap(groups, rng)
    return f"{estimate:.3f} [{low:.3f}, {high:.3f}]"


def table(rows: dict[str, dict[str, dict[str, np.ndarray]]], rng: np.random.Generator) -> list[str]:
    """One line per row: queries, each method's MRR@10 and the paired learned - hand, each with its interval.

    ``rows[label][package][method]`` holds one package's reciprocal ranks of the row's queries.
    """
    methods = list(next(iter(next(iter(rows.values())).values())))
    paired = RECORDED in methods
    lines = [f"{'':<30} {'n':>5}  " + "  ".join(f"{m:<22}" for m in methods) + ("  learned - hand" if paired else "")]
    for label, packages in rows.items():
        groups = [scores for scores in packages.values() if len(scores["learned"])]
        if not groups:
            continue
        count = sum(len(scores["learned"]) for scores in groups)
        cells = [cell([scores[method] for scores in groups], rng) for method in methods]
        difference = cell([scores["learned"] - scores[RECORDED] for scores in groups], rng) if paired else ""
        lines.append(f"{label:<30} {count:>5}  " + "  ".join(f"{c:<22}" for c in cells) + f"  {difference}")
    return lines


def breakdown(per_package: dict[str, tuple[str, dict[str, list]]], methods: list[str],
              suffix: str = "") -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """The table's rows (each package, each language, each query kind, all) of one hit rule's columns."""
    rows: dict[str, dict[str, dict[str, np.ndarray]]] = defaultdict(dict)
    for name, (language, scores) in per_package.items():
        arrays = {method: np.array(scores[f"{method}{suffix}"]) for method in methods}
        kinds = np.array(scores["kind"])
        rows[f"{language}/{name}"][name] = arrays
        rows[f"language {language}"][name] = arrays
        rows["all (mean of packages)"][name] = arrays
        for kind in sorted(set(kinds)):
            rows[f"kind {kind}"][name] = {method: values[kinds == kind] for method, values in arrays.items()}
    return dict(sorted(rows.items(), key=lambda item: (item[0].startswith(("language", "kind", "all")), item[0])))


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="validation")
    parser.add_argument("--json", type=Path, help="also write every query's reciprocal ranks here")
    parser.add_argument("--baseline", type=Path, default=BASELINE if BASELINE.exists() else None,
                        help="a run's --json whose 'hand' column (the hand-set blend) is added, query by query "
                             "(default: the recorded run of this embedding model, when there is one); only the "
                             "packages it recorded are scored")
    parser.add_argument("--no-baseline", action="store_true", help="every package with features, no recorded column")
    parser.add_argument("--only", help="comma-separated package names: only these (of the split, with features)")
    parser.add_argument("--vectors", action="store_true", help="also rank by the two cosines alone")
    parser.add_argument("--without-tower", action="store_true",
                        help="queries embedded by the document model, not the code models' query tower: the tower's "
                             "worth in the whole ranking, against a run without this")
    args = parser.parse_args()
    with queries_without_the_tower() if args.without_tower else nullcontext():
        report(args)


def report(args: argparse.Namespace) -> None:
    """Search every package's queries live and print the tables (:func:`main`'s options)."""
    if args.without_tower:
        say("queries embedded by the document model (--without-tower)")
    if args.vectors:
        METHODS["vectors"] = RULER_METHODS["vectors"]
    blend = load_blend(blend_file(EMBEDDING))
    recorded = json.loads(args.baseline.read_text()) if args.baseline and not args.no_baseline else {}
    wanted = set(args.only.split(",")) if args.only else None
    records = [r for r in [*package_records(), *repository_records()]
               if r["split"] == args.split and (FEATURES / f"{r['name']}.npz").exists()
               and (wanted is None or r["name"] in wanted)]
    if recorded:  # the recorded run's packages only, so the columns compare like with like
        unrecorded = [r["name"] for r in records if r["name"] not in recorded]
        records = [r for r in records if r["name"] in recorded]
        if unrecorded:
            say(f"not in the recorded run, left out (--no-baseline scores them): {', '.join(unrecorded)}")
    say(f"learned blend {blend.version}; {len(records)} {args.split} packages")
    per_package = {}
    for record in records:
        scores = package_scores(record)
        if recorded:
            old = recorded[record["name"]]
            if old["kind"] != scores["kind"]:
                raise SystemExit(f"{args.baseline} recorded other queries of {record['name']}")
            scores.update({key: value for key, value in old.items() if key.startswith(RECORDED)})
        per_package[record["name"]] = (record["language"], scores)
    methods = list(dict.fromkeys([*METHODS, *([RECORDED] if recorded else [])]))
    rng = np.random.default_rng(SEED)
    say("MRR@10 with 95% bootstrap intervals (queries resampled within packages)")
    for line in table(breakdown(per_package, methods), rng):
        say(line)
    if all(f"{method}_{DEFINITION}" in scores for _, scores in per_package.values() for method in methods):
        say("MRR@10 counting the gold definition itself only (a class or module whose lines hold it is no hit)")
        for line in table(breakdown(per_package, methods, f"_{DEFINITION}"), rng):
            say(line)
    documented = {record["name"]: (record["language"], package_scores(record, (DOCUMENTED_TABLE,)))
                  for record in records if (FEATURES / f"{record['name']}{DOCUMENTED_TABLE}").exists()}
    if documented:
        say("docstring queries where every other definition keeps its doc comment (features.py --documented), "
            "the definition itself")
        rows = breakdown(documented, list(METHODS), f"_{DEFINITION}")
        for line in table({label: row for label, row in rows.items() if not label.startswith("kind")}, rng):
            say(line)
    for kind, label in (("commit_message", "commit-message"), ("failing_test", "failing-test")):
        found = {name: scores for name, (_, scores) in per_package.items() if kind in scores["kind"]}
        if not found:
            continue
        say(f"{label} queries: function Acc@10 and file Acc@5 (mean of repositories, 95% intervals)")
        for measure in ("function10", "file5"):
            groups = {method: [np.array(scores[f"{method}_{measure}"])[np.array(scores["kind"]) == kind]
                               for scores in found.values()] for method in methods}
            say(f"  {measure:<11} " + "  ".join(f"{method} {cell(groups[method], rng)}" for method in methods))
    timings = {method: np.median([ms for _, scores in per_package.values() for ms in scores[f"{method}_ms"]])
               for method in methods}
    say("median milliseconds per search: " + ", ".join(f"{m} {ms:.0f}" for m, ms in timings.items()))
    if args.json:
        args.json.write_text(json.dumps({name: {"language": language, **scores}
                                         for name, (language, scores) in per_package.items()}
                                        | {f"{name}.documented": {"language": language, **scores}
                                           for name, (language, scores) in documented.items()}))


if __name__ == "__main__":
    main()
