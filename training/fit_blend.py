#!/usr/bin/env python3
"""Fit the learned blend on the training packages' features and write ``retrievers/rank/learned_blend.json``.

A model is a linear score over named features (columns of :mod:`retrievers.rank.learned` or their products),
fitted per query: listwise (softmax cross-entropy of the gold candidates among the pool) or pairwise
(RankNet: each gold against each other candidate), with an L2 penalty. The focus rule the Searcher applies
after scoring (tests and documentation demoted under ``implementation``) is a fixed offset in the fit, so
the weights learn what the rule leaves; the ``focused`` feature set learns the demotion itself instead (a
weight on ``out_of_focus``, which the Searcher then applies in place of the rule's factor). Which feature set,
loss and penalty ship is chosen by project-grouped 10-fold cross-validation on the training packages (MRR@10
of the ranking the Searcher would return: the pool cut at the candidate depth, demoted, duplicates collapsed),
never on validation packages or the rulers.

    python training/fit_blend.py --cv            # the cross-validation table, nothing written
    python training/fit_blend.py                 # choose by cross-validation, fit on every training package, write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TRAINING = Path(__file__).resolve().parent
ROOT = TRAINING.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(TRAINING))

from features import DOCUMENTED_TABLE, EMBEDDING, FEATURES  # noqa: E402  (the features of the model in GREPGRAPH_EMBEDDING_MODEL)
from grepgraph.retrievers.query.asked import WEIGHTS_FILE as KIND_WEIGHTS  # noqa: E402
from grepgraph.retrievers.query.asked import kind_chances  # noqa: E402
from grepgraph.retrievers.query.parsing import without_environment_listing  # noqa: E402
from grepgraph.retrievers.rank.learned import (  # noqa: E402
    ASKED_COLUMNS,
    EVIDENCE,
    LANGUAGES,
    POOL_COLUMNS,
    design_matrix,
    fitted_blend_path,
    pool_columns,
)
from grepgraph.retrievers.rank.ranking import CANDIDATE_DEPTH, FOCUS_DEMOTION  # noqa: E402

MANIFEST = TRAINING / "manifest.json"
K = 10


def say(line: str) -> None:
    """One line of the report, flushed (fits run for minutes, in the background with a log)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()

BASE = ("card", "code", "bm25", "name", "symbol", "symbol_exact", "mention", "mention_frame", "calls", "message",
        "exact", "exact_verbatim", "kind_type", "kind_callable", "kind_impl", "kind_module", "kind_text",
        "member_card", "member_code", "member_bm25", "member_name", "exception_type", "subclass", "lines",
        "file_words")
# The query's shape changes what evidence means: a text of several lines (a report with its body, a traceback, a
# pasted block) asks for other evidence than one line, a statement's spelled-out names counted for nothing in the
# hand-set blend, and kind priors depend on wording. These are those crossings.
CROSSED = (*BASE, *(f"multiline*{name}" for name in EVIDENCE), "statement*symbol", "statement*symbol_exact",
           "question*name", "described_type*kind_type", "described_callable*kind_type",
           "described_callable*kind_callable", "wants_type*kind_type", "wants_type*member_card",
           "wants_type*member_code", "wants_type*member_bm25", "wants_type*member_name", "pasted_block*exact")
SQUARED = (*CROSSED, "card*card", "code*code", "bm25*bm25", "card*code", "card*bm25", "code*bm25")
Z_COLUMNS = tuple(name for name in POOL_COLUMNS if name.endswith("_z"))
STANDARDISED = (*CROSSED, *Z_COLUMNS, *(f"multiline*{name}" for name in Z_COLUMNS))
BOTH = (*STANDARDISED, *SQUARED[len(CROSSED):])
PER_LANGUAGE = (*STANDARDISED, *(f"lang_{language}*{name}" for language in LANGUAGES
                                 for name in ("card", "code", "bm25", "name", "lines")))
