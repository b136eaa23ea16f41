#!/usr/bin/env python3
"""Training pairs for the embedding model, and the validation packages' candidates to measure it on.

For every mined query of the train split: the gold definition's two embedded texts (card and raw code, exactly as
the index embeds them, :mod:`chunks`) as positives, and hard negatives from the same package: the definitions BM25
ranks highest for the query (over the same view's texts) that are not a gold. A commit query's positives and
negatives come from the gold files at the fix's parent commit. One line per query in ``pairs_train.jsonl``:
``{"id", "package", "language", "kind", "query", "card", "code", "negative_cards", "negative_codes"}``.

For the validation packages (never trained on) the same walk writes ``eval/<package>.json``: every chunk's two
texts and a seeded sample of its docstring, code-line and error-message queries with their gold chunks, which
``train.py`` (a few packages) and ``evaluate_vectors.py`` (all of them) rank by vectors alone.

    .venv/bin/python training/embedding/pairs.py                    # both, skipping packages already done
    .venv/bin/python training/embedding/pairs.py --split validation # the evaluation files only
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from chunks import (  # noqa: E402
    NOT_DEFINITIONS,
    EmbeddedChunk,
    best_match,
    commit_files,
    corpus_files,
    embedded_chunks,
    is_hit,
)
from grepgraph.retrievers.lexical.tokenize import tokenize_code  # noqa: E402
from mining.common import DATA, QUERIES, language_of, say  # noqa: E402
from mining.registries import ensure_repository  # noqa: E402

OUT = DATA / "embedding"
SEED = 0
# Queries kept per package and kind: the JDK packages alone hold 6,000 docstrings, and one package's style
# would otherwise teach the model more than forty others'. Commit messages are few (<=120 a repository): all kept.
PER_PACKAGE = {"docstring": 300, "commit_message": 120, "error_message": 80, "code_line": 100}
HARD_NEGATIVES = 3  # per view and query; train.py uses one a step, chosen anew each epoch
BM25_DEPTH = 20
# The validation sample per package and kind (as training/features.py samples: docstrings weigh most).
EVAL_PER_KIND = {"docstring": 50, "code_line": 20, "error_message": 20}


def queries_by_package(split: str) -> dict[str, list[dict]]:
    """The split's queries grouped by package, in file order."""
    grouped: dict[str, list[dict]] = defaultdict(list)
    with open(QUERIES / f"{split}.jsonl", encoding="utf-8") as handle:
        for line in handle:
            query = json.loads(line)
            if query["gold"]:
                grouped[query["package"]].append(query)
    return grouped


def capped(queries: list[dict], caps: dict[str, int], seed_key: str) -> list[dict]:
    """At most ``caps[kind]`` queries of each kind, a seeded sample (kinds not in ``caps`` dropped)."""
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for query in queries:
        by_kind[query["kind"]].append(query)
    kept = []
    for kind, group in sorted(by_kind.items()):
        if kind in caps:
            random.Random(f"{SEED}-{seed_key}-{kind}").shuffle(group)
            kept += group[: caps[kind]]
    return kept


class LexicalRanker:
    """BM25 over one view's texts of a set of chunks (bm25s, the project's code tokenizer)."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s

        self.model = bm25s.BM25()
        self.model.index([tokenize_code(text) or ["_"] for text in texts], show_progress=False)
        self.size = len(texts)

    def top(self, query: str, depth: int) -> list[int]:
        """Indices of the ``depth`` best texts for ``query``, best first."""
        tokens = tokenize_code(query)
        if not tokens:
            return []
        scores = self.model.get_scores(tokens)
        order = np.argsort(-scores, kind="stable")[:depth]
        return [int(i) for i in order if scores[i] > 0]


def hard_negatives(query: dict, chunks: list[EmbeddedChunk], ranker: LexicalRanker, view: str) -> list[str]:
    """The view's texts of the best-ranked non-gold definitions (no test code, no text equal to a gold's)."""
    golds = query["gold"]
    gold_texts = {getattr(chunk, view) for chunk in chunks if any(is_hit(chunk, gold) for gold in golds)}
    found: list[str] = []
    for index in ranker.top(query["query"], BM25_DEPTH):
        chunk = chunks[index]
        text = getattr(chunk, view)
        if (chunk.kind in NOT_DEFINITIONS or chunk.is_test or text in gold_texts or text in found
                or any(is_hit(chunk, gold) for gold in golds)):
            continue
        found.append(text)
        if len(found) == HARD_NEGATIVES:
            break
    return found


def pair_of(query: dict, chunks: list[EmbeddedChunk], rankers: dict[str, LexicalRanker]) -> dict | None:
    """The query's training line, or None when its gold is no chunk of the corpus."""
    positive = next((chunk for gold in query["gold"] if (chunk := best_match(chunks, gold))), None)
    if positive is None:
        return None
    return {"id": query["id"], "package": query["package"], "language": query["language"], "kind": query["kind"],
            "query": query["query"], "card": positive.card, "code": positive.code,
            "negative_cards": hard_negatives(query, chunks, rankers["card"], "card"),
            "negative_codes": hard_negatives(query, chunks, rankers["code"], "code")}


