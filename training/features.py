#!/usr/bin/env python3
"""Features for the learned blend: every pooled candidate of every mined query, with its label.

For each package, the corpus is indexed with grepgraph's own :class:`CodeIndex` (kept under
``data/indexes/``; re-runs only update it, and the embedding cache makes re-embedding cheap), each sampled
query goes through :meth:`Searcher.candidate_table` (the pool the search ranks, with the learned blend's
columns, :mod:`retrievers.rank.learned`), and each candidate is labelled as the rulers score (the gold's
path with overlapping lines, or the gold's symbol, or its last part, in the same path), except that a
definition around the gold (its class, its module) is no answer (:func:`is_answer`). The same query is
also searched with the shipped ranking and with BM25 alone, and the rank of their first hit in the top
10 is kept, so every table compares like with like. One compressed file per package:
``data/features/<package>.npz``. With a code model, a train package's queries are embedded by the document model
and a validation package's through the query tower (:func:`queries_for_the_fit`).

    python training/features.py --plan                 # which packages and how many queries, nothing run
    python training/features.py                        # the planned packages, skipping those already done
    python training/features.py --only attrs,chi       # these packages (again)
    python training/features.py --commits              # commit-message queries, one index per repository
    python training/features.py --commits --failing    # the failing-test queries of mine_failures.py
    python training/features.py --documented           # docstring queries where every other doc comment stays
    GREPGRAPH_EMBEDDING_MODEL=code-minilm python training/features.py   # another model's indexes and features

``--documented`` searches the sampled docstring queries again in a copy of the package that blanks only their own
doc comments, as the rulers build their corpora (``data/documented/``, ``<package>.documented.npz``). In the mined
corpus every candidate's doc comment is blanked (up to 800 a package), so there a documented distractor is rare;
a user's repository, and the rulers', keep the other definitions' documentation, whose prose competes with the
code for a described query.

Commit-message queries are searched in their repository at its pinned head (one index per repository, not one
per fix: a tree per commit would mean re-embedding thousands of snapshots). A gold definition is kept when the
head still has it (same path, same symbol), with the head's lines; a query none of whose golds survived is left
out.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from functools import partial
from pathlib import Path

import numpy as np

TRAINING = Path(__file__).resolve().parent
ROOT = TRAINING.parent
sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.core.model import CALLABLE_KINDS, CLASS_LIKE_KINDS, TYPE_KINDS  # noqa: E402
from grepgraph.retrievers.dense.minilm import MiniLMEmbedder  # noqa: E402
from grepgraph.retrievers.rank.learned import COLUMNS  # noqa: E402
from grepgraph.retrievers.rank.search import Searcher  # noqa: E402
from grepgraph.retrievers.source.languages import is_documentation  # noqa: E402
from grepgraph.retrievers.store.index import CodeIndex  # noqa: E402
from mining.common import FAILING  # noqa: E402

DATA = TRAINING / "data"
DOCUMENTED = DATA / "documented"
DOCUMENTED_KIND = "docstring_documented"  # a docstring query where every other definition keeps its doc comment
DOCUMENTED_TABLE = ".documented.npz"
PASTED_TABLE = ".pasted.npz"
FAILING_TABLE = f"{FAILING}.npz"
QUERIES = DATA / "queries" / "by_package"
# Indexes and features per embedding model (``GREPGRAPH_EMBEDDING_MODEL``, as for any index): cosines from two
# models are different features, so a fit reads one model's tables; the default model keeps the plain names.
EMBEDDING = os.environ.get("GREPGRAPH_EMBEDDING_MODEL") or "minilm"
# The indexes embed with the model their folder names: unset, the product's default would embed instead (a code
# model since 2026-11-26), and "MiniLM" tables would hold its cosines. The scripts that import this one search alike.
os.environ["GREPGRAPH_EMBEDDING_MODEL"] = EMBEDDING
SUFFIX = "" if EMBEDDING == "minilm" else f"-{EMBEDDING.replace(':', '_')}"
INDEXES = DATA / f"indexes{SUFFIX}"
FEATURES = DATA / f"features{SUFFIX}"
MANIFEST = TRAINING / "manifest.json"
# Queries sampled per package and kind: docstrings (what the rulers ask) weigh most; a code line, a pasted error
# message and a bug fix's commit message (where the corpus of its parent commit is there) are the other shapes.
PER_KIND = {"docstring": 50, "code_line": 20, "error_message": 20, "commit_message": 20, "name": 15, "traceback": 20,
            "code_block": 10}
MAX_NAME_DEFINITIONS = 3
# Packages planned per language and split (the embedding of each corpus is the slow part: ~100 chunks/s). Every
# validation package is taken (two a language until 2026-11-29): what a fit is judged on should be as broad as the
# split allows, and a larger package is where a described definition has the most neighbours.
PLAN = {"train": 7, "validation": 10}
MAX_FILES = {"train": 300, "validation": 700}  # larger training corpora wait for a longer session
COMMITS_PER_REPOSITORY = 30
COMMIT_KINDS = ("commit_message", "failing_test")
# Source files at the head: the larger histories wait for a longer session (validation ones may be larger, so
# every language keeps a held-out history).
COMMIT_MAX_FILES = {"train": 250, "validation": 400}
LIMIT = 10
SEED = 0
# The ranking shipped when the table is made (a baseline the fit compares with; tables made before 2026-11-29 hold
# the hand-set blend's ranks as ``hand_rank``) and BM25 alone, as the benchmarks run it.
METHODS = {"shipped": {}, "bm25": {"weights": {"bm25": 1.0}, "focus": "all", "kind_priors": False}}


def say(line: str) -> None:
    """One line of progress, flushed (the script runs in the background with a log)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def is_hit(result: dict, gold: dict) -> bool:
    """The rulers' rule: same path and overlapping lines, or the gold's symbol (or its last part) in that path."""
    if result["path"] != gold["path"]:
        return False
    if result["start_line"] <= gold["end_line"] and result["end_line"] >= gold["start_line"]:
        return True
    symbol = result.get("symbol")
    return bool(symbol) and symbol in (gold["symbol"], gold["symbol"].split(".")[-1])