RANKED = (*BOTH, *(name for name in POOL_COLUMNS if name.endswith("_rr")))
# The focus demotion learned too: a weight on how many reasons the focus has to demote a candidate (instead of
# the fixed factor of ``focus_factor``, which the other sets take as an offset).
FOCUS_COLUMN = "out_of_focus"
FOCUSED = (*RANKED, FOCUS_COLUMN)
# What the pool says around a candidate: its file's best cosine and share of the pool, its type's cosine (the
# cosines crossed with a text of several lines too, as the evidence is).
CONTEXT = (*FOCUSED, "file_card", "file_pool", "owner_card", "multiline*file_card", "multiline*owner_card")
# A report of a problem (a commit message, an issue), a description of a definition and a quote of code or a
# message ask for different evidence: one linear model traded one for another, so the main evidence is crossed
# with P(report) and P(description) (:mod:`retrievers.query.asked`, 2026-11-30).
ASKED_EVIDENCE = ("card", "code", "bm25", "card_z", "code_z", "bm25_z", "card_rr", "code_rr", "bm25_rr", "name",
                  "symbol", "calls", "lines", "file_words", "file_card", "file_pool", "owner_card", "kind_type",
                  "kind_callable", "kind_module", "member_card", "member_code", "member_bm25", FOCUS_COLUMN, "one")
ASKED_KINDS = (*CONTEXT, *(f"{column}*{name}" for column in ASKED_COLUMNS.values() for name in ASKED_EVIDENCE))
FEATURE_SETS = {"base": BASE, "crossed": CROSSED, "squared": SQUARED, "standardised": STANDARDISED, "both": BOTH,
                "ranked": RANKED, "focused": FOCUSED, "context": CONTEXT, "asked": ASKED_KINDS,
                "per_language": PER_LANGUAGE}
DENSE_PARTS = frozenset({"card", "code", "member_card", "member_code", "card_z", "code_z", "card_rr", "code_rr",
                         "file_card", "owner_card"})
PENALTIES = (1e-5, 1e-4, 1e-3)
# A column set in fewer training queries than this has no weight worth trusting: the model leaves it out
# (``ignored`` in the weights file), and a query showing it is ranked by what the model does weigh.
MIN_SUPPORT_QUERIES = 20
LOSSES = ("listwise", "pairwise")
FOLDS = 10


@dataclass
class Package:
    """One package's candidates: column values, labels, and the query each row belongs to (rows grouped)."""

    name: str
    language: str
    split: str
    columns: dict[str, np.ndarray]
    label: np.ndarray
    offset: np.ndarray
    group: np.ndarray
    query: np.ndarray
    kinds: np.ndarray
    baseline_rank: np.ndarray  # the ranking shipped when the features were made (see features.METHODS)
    bm25_rank: np.ndarray
    digest: str
    project: str  # a package and its project's git history share one: they are held out together
    # What the fit aims at, when graded: 1 for an answer, the container credit for a class or module around one.
    target: np.ndarray | None = None
    # How much each query weighs in the loss against the package's others (``--kind-weights``); all 1 when None.
    query_weight: np.ndarray | None = None

    @property
    def queries(self) -> int:  # noqa: D102
        return len(self.kinds)

    @property
    def aim(self) -> np.ndarray:
        """The fit's target per row: the graded one, else the label."""
        return self.label.astype(np.float64) if self.target is None else self.target

    @property
    def bounds(self) -> np.ndarray:
        """Query ``q``'s rows are ``bounds[q]:bounds[q + 1]`` (rows are written query by query)."""
        return np.searchsorted(self.query, np.arange(self.queries + 1))