def rankers_of(chunks: list[EmbeddedChunk]) -> dict[str, LexicalRanker]:
    """A BM25 ranker per view."""
    return {view: LexicalRanker([getattr(chunk, view) for chunk in chunks]) for view in ("card", "code")}


def package_pairs(queries: list[dict]) -> list[dict]:
    """Training lines of one package's (capped) queries whose corpus is the package's stripped copy."""
    corpus = DATA / queries[0]["corpus"]
    chunks = embedded_chunks(corpus_files(corpus))
    rankers = rankers_of(chunks)
    return [line for query in queries if (line := pair_of(query, chunks, rankers))]


def commit_pairs(queries: list[dict]) -> list[dict]:
    """Training lines of commit queries: positives and negatives from the gold files at the parent commit."""
    lines = []
    for query in queries:
        git_dir = ensure_repository(query["corpus"]["repo"])
        paths = sorted({gold["path"] for gold in query["gold"]})
        languages = {path: language for path in paths if (language := language_of(path))}
        chunks = embedded_chunks(commit_files(git_dir, query["corpus"]["commit"], paths, languages))
        if chunks and (line := pair_of(query, chunks, rankers_of(chunks))):
            lines.append(line)
    return lines


def eval_package(name: str, queries: list[dict]) -> dict:
    """One validation package: every chunk's texts, and the sampled queries with their gold chunk indices."""
    package_queries = [query for query in queries if isinstance(query["corpus"], str)]
    chunks = embedded_chunks(corpus_files(DATA / package_queries[0]["corpus"]))
    sampled = []
    for query in capped(package_queries, EVAL_PER_KIND, name):
        gold_chunks = [i for i, chunk in enumerate(chunks) if any(is_hit(chunk, gold) for gold in query["gold"])]
        if gold_chunks:
            sampled.append({"id": query["id"], "kind": query["kind"], "query": query["query"], "gold": gold_chunks})
    return {"package": name, "language": package_queries[0]["language"],
            "chunks": [chunk.to_dict() for chunk in chunks], "queries": sampled}


def write_train(path: Path = OUT / "pairs_train.jsonl", caps: dict[str, int] = PER_PACKAGE) -> None:
    """``pairs_train.jsonl``, one package at a time (a package already in the file is skipped)."""
    done = set()
    if path.exists():
        done = {json.loads(line)["package"] for line in path.read_text().splitlines()}
    with open(path, "a", encoding="utf-8") as handle:
        for name, queries in sorted(queries_by_package("train").items()):
            if name in done:
                continue
            started = time.perf_counter()
            kept = capped(queries, caps, name)
            commit = isinstance(kept[0]["corpus"], dict) if kept else False
            lines = commit_pairs(kept) if commit else package_pairs(kept) if kept else []
            for line in lines:
                handle.write(json.dumps(line) + "\n")
            handle.flush()
            seconds = time.perf_counter() - started
            say(f"train {name:<28} {len(lines):>5} pairs of {len(kept):>5} queries  {seconds:.0f}s")


def write_validation() -> None:
    """``eval/<package>.json`` for every validation package with package queries."""
    folder = OUT / "eval"
    folder.mkdir(parents=True, exist_ok=True)
    for name, queries in sorted(queries_by_package("validation").items()):
        target = folder / f"{name}.json"
        if target.exists() or not any(isinstance(query["corpus"], str) for query in queries):
            continue
        started = time.perf_counter()
        package = eval_package(name, queries)
        target.write_text(json.dumps(package))
        say(f"validation {name:<23} {len(package['chunks']):>6} chunks {len(package['queries']):>4} queries  "
            f"{time.perf_counter() - started:.0f}s")


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("train", "validation", "both"), default="both")
    parser.add_argument("--out", type=Path, default=OUT / "pairs_train.jsonl", help="the training pairs' file")
    parser.add_argument("--cap", action="append", default=[], metavar="KIND=N",
                        help="another per-package cap for a kind (the sample's first N: a larger cap adds queries)")
    args = parser.parse_args()
    caps = PER_PACKAGE | {kind: int(n) for kind, n in (cap.split("=") for cap in args.cap)}
    OUT.mkdir(parents=True, exist_ok=True)
    if args.split in ("validation", "both"):
        write_validation()
    if args.split in ("train", "both"):
        write_train(args.out, caps)


if __name__ == "__main__":
    main()