def is_answer(result: dict, gold: dict) -> bool:
    """The label the blend learns: the rulers' hit, except a definition around the gold (its class, its module).

    The rulers count a class as a hit for each of its methods (their lines overlap), so a blend fitted on that
    rule learns to show the class where a method is asked for; a user asking for ``store_edges`` wants the
    method. The gold's own symbol, or a definition inside the gold's lines, still counts.
    """
    if not is_hit(result, gold):
        return False
    symbol = result.get("symbol")
    if symbol and symbol in (gold["symbol"], gold["symbol"].split(".")[-1]):
        return True
    # Only a container is ruled out: the gold's own chunk may span more lines (its doc comment, decorators) or
    # be named otherwise (``(*T).Method``) than the miner's gold.
    container = result.get("kind") in CLASS_LIKE_KINDS | {"module"} and gold.get("kind") not in CLASS_LIKE_KINDS
    around = result["start_line"] <= gold["start_line"] and result["end_line"] >= gold["end_line"]
    return not (container and around)


def first_hit_rank(results: list[dict], golds: list[dict], rule: Callable[[dict, dict], bool] = is_hit) -> int:
    """The 1-based rank of the first result that hits a gold in the top 10 (by ``rule``), 0 if none does."""
    for rank, result in enumerate(results[:LIMIT], start=1):
        if any(rule(result, gold) for gold in golds):
            return rank
    return 0


def package_records() -> list[dict]:
    """The manifest's packages whose queries are mined and whose corpus is there."""
    manifest = json.loads(MANIFEST.read_text())
    return [record for record in manifest["packages"] if (QUERIES / f"{record['name']}.jsonl").exists()]


def corpus_of(record: dict) -> Path | None:
    """The package's corpus folder (the queried docstrings blanked), from its first query."""
    for line in (QUERIES / f"{record['name']}.jsonl").read_text().splitlines():
        corpus = json.loads(line).get("corpus")
        if isinstance(corpus, str):
            return DATA / corpus
    return None


def sampled_queries(name: str, seed: int = SEED) -> list[dict]:
    """At most :data:`PER_KIND` queries of each kind whose corpus is there, the same ones on every run."""
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for line in (QUERIES / f"{name}.jsonl").read_text().splitlines():
        query = json.loads(line)
        if isinstance(query.get("corpus"), str) and query["kind"] in PER_KIND and query["gold"]:
            by_kind[query["kind"]].append(query)
    chosen = []
    for kind, queries in sorted(by_kind.items()):
        random.Random(f"{seed}-{name}-{kind}").shuffle(queries)
        chosen += queries[: PER_KIND[kind]]
    return chosen