def load_packages(folder: Path = FEATURES, labels: str = "label", container_credit: float = 0.0,
                  documented: bool = False, kinds: Path = KIND_WEIGHTS) -> list[Package]:
    """Every features file, with the focus offsets of the default focus (``implementation``).

    ``documented``: also the tables of docstring queries searched among kept doc comments (``features.py
    --documented``), which judge a fit: fitted on as well, they traded validation docstrings (+0.011) for commit
    messages (-0.011), and at half weight each they changed nothing (2026-11-29, 36 packages), so the fit leaves
    them out.

    ``labels``: ``label`` (a definition around the gold, its class or module, is no answer) or ``ruler_label``
    (the rulers' overlap rule, which counts a class as a hit for each of its methods). ``container_credit``: the
    fit's target for such a container under ``label`` (a partial answer: 0 is none, the answer itself is 1).
    ``kinds``: the query-kind model (``fit_asked.py``) whose chances fill ``is_report`` and ``is_description``.
    """
    manifest = json.loads(MANIFEST.read_text())
    projects = {record["name"]: record.get("project", record["name"])
                for record in (*manifest["packages"], *manifest["repositories"])}
    packages = []
    for path in sorted(folder.glob("*.npz")):
        if path.name.endswith(DOCUMENTED_TABLE) and not documented:
            continue
        data = np.load(path)
        names = [str(name) for name in data["column_names"]]
        columns = {name: data["columns"][:, i].astype(np.float64) for i, name in enumerate(names)}
        bounds = np.searchsorted(data["query"], np.arange(len(data["kind"]) + 1))
        pooled = [pool_columns({name: values[start:end] for name, values in columns.items()})
                  for start, end in zip(bounds[:-1], bounds[1:])]
        columns.update({name: np.concatenate([p[name] for p in pooled]) for name in POOL_COLUMNS})
        demoted = data["is_test"].astype(int) + data["is_doc"].astype(int)
        columns[FOCUS_COLUMN] = demoted.astype(np.float64)  # files made before the column was gathered lack it
        # What the query is, from its text by the model given: a refit of asked.json needs no new tables.
        columns.update(asked_columns(data, kinds))
        containers = data["ruler_label"] & ~data["label"]
        target = data[labels] + container_credit * containers if container_credit and labels == "label" else None
        packages.append(Package(str(data["package"]), str(data["language"]), str(data["split"]), columns,
                                data[labels], demoted * math.log(FOCUS_DEMOTION), data["group"], data["query"],
                                query_kinds(data), recorded_baseline(data), data["bm25_rank"],
                                hashlib.sha256(path.read_bytes()).hexdigest(),
                                projects.get(str(data["package"]), str(data["package"])), target))
    by_name: dict[str, list[Package]] = {}
    for package in packages:  # a package's extra query kinds (``<name>.pasted.npz``) join its main file
        by_name.setdefault(package.name, []).append(package)
    return [merged(parts) for parts in by_name.values()]


def searched_texts(data: np.lib.npyio.NpzFile) -> list[str]:
    """Each query's text of a table as the search reads it: without its environment listing (``Searcher.search``)."""
    if "queries_json" not in data:
        return [""] * len(data["kind"])
    return [without_environment_listing(query["query"]) for query in json.loads(str(data["queries_json"]))]


def asked_columns(data: np.lib.npyio.NpzFile, kinds: Path = KIND_WEIGHTS) -> dict[str, np.ndarray]:
    """Each row's ``is_report`` and ``is_description``, as the search computes them from its query's text."""
    chances = [kind_chances(text, kinds) for text in searched_texts(data)]
    return {column: np.array([chance[kind] for chance in chances], dtype=np.float64)[data["query"]]
            for kind, column in ASKED_COLUMNS.items()}


def query_kinds(data: np.lib.npyio.NpzFile) -> np.ndarray:
    """Each query's kind; a docstring query whose definition is not public is ``<kind>_private``.

    The rulers take public definitions' docstrings only (a package's documented surface); the mined queries take
    every documented definition, so the two are told apart to weigh (``--kind-weights``) and to report.
    """
    kinds = data["kind"].astype(str)
    if "queries_json" not in data:
        return kinds
    hidden = np.array([query["kind"].startswith("docstring") and query.get("public") is False
                       for query in json.loads(str(data["queries_json"]))], dtype=bool)
    return np.where(hidden, np.char.add(kinds, "_private"), kinds)