def plan(records: list[dict]) -> list[dict]:
    """Moderate-sized packages, up to :data:`PLAN` per language and split, in manifest order."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    chosen = []
    for record in records:
        key = (record["language"], record["split"])
        if record.get("files", 0) > MAX_FILES[record["split"]] or counts[key] >= PLAN[record["split"]]:
            continue
        if corpus_of(record) is None:
            continue
        counts[key] += 1
        chosen.append(record)
    return chosen


def indexed(corpus: Path, prefix: str = "") -> CodeIndex:
    """The corpus's index under :data:`INDEXES` (its name after ``prefix``), brought up to date, vectors included."""
    index = CodeIndex(corpus, INDEXES / f"{prefix}{corpus.name}")
    started = time.perf_counter()
    summary = index.update(embed=True)
    say(f"  indexed {corpus.name}: {summary.chunks} chunks, {summary.vectors_embedded} embedded, "
        f"{time.perf_counter() - started:.0f}s")
    return index


def extract(record: dict) -> dict[str, np.ndarray]:
    """Index one package, gather every sampled query's candidates (and some name queries) and label them."""
    corpus = corpus_of(record)
    index = indexed(corpus)
    return gather(record, corpus, index, sampled_queries(record["name"]) + name_queries(record, index))


def documented_corpus(record: dict) -> tuple[Path, list[dict]]:
    """The package copied afresh with only the sampled docstring queries' doc comments blanked; those queries.

    They come back as :data:`DOCUMENTED_KIND`, so a fit and ``evaluate.py`` report them apart from the same
    sentences searched in the mined corpus.

    Blanking keeps every line where it was, so the queries' gold lines hold in this copy too; a query whose
    comment no longer blanks cleanly on its own is left out.
    """
    from mining.common import package_id, source_dir
    from mining.package_queries import docstring_candidates, read_sources, strip_files

    queries = [query for query in sampled_queries(record["name"]) if query["kind"] == "docstring"]
    copy = DOCUMENTED / package_id(record)
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(source_dir(record), copy, symlinks=True)
    candidates, _ = docstring_candidates(read_sources(copy, record["language"]), record["language"])
    by_target = {(c.file.rel, c.definition.symbol, c.query): c for c in candidates}
    wanted = {(q["gold"][0]["path"], q["gold"][0]["symbol"], q["query"]): q for q in queries}
    stripped = strip_files(copy, [by_target[key] for key in wanted if key in by_target])
    kept = {(c.file.rel, c.definition.symbol, c.query) for c in stripped}
    return copy, [{**query, "kind": DOCUMENTED_KIND} for key, query in wanted.items() if key in kept]


def pasted_queries(record: dict, corpus: Path, index: CodeIndex, seed: int = SEED) -> list[dict]:
    """What issue reports paste, made from the mined queries, at most :data:`PER_KIND` of each kind.

    ``traceback``: an error message pasted as its stack trace (:mod:`mining.stack_traces`); ``code_block``: the
    lines around a mined code line, a block long enough to read as pasted (:func:`mining.stack_traces.code_block`).
    """
    from mining.stack_traces import code_block_query, traceback_query

    mined = [json.loads(line) for line in (QUERIES / f"{record['name']}.jsonl").read_text().splitlines()]
    made = []
    with closing(sqlite3.connect(index.db_path)) as connection:
        for kind, source, make in (("traceback", "error_message", partial(traceback_query, connection=connection)),
                                   ("code_block", "code_line", code_block_query)):
            sources = [query for query in mined if query["kind"] == source and query["gold"]]
            random.Random(f"{seed}-{record['name']}-{kind}").shuffle(sources)
            count = 0
            for query in sources:
                if count == PER_KIND[kind]:
                    break
                if (pasted := make(query, corpus=str(corpus))) is not None:
                    made.append(pasted)
                    count += 1
    return made