def merged(parts: list[Package]) -> Package:
    """One package of several files' queries (query numbers and candidate groups renumbered to stay apart)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    queries = np.cumsum([0, *(part.queries for part in parts[:-1])])
    groups = np.cumsum([0, *(int(part.group.max(initial=-1)) + 1 for part in parts[:-1])])
    names = set.intersection(*(set(part.columns) for part in parts))
    return Package(first.name, first.language, first.split,
                   {name: np.concatenate([part.columns[name] for part in parts]) for name in names},
                   np.concatenate([part.label for part in parts]), np.concatenate([part.offset for part in parts]),
                   np.concatenate([part.group + shift for part, shift in zip(parts, groups)]),
                   np.concatenate([part.query + shift for part, shift in zip(parts, queries)]),
                   np.concatenate([part.kinds for part in parts]),
                   np.concatenate([part.baseline_rank for part in parts]),
                   np.concatenate([part.bm25_rank for part in parts]),
                   hashlib.sha256("".join(part.digest for part in parts).encode()).hexdigest(), first.project,
                   None if first.target is None else np.concatenate([part.aim for part in parts]))


@dataclass
class Stacked:
    """Several packages' candidates as one design matrix, with each query's row span."""

    matrix: np.ndarray
    offset: np.ndarray
    label: np.ndarray
    starts: np.ndarray
    counts: np.ndarray
    weight: np.ndarray  # per query


def stack(packages: list[Package], features: tuple[str, ...]) -> Stacked:
    """The queries with at least one gold candidate (the others teach nothing), rows grouped per query.

    ``label`` holds each row's target: 1 for an answer, a graded target's credit for a partial one (a query whose
    pool holds only a partial answer teaches to rank it first, as the softmax is taken within the golds).
    """
    matrices, offsets, labels, counts, weights = [], [], [], [], []
    for package in packages:
        matrix = design_matrix(package.columns, features)
        bounds = package.bounds
        aim = package.aim
        query_weight = np.ones(package.queries) if package.query_weight is None else package.query_weight
        kept_weights = []
        for query, (start, end) in enumerate(zip(bounds[:-1], bounds[1:])):
            if aim[start:end].any():
                matrices.append(matrix[start:end])
                offsets.append(package.offset[start:end] * (FOCUS_COLUMN not in features))
                labels.append(aim[start:end])
                counts.append(end - start)
                kept_weights.append(query_weight[query])
        # Each package weighs as much as any other, whatever its number of queries.
        weights += [weight / sum(kept_weights) for weight in kept_weights]
    counts_array = np.array(counts)
    starts = np.concatenate([[0], np.cumsum(counts_array)[:-1]]).astype(np.int64)
    weight = np.array(weights)
    return Stacked(np.concatenate(matrices), np.concatenate(offsets), np.concatenate(labels).astype(np.float64),
                   starts, counts_array, weight / weight.sum())


def support(packages: list[Package]) -> dict[str, int]:
    """For each column, how many training queries have it set on at least one candidate."""
    counts: dict[str, int] = {}
    for package in packages:
        bounds = package.bounds
        for name, values in package.columns.items():
            counts[name] = counts.get(name, 0) + int(np.logical_or.reduceat(values != 0, bounds[:-1]).sum()
                                                     if len(values) else 0)
    return counts


def supported(features: tuple[str, ...], ignored: set[str]) -> tuple[str, ...]:
    """The features that read no ignored column."""
    return tuple(feature for feature in features if not set(feature.split("*")) & ignored)


def listwise_loss(weights: np.ndarray, data: Stacked, penalty: float) -> tuple[float, np.ndarray]:
    """Softmax cross-entropy of the gold candidates within each query's pool, and its gradient.

    A graded target weighs each gold's share (a container's credit below an answer's 1).
    """
    scores = data.matrix @ weights + data.offset
    top = np.maximum.reduceat(scores, data.starts)
    exp = np.exp(scores - np.repeat(top, data.counts))
    everything = np.add.reduceat(exp, data.starts)
    gold_top = np.maximum.reduceat(np.where(data.label > 0, scores, -np.inf), data.starts)
    gold_exp = data.label * np.exp(np.where(data.label > 0, scores - np.repeat(gold_top, data.counts), -np.inf))
    gold = np.add.reduceat(gold_exp, data.starts)
    loss = data.weight @ (np.log(everything) + top - np.log(gold) - gold_top)
    share = exp / np.repeat(everything, data.counts) - gold_exp / np.repeat(gold, data.counts)
    gradient = data.matrix.T @ (share * np.repeat(data.weight, data.counts))
    return loss + penalty * weights @ weights, gradient + 2 * penalty * weights


def pairs_of(data: Stacked) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row indices of every (gold, other) pair of a query, and each pair's weight (a query's pairs share its own).

    Every gold counts alike here, graded or not (the container credit weighs the listwise loss only).
    """
    golds, others, weights = [], [], []
    for start, count, weight in zip(data.starts, data.counts, data.weight):
        rows = np.arange(start, start + count)
        positive = rows[data.label[rows] > 0]
        negative = rows[data.label[rows] == 0]
        if not len(negative):
            continue
        golds.append(np.repeat(positive, len(negative)))
        others.append(np.tile(negative, len(positive)))
        weights.append(np.full(len(positive) * len(negative), weight / (len(positive) * len(negative))))
    return np.concatenate(golds), np.concatenate(others), np.concatenate(weights)