def name_queries(record: dict, index: CodeIndex) -> list[dict]:
    """Definitions asked for by name, as a developer or an agent types one (``parse_duration``, ``Router.add``).

    The mined kinds never ask for a name on its own (in a doc sentence or a code line, a name spelled out is
    mostly another definition's), so without these a fitted blend learns that an exact name is no answer.
    A name defined more than :data:`MAX_NAME_DEFINITIONS` times outside tests (``__init__``, ``new``) is skipped.
    """
    with closing(sqlite3.connect(index.db_path)) as connection:
        kinds = sorted(TYPE_KINDS | CALLABLE_KINDS)
        rows = connection.execute("SELECT path, symbol, kind, start_line, end_line FROM chunks WHERE is_test = 0"
                                  f" AND kind IN ({','.join('?' * len(kinds))})", kinds).fetchall()  # noqa: S608
    by_name: dict[str, list[dict]] = defaultdict(list)
    for path, symbol, kind, start, end in rows:
        by_name[symbol.rsplit(".", 1)[-1]].append({"path": path, "symbol": symbol, "kind": kind,
                                                     "start_line": start, "end_line": end})
    names = sorted(name for name, golds in by_name.items() if len(golds) <= MAX_NAME_DEFINITIONS and len(name) > 2)
    random.Random(f"{SEED}-{record['name']}-names").shuffle(names)
    queries = []
    for number, name in enumerate(names[:PER_KIND["name"]]):
        golds = by_name[name]
        # Half asked by the bare name, half by the qualified one where there is one (``Router.add``).
        if number % 2 and "." in golds[0]["symbol"]:
            query = golds[0]["symbol"]
            golds = [gold for gold in golds if gold["symbol"] == query]
        else:
            query = name
        queries.append({"id": f"{record['name']}-name-{number:04d}", "package": record["name"],
                        "language": record["language"], "kind": "name", "query": query, "gold": golds,
                        "split": record["split"]})
    return queries


@contextmanager
def queries_for_the_fit(split: str) -> Iterator[None]:
    """A train package's queries embedded by the document model, not by the code models' query tower.

    The tower was trained on the train split's queries: their cosines through it are in-sample, and a blend fitted
    on them leaned on the vectors more than unseen queries bear out (it read lower on validation, BENCHMARKS.md,
    2026-11-29). The validation split is searched as a user's query is, through the tower.
    """
    if split != "train":
        yield
        return
    with queries_without_the_tower():
        yield


@contextmanager
def queries_without_the_tower() -> Iterator[None]:
    """Every query embedded by the document model, as a document is (``evaluate.py --without-tower`` too)."""
    tower = MiniLMEmbedder.embed_query
    setattr(MiniLMEmbedder, "embed_query", lambda self, text: self.embed([text])[0])  # noqa: B010
    try:
        yield
    finally:
        setattr(MiniLMEmbedder, "embed_query", tower)  # noqa: B010


def gather(record: dict, corpus: Path, index: CodeIndex, queries: list[dict]) -> dict[str, np.ndarray]:
    """Every query's pooled candidates with their columns and labels, and the shipped ranking's and BM25's ranks."""
    with queries_for_the_fit("validation" if record.get("through_tower") else record["split"]):
        return gather_searched(record, corpus, index, queries)


def gather_searched(record: dict, corpus: Path, index: CodeIndex, queries: list[dict]) -> dict[str, np.ndarray]:
    """:func:`gather`'s search of every query, with the query embedding :func:`queries_for_the_fit` chose."""
    searcher = Searcher(index)
    rows, query_of, labels, ruler_labels, tests, docs, groups = [], [], [], [], [], [], []
    per_query: dict[str, list] = defaultdict(list)
    group_ids: dict[tuple[str, str], int] = {}
    try:
        for number, query in enumerate(queries):
            hits, columns = searcher.candidate_table(query["query"])
            golds = query["gold"]
            rows.append(np.stack([columns[name] for name in COLUMNS], axis=1).astype(np.float32))
            for hit in hits:
                result = {"path": hit.path, "start_line": hit.start_line, "end_line": hit.end_line,
                          "symbol": hit.symbol, "kind": hit.kind}
                labels.append(any(is_answer(result, gold) for gold in golds))
                ruler_labels.append(any(is_hit(result, gold) for gold in golds))
                tests.append(hit.is_test)
                docs.append(is_documentation(hit.path, hit.kind))
                groups.append(group_ids.setdefault((hit.path, hit.symbol), len(group_ids)))
                query_of.append(number)
            for method, options in METHODS.items():
                found, _ = searcher.search(query["query"], LIMIT, **options)
                ranked = [{"path": h.path, "start_line": h.start_line, "end_line": h.end_line, "symbol": h.symbol}
                          for h in found]
                per_query[f"{method}_rank"].append(first_hit_rank(ranked, golds))
            per_query["id"].append(query["id"])
            per_query["kind"].append(query["kind"])
            per_query["words"].append(len(query["query"].split()))
    finally:
        searcher.close()
    return {"columns": np.concatenate(rows) if rows else np.zeros((0, len(COLUMNS)), np.float32),
            "column_names": np.array(COLUMNS), "query": np.array(query_of, dtype=np.int32),
            "label": np.array(labels, dtype=bool), "ruler_label": np.array(ruler_labels, dtype=bool),
            "is_test": np.array(tests, dtype=bool),
            "is_doc": np.array(docs, dtype=bool), "group": np.array(groups, dtype=np.int32),
            "package": np.array(record["name"]), "language": np.array(record["language"]),
            "split": np.array(record["split"]), "corpus": np.array(corpus.name),
            "corpus_dir": np.array(str(corpus.relative_to(DATA))), "index": np.array(index.index_dir.name),
            "project": np.array(record.get("project", "")),
            "queries_json": np.array(json.dumps(queries)),
            **{key: np.array(values) for key, values in per_query.items()}}


def repository_records() -> list[dict]:
    """The manifest's repositories with commit queries and a head small enough for this session."""
    manifest = json.loads(MANIFEST.read_text())
    return [record for record in manifest["repositories"] if (QUERIES / f"{record['name']}.jsonl").exists()]


def head_golds(connection: sqlite3.Connection, golds: list[dict]) -> list[dict]:
    """The golds the head's index still defines (same path and symbol), with the head's lines."""
    kept = []
    for gold in golds:
        row = connection.execute("SELECT start_line, end_line FROM chunks WHERE path = ? AND symbol = ?"
                                 " ORDER BY start_line LIMIT 1", (gold["path"], gold["symbol"])).fetchone()
        if row:
            kept.append({**gold, "start_line": row[0], "end_line": row[1]})
    return kept


def commit_table(record: dict, failing: bool) -> str:
    """The file name (no extension) of a repository's commit queries, or of its failing-test queries."""
    return f"{record['name']}{FAILING}" if failing else record["name"]


def extract_commits(record: dict, failing: bool = False) -> dict[str, np.ndarray] | None:
    """Index one repository at its pinned head and gather its commit queries whose golds the head still has.

    ``failing``: the repository's failing-test queries (``mine_failures.py``), every one, instead of a sample of
    its commit messages.
    """
    from materialise import materialise
    from mining.common import EXTENSIONS

    source = QUERIES / f"{commit_table(record, failing)}.jsonl"
    if not source.exists():
        return None
    try:
        corpus = materialise(record["repo"], record["commit"])
    except subprocess.CalledProcessError as error:  # the mirror lacks the pinned commit: fetch it again
        say(f"  {record['name']}: git archive failed ({error.returncode}), left out")
        return None
    most = COMMIT_MAX_FILES[record["split"]]
    if sum(1 for path in corpus.rglob("*") if path.suffix in EXTENSIONS) > most:
        say(f"  {record['name']}: more than {most} source files, left for a longer session")
        return None
    index = indexed(corpus)
    queries = []
    with closing(sqlite3.connect(index.db_path)) as connection:
        for line in source.read_text().splitlines():
            query = json.loads(line)
            golds = head_golds(connection, query["gold"]) if query["kind"] in COMMIT_KINDS else []
            if golds:
                queries.append({**query, "gold": golds})
    random.Random(f"{SEED}-{record['name']}-commits").shuffle(queries)
    kind = "failing-test" if failing else "commit"
    say(f"  {record['name']}: {len(queries)} {kind} queries whose golds the head still has")
    return gather(record, corpus, index, queries if failing else queries[:COMMITS_PER_REPOSITORY]) if queries else None


def pasted_table(record: dict) -> tuple[Path, CodeIndex, list[dict]]:
    """The mined corpus, its index and the package's made-up stack traces and code blocks."""
    corpus = corpus_of(record)
    index = indexed(corpus)
    return corpus, index, pasted_queries(record, corpus, index)