def pairwise_loss(weights: np.ndarray, data: Stacked, penalty: float,
                  pairs: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[float, np.ndarray]:
    """RankNet: the logistic loss of each gold scoring above each other candidate, and its gradient."""
    golds, others, pair_weight = pairs
    scores = data.matrix @ weights + data.offset
    margin = scores[golds] - scores[others]
    loss = pair_weight @ np.logaddexp(0.0, -margin)
    slope = -pair_weight / (1.0 + np.exp(margin))
    per_row = np.bincount(golds, slope, len(scores)) - np.bincount(others, slope, len(scores))
    return loss + penalty * weights @ weights, data.matrix.T @ per_row + 2 * penalty * weights


def fit(packages: list[Package], features: tuple[str, ...], loss: str, penalty: float) -> np.ndarray:
    """The weights minimising ``loss`` over the packages' queries (L-BFGS from zero)."""
    data = stack(packages, features)
    if loss == "listwise":
        objective = lambda w: listwise_loss(w, data, penalty)  # noqa: E731
    else:
        pairs = pairs_of(data)
        objective = lambda w: pairwise_loss(w, data, penalty, pairs)  # noqa: E731
    return lbfgs(objective, np.zeros(len(features)))


def lbfgs(objective, start: np.ndarray, memory: int = 10, iterations: int = 500,
          tolerance: float = 1e-7) -> np.ndarray:
    """Minimise a smooth convex ``objective(x) -> (value, gradient)`` by L-BFGS with a backtracking line search.

    Nocedal & Wright, *Numerical Optimization* (2006), algorithm 7.4; numpy only, so fitting needs no SciPy.
    """
    x = start.copy()
    value, gradient = objective(x)
    steps: list[tuple[np.ndarray, np.ndarray, float]] = []
    for _ in range(iterations):
        direction = -gradient
        alphas = []
        for s_k, y_k, rho in reversed(steps):
            alpha = rho * (s_k @ direction)
            direction -= alpha * y_k
            alphas.append(alpha)
        if steps:
            s_k, y_k, _ = steps[-1]
            direction *= (s_k @ y_k) / (y_k @ y_k)
        for (s_k, y_k, rho), alpha in zip(steps, reversed(alphas)):
            direction += s_k * (alpha - rho * (y_k @ direction))
        slope = gradient @ direction
        if slope >= 0:  # not a descent direction: start the memory again from the gradient
            steps, direction, slope = [], -gradient, -(gradient @ gradient)
        step = 1.0
        while True:
            candidate = x + step * direction
            new_value, new_gradient = objective(candidate)
            if new_value <= value + 1e-4 * step * slope or step < 1e-12:
                break
            step /= 2
        s_new, y_new = candidate - x, new_gradient - gradient
        if s_new @ y_new > 1e-12:
            steps = [*steps[-(memory - 1):], (s_new, y_new, 1.0 / (s_new @ y_new))]
        converged = abs(value - new_value) <= tolerance * max(1.0, abs(value))
        x, value, gradient = candidate, new_value, new_gradient
        if converged or np.abs(gradient).max() < 1e-6:
            break
    return x


def reciprocal_ranks(package: Package, features: tuple[str, ...], weights: np.ndarray,
                     depth: int = CANDIDATE_DEPTH) -> np.ndarray:
    """Each query's reciprocal rank of its first hit in the top 10, ranked as the Searcher ranks with these weights.

    The pool is scored, the best ``depth`` kept, the focus offsets applied, and duplicates (same path and
    symbol) collapsed to the best, as :meth:`Searcher.search` does.
    """
    scores = design_matrix(package.columns, features) @ weights
    ranks = np.zeros(package.queries)
    bounds = package.bounds
    for query in range(package.queries):
        rows = np.arange(bounds[query], bounds[query + 1])
        if not len(rows):
            continue
        kept = rows[np.argsort(-scores[rows], kind="stable")[:depth]]
        offset = package.offset[kept] * (FOCUS_COLUMN not in features)
        final = kept[np.argsort(-(scores[kept] + offset), kind="stable")]
        seen: set[int] = set()
        shown = []
        for row in final:
            if package.group[row] not in seen:
                seen.add(package.group[row])
                shown.append(row)
            if len(shown) == K:
                break
        hit = next((rank for rank, row in enumerate(shown, start=1) if package.label[row]), 0)
        ranks[query] = 1.0 / hit if hit else 0.0
    return ranks


def recorded_rr(ranks: np.ndarray) -> np.ndarray:
    """Reciprocal ranks from recorded first-hit ranks (0: no hit in the top 10)."""
    return np.where(ranks > 0, 1.0 / np.maximum(ranks, 1), 0.0)


def without_dense(features: tuple[str, ...]) -> tuple[str, ...]:
    """The features a search without vectors can compute."""
    return tuple(feature for feature in features if not set(feature.split("*")) & DENSE_PARTS)


def project_folds(packages: list[Package]) -> dict[str, int]:
    """Each project's fold: projects in a seeded order, dealt round-robin (leave-one-out with few projects)."""
    projects = sorted({p.project for p in packages})
    np.random.default_rng(0).shuffle(projects)
    return {project: index % FOLDS for index, project in enumerate(projects)}


def cross_validate(packages: list[Package], configs: list[tuple[str, str, float]],
                   ignored: set[str]) -> list[dict]:
    """Project-grouped cross-validated MRR@10 of each (feature set, loss, penalty), macro-averaged over packages.

    Projects are dealt into :data:`FOLDS` folds (a project's package and git history always together); each
    fold is held out once.
    """
    rows = []
    fold_of = project_folds(packages)
    for set_name, loss, penalty in configs:
        features = supported(FEATURE_SETS[set_name], ignored)
        started = time.perf_counter()
        per_query = {}
        for fold in sorted(set(fold_of.values())):
            weights = fit([p for p in packages if fold_of[p.project] != fold], features, loss, penalty)
            for held in (p for p in packages if fold_of[p.project] == fold):
                per_query[held.name] = reciprocal_ranks(held, features, weights)
        rows.append({"features": set_name, "loss": loss, "penalty": penalty,
                     "MRR@10": float(np.mean([rr.mean() for rr in per_query.values()])), "per_query": per_query,
                     "seconds": round(time.perf_counter() - started)})
        say(f"  {set_name:<8} {loss:<9} {penalty:<7g} MRR@10 {rows[-1]['MRR@10']:.4f} "
              f"({rows[-1]['seconds']}s)")
    return rows


def breakdown(packages: list[Package], chosen: dict) -> list[str]:
    """The chosen configuration's held-out MRR@10 per language and per query kind, beside the shipped and BM25's."""
    lines = [f"  {'':<22} {'n':>5} {'learned':>8} {'shipped':>8} {'bm25':>8}"]
    groups: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    for package in packages:
        learned = chosen["per_query"][package.name]
        shipped, bm25 = recorded_rr(package.baseline_rank), recorded_rr(package.bm25_rank)
        groups.setdefault(f"language {package.language}", []).append((learned, shipped, bm25))
        for kind in sorted(set(package.kinds)):
            mask = package.kinds == kind
            groups.setdefault(f"kind {kind}", []).append((learned[mask], shipped[mask], bm25[mask]))
    for label, parts in sorted(groups.items()):
        means = [np.mean([part[i].mean() for part in parts]) for i in range(3)]
        count = sum(len(part[0]) for part in parts)
        lines.append(f"  {label:<22} {count:>5} " + " ".join(f"{m:>8.4f}" for m in means))
    return lines


def recorded_baseline(data: np.lib.npyio.NpzFile) -> np.ndarray:
    """The shipped ranking's first-hit ranks a features file recorded (``hand_rank`` in files made before it left)."""
    return data["shipped_rank"] if "shipped_rank" in data.files else data["hand_rank"]


def baseline_row(packages: list[Package], field: str) -> float:
    """Macro MRR@10 of a recorded ranking (``baseline_rank`` or ``bm25_rank``) over the packages."""
    return float(np.mean([recorded_rr(getattr(p, field)).mean() for p in packages]))


def manifest_digest() -> str:
    """SHA-256 of the training manifest (which package versions the queries were mined from)."""
    return hashlib.sha256(MANIFEST.read_bytes()).hexdigest()


def provenance(script: str) -> dict[str, str]:
    """When, by which command and from which manifest a model file of ``script`` (a name in training/) was made."""
    return {"version": time.strftime("%Y%m%d"), "command": " ".join(["python", f"training/{script}", *sys.argv[1:]]),
            "manifest_sha256": manifest_digest()}


def write_blend(path: Path, packages: list[Package], chosen: dict, full: np.ndarray, lexical: np.ndarray,
                command: str, counts: dict[str, int], ignored: set[str], labels: str,
                container_credit: float = 0.0) -> None:
    """The weights file: both models with their feature names, and what produced them.

    ``ignored`` columns are out of the features: too few training queries set them, or the command left them out.
    """
    features = supported(FEATURE_SETS[chosen["features"]], ignored)
    models = {
        "full": {"features": list(features), "weights": [round(float(w), 6) for w in full]},
        "lexical": {"features": list(without_dense(features)), "weights": [round(float(w), 6) for w in lexical]},
    }
    data = {
        "version": time.strftime("%Y%m%d") + f"-{chosen['features']}-{chosen['loss']}"
                   + ("-definitions" if labels == "label" else "")  # apart from the fits on the rulers' rule
                   + (f"-credit{container_credit:g}" if container_credit else "")
                   # two fits of one day are two versions
                   + "-" + hashlib.sha256(json.dumps(models, sort_keys=True).encode()).hexdigest()[:8],
        "command": command,
        "manifest_sha256": manifest_digest(),
        "embedding_model": EMBEDDING,
        "training": {"packages": {p.name: {"language": p.language, "queries": p.queries, "features_sha256": p.digest}
                                  for p in packages},
                     "queries": int(sum(p.queries for p in packages)),
                     "loss": chosen["loss"], "penalty": chosen["penalty"],
                     "cv_mrr10": None if math.isnan(chosen["MRR@10"]) else round(chosen["MRR@10"], 4),
                     "labels": labels, "container_credit": container_credit,
                     "queries_with_column": dict(sorted(counts.items()))},  # sorted: a refit rewrites no line
        "ignored": sorted(ignored),
        "models": models,
    }
    path.write_text(json.dumps(data, indent=1) + "\n")


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cv", action="store_true", help="print the cross-validation table only")
    parser.add_argument("--no-cv", action="store_true", help="fit the one configuration given, no cross-validation")
    parser.add_argument("--features", default=",".join(FEATURE_SETS), help="feature sets to try")
    parser.add_argument("--losses", default=",".join(LOSSES))
    parser.add_argument("--penalties", default=",".join(map(str, PENALTIES)))
    parser.add_argument("--tables", type=Path, default=FEATURES,
                        help="the features folder to fit on (default: the embedding model's, features.py's output)")
    parser.add_argument("--out", type=Path, default=fitted_blend_path(EMBEDDING),
                        help="default: the file the Searcher reads for this embedding model")
    parser.add_argument("--add", help="comma-separated features (columns or products, e.g. described_type*card) "
                        "added to every feature set")
    parser.add_argument("--kind-weights", help="comma-separated KIND=WEIGHT: a query of that kind weighs WEIGHT times "
                        "as much in the loss as the package's other queries (e.g. docstring=2; "
                        "docstring_private: a docstring query whose definition is not public)")
    parser.add_argument("--ignore", help="comma-separated columns the model does without, however many training "
                        "queries set them (e.g. evidence only made-up queries teach)")
    parser.add_argument("--labels", choices=("label", "ruler_label"), default="label",
                        help="what counts as a right answer: the definition itself (label, the default) or also a "
                             "class or module whose lines hold it, as the rulers count (see load_packages)")
    parser.add_argument("--container-credit", type=float, default=0.0,
                        help="with --labels label, the listwise target of a class or module around the answer "
                             "(a partial answer; the answer is 1)")
    parser.add_argument("--kinds", type=Path, default=KIND_WEIGHTS,
                        help="the query-kind model whose chances fill is_report and is_description (default: the "
                             "shipped asked.json; a candidate of fit_asked.py --out)")
    args = parser.parse_args()
    if args.container_credit and args.labels != "label":
        parser.error("--container-credit grades the definition labels: use it with --labels label")
    packages = [p for p in load_packages(args.tables, labels=args.labels, container_credit=args.container_credit,
                                         kinds=args.kinds) if p.split == "train"]
    if args.add:
        added = tuple(args.add.split(","))
        FEATURE_SETS.update({name: (*features, *added) for name, features in FEATURE_SETS.items()})
    if args.kind_weights:
        by_kind = {kind: float(weight) for kind, weight in (item.split("=") for item in args.kind_weights.split(","))}
        for package in packages:
            package.query_weight = np.array([by_kind.get(str(kind), 1.0) for kind in package.kinds])
    say(f"{len(packages)} training packages, {sum(p.queries for p in packages)} queries "
          f"({', '.join(sorted({p.language for p in packages}))})")
    configs = [(f, loss, float(penalty)) for f in args.features.split(",") for loss in args.losses.split(",")
               for penalty in args.penalties.split(",")]
    counts = support(packages)
    ignored = {name for name, count in counts.items() if count < MIN_SUPPORT_QUERIES}
    say(f"columns set in fewer than {MIN_SUPPORT_QUERIES} training queries (left out): "
        f"{', '.join(sorted(ignored)) or 'none'}")
    if args.ignore:
        ignored |= set(args.ignore.split(","))
        say(f"left out as asked: {args.ignore}")
    if args.no_cv:
        if len(configs) != 1:
            parser.error("--no-cv fits one configuration: give one feature set, loss and penalty")
        set_name, loss, penalty = configs[0]
        chosen = {"features": set_name, "loss": loss, "penalty": penalty, "MRR@10": float("nan")}
    else:
        rows = cross_validate(packages, configs, ignored)
        say(f"  shipped ranking (recorded) MRR@10 {baseline_row(packages, 'baseline_rank'):.4f}")
        say(f"  BM25                       MRR@10 {baseline_row(packages, 'bm25_rank'):.4f}")
        chosen = max(rows, key=lambda row: row["MRR@10"])
        say(f"held out, per language and kind (mean of package means), {chosen['features']} {chosen['loss']} "
            f"{chosen['penalty']:g}:")
        for line in breakdown(packages, chosen):
            say(line)
    if args.cv:
        return
    features = supported(FEATURE_SETS[chosen["features"]], ignored)
    full = fit(packages, features, chosen["loss"], chosen["penalty"])
    lexical = fit(packages, without_dense(features), chosen["loss"], chosen["penalty"])
    write_blend(args.out, packages, chosen, full, lexical, provenance("fit_blend.py")["command"], counts, ignored,
                args.labels, args.container_credit)
    say(f"chose {chosen['features']} {chosen['loss']} {chosen['penalty']:g}; wrote {args.out}")
    for name, weight in zip(features, full):
        say(f"  {name:<34} {weight:+.3f}")


if __name__ == "__main__":
    main()