def documented_table(record: dict) -> tuple[Path, CodeIndex, list[dict]]:
    """The copy keeping the other doc comments, its index and the docstring queries searched in it."""
    corpus, queries = documented_corpus(record)
    return corpus, indexed(corpus, "documented-"), queries


def extra_tables(args: argparse.Namespace, name: str, suffix: str,
                 build: Callable[[dict], tuple[Path, CodeIndex, list[dict]]]) -> None:
    """A table of extra queries (``<package><suffix>``) from ``build``'s corpus and index.

    One per planned package, or per package ``--only`` names (planned or not, as for the mined queries' tables).
    """
    FEATURES.mkdir(parents=True, exist_ok=True)
    for record in chosen_records(package_records(), args.only, args.through_tower):
        target = FEATURES / f"{record['name']}{suffix}"
        if not to_make(record, target, args):
            continue
        corpus, index, queries = build(record)
        say(f"{record['name']:<24} {record['language']:<11} {record['split']:<10} {name}={len(queries)}")
        if queries:
            np.savez_compressed(target, **gather(record, corpus, index, queries))


def chosen_records(records: list[dict], only: str | None, through_tower: bool = False) -> list[dict]:
    """The packages ``--only`` names (planned or not), else the plan; ``through_tower`` marks each for the tower."""
    if only:
        wanted = set(only.split(","))
        return [{**record, "through_tower": through_tower} for record in records if record["name"] in wanted]
    return plan(records)


def to_make(record: dict, target: Path, args: argparse.Namespace) -> bool:
    """Whether this run makes ``target``: the record is asked for (or no ``--only``), and not made or ``--again``."""
    asked = args.only is None or record["name"] in args.only.split(",")
    return asked and (args.again or not target.exists())


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated package names (done again if done)")
    parser.add_argument("--plan", action="store_true", help="print the planned packages and stop")
    parser.add_argument("--commits", action="store_true", help="the repositories' commit queries instead")
    parser.add_argument("--failing", action="store_true",
                        help="with --commits: the failing-test queries (mine_failures.py), into <name>.failing.npz")
    parser.add_argument("--again", action="store_true", help="make the features files that exist again too")
    parser.add_argument("--pasted", action="store_true",
                        help="stack traces and code blocks made from the mined queries, into <package>.pasted.npz")
    parser.add_argument("--documented", action="store_true",
                        help="docstring queries among the other doc comments, into <package>.documented.npz")
    parser.add_argument("--through-tower", action="store_true",
                        help="with --only: packages the shipped code models never trained on, their queries embedded "
                             "through the query tower as a user's are (out-of-sample cosines, as at run time)")
    args = parser.parse_args()
    if args.through_tower and (not args.only or args.commits):
        parser.error("--through-tower needs --only (the packages the shipped models never saw) and no --commits")
    if args.documented:
        extra_tables(args, "documented", DOCUMENTED_TABLE, documented_table)
        return
    if args.pasted:
        extra_tables(args, "pasted", PASTED_TABLE, pasted_table)
        return
    if args.commits:
        FEATURES.mkdir(parents=True, exist_ok=True)
        for record in repository_records():
            target = FEATURES / f"{commit_table(record, args.failing)}.npz"
            if not to_make(record, target, args):
                continue
            say(f"{record['name']:<24} {record['language']:<11} {record['split']}")
            arrays = extract_commits(record, failing=args.failing)
            if arrays is not None:
                np.savez_compressed(target, **arrays)
        return
    chosen = [record for record in chosen_records(package_records(), args.only, args.through_tower)
              if args.only or args.again or not (FEATURES / f"{record['name']}.npz").exists()]
    for record in chosen:
        say(f"{record['name']:<24} {record['language']:<11} {record['split']:<10} files={record.get('files')} "
            f"queries={len(sampled_queries(record['name']))}")
    if args.plan:
        return
    FEATURES.mkdir(parents=True, exist_ok=True)
    for record in chosen:
        started = time.perf_counter()
        arrays = extract(record)
        np.savez_compressed(FEATURES / f"{record['name']}.npz", **arrays)
        found = arrays["bm25_rank"] if "bm25_rank" in arrays else np.zeros(0)
        say(f"{record['name']}: {len(found)} queries, {len(arrays['label'])} candidates, "
            f"gold in pool {np.mean([arrays['label'][arrays['query'] == q].any() for q in range(len(found))]):.2f}, "
            f"{time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    main()
