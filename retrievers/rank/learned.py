"""The ranking: one linear score over a candidate's evidence, its kind and the query's shape, learned.

Every candidate of the pool gets a row of named columns (the evidence of :class:`retrievers.rank.search.Searcher`,
what kind of definition it is, its members' evidence, and the query's shape as 0/1 flags); a model names its
features as columns or products of columns (``multiline*bm25``) and scores ``exp(weights . features)``. The focus is a
column too (``out_of_focus``): a model that weighs it demotes tests and documentation by its own learned factor,
and the focus rule's is not applied on top. The weights are fitted on queries mined from packages outside the
rulers (``training/fit_blend.py``, cross-validated by project) and kept with the command and data manifest that
produced them in ``learned_blend.json`` next to this module; they replaced the hand-set weights, kind priors and
type lifts that ranked before (2026-11-29).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..core.model import TYPE_KINDS
from ..lexical.tokenize import split_identifier, stem
from ..source.languages import is_documentation

BLEND_FILE = Path(__file__).with_name("learned_blend.json")
# Cosines of another embedding model are other features: a model fitted on its own has its own file (named by
# the setting); a model without one (MiniLM quantized, Ollama) is scored with the MiniLM fit.
# Evidence the Searcher gathers, by component name (absent means 0).
EVIDENCE = ("card", "code", "bm25", "name", "symbol", "mention", "calls", "message", "exact")
# ... and which of those finds are the surest, as 0/1 evidence of their own: the blend learns what each is worth.
EVIDENCE_FLAGS = (
    "symbol_exact",  # the query spells out the qualified name (not only a prefix of it)
    "mention_frame",  # a traceback frame of the query names this definition
    "exact_verbatim",  # pasted text found spaced as pasted (not only with other whitespace)
)
# The evidence a type is also described by: the best value among its methods in the pool.
MEMBER_EVIDENCE = ("card", "code", "bm25", "name")
# The candidate's language, as a 0/1 column each (tsx counts as TypeScript): evidence weighs differently per language.
LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "java")
CANDIDATE_COLUMNS = (
    *EVIDENCE,
    *EVIDENCE_FLAGS,
    "kind_type", "kind_callable", "kind_impl", "kind_module", "kind_text",
    *(f"member_{name}" for name in MEMBER_EVIDENCE),
    "exception_type",  # an exception type of the repository, for a query worded like one's description
    "subclass",  # a subclass of the base class a description opens with
    "lines",  # log(1 + the definition's length in lines)
    "out_of_focus",  # how many reasons the focus has to demote it (a test, documentation: see focus_factor)
    "file_words",  # share of the file name's words the query uses
    "file_card",  # the best card cosine among the pool's candidates of the same file
    "file_pool",  # log(1 + how many of the pool's candidates share its file)
    "owner_card",  # a method's type's card cosine, when the type is pooled
    *(f"lang_{language}" for language in LANGUAGES),
)
# Evidence standardised within the query's pool ((value - mean) / deviation): how far a candidate stands out,
# whatever the query's overall level of similarity.
STANDARDISED = ("card", "code", "bm25")
# The columns of :mod:`retrievers.query.asked`'s chances, by the kind of query each is the chance of.
ASKED_COLUMNS = {"report": "is_report", "description": "is_description"}
QUERY_FLAGS = ("multiline", "statement", "question", "described_type", "described_callable", "wants_type",
               "describes_exception", "pasted_block", *ASKED_COLUMNS.values())
COLUMNS = (*CANDIDATE_COLUMNS, *QUERY_FLAGS, "one")
# ... and ranked within it: 1 / rank by that evidence (ties share the better rank), 0 where it is absent.
POOL_COLUMNS = (*(f"{name}_z" for name in STANDARDISED), *(f"{name}_rr" for name in STANDARDISED))
MIN_DEVIATION = 1e-3
CALLABLE_KINDS = frozenset({"function", "method"})


@dataclass(frozen=True)
class QueryShape:
    """What the query's wording says, as the learned features read it (a column each, 0/1 but for the kind).

    ``described`` is the likelier kind by ``type_probability`` (:func:`retrievers.query.described.kind_of`), which
    decides ``wants_type``; the columns ``described_type`` / ``described_callable`` read ``type_probability``,
    the model of :mod:`retrievers.query.described` (0 for both where it has no say: a text too long to describe one
    definition). ``asked`` holds P(the query is a report) and P(it is a description), the model of
    :mod:`retrievers.query.asked` (``kind_chances``).
    """

    multiline: bool
    statement: bool
    question: bool
    described: str | None
    wants_type: bool
    describes_exception: bool
    pasted_block: bool
    type_probability: float | None = None
    asked: Mapping[str, float] = field(default_factory=dict)

    def flags(self) -> dict[str, float]:
        """The value of every query flag column."""
        is_type = self.type_probability
        return {"multiline": float(self.multiline), "statement": float(self.statement),
                "question": float(self.question), "described_type": 0.0 if is_type is None else is_type,
                "described_callable": 0.0 if is_type is None else 1.0 - is_type, "wants_type": float(self.wants_type),
                "describes_exception": float(self.describes_exception), "pasted_block": float(self.pasted_block),
                **{column: self.asked.get(kind, 0.0) for kind, column in ASKED_COLUMNS.items()}}


class PoolRow(NamedTuple):
    """The columns of one pooled chunk the features read (see :func:`retrievers.rank.hits.pool_rows`).

    A named tuple: a search builds hundreds of them, and a tuple is the cheapest record to make.
    """

    path: str
    symbol: str
    kind: str
    start_line: int = 0
    end_line: int = 0
    language: str = ""
    is_test: bool = False
    # Read in the same pass for the rest of the search: name coverage and the vector store's keys.
    name: str = ""
    card_key: str = ""
    code_key: str = ""


def candidate_columns(ids: list[int], rows: dict[int, PoolRow], components: dict[str, dict[int, float]],
                      shape: QueryShape, exceptions: dict[int, str] | set[int], subclasses: set[str],
                      query_words: set[str], focus: str = "implementation",
                      unembedded: set[int] | frozenset[int] = frozenset()) -> dict[str, np.ndarray]:
    """Every column of :data:`COLUMNS` and :data:`POOL_COLUMNS` for the candidates ``ids`` (in that order).

    ``query_words`` are the query's stemmed words a name may use (as name coverage reads them); ``unembedded``
    the candidates whose card cosine is the neutral stand-in for a missing vector.
    """
    size = len(ids)
    found = [rows.get(chunk_id, NO_ROW) for chunk_id in ids]

    def evidence(name: str) -> np.ndarray:
        values = components.get(name)
        if not values:
            return np.zeros(size)
        return np.fromiter(map(values.get, ids, repeat(0.0)), dtype=np.float64, count=size)

    columns = {name: evidence(name) for name in (*EVIDENCE, *EVIDENCE_FLAGS)}
    traits = trait_matrix(found)
    columns.update({name: traits[:, index] for index, name in enumerate(TRAIT_COLUMNS)})
    groups = pool_groups(found)
    columns.update(member_columns(groups, columns))
    columns["exception_type"] = np.array([chunk_id in exceptions for chunk_id in ids], dtype=np.float64)
    lengths = np.fromiter((row.end_line - row.start_line + 1 for row in found), dtype=np.float64, count=size)
    columns["lines"] = np.log1p(np.maximum(lengths, 1.0))
    by_path = {path: file_words(path, query_words) for path in {row.path for row in found}}  # a file's rows share it
    columns["file_words"] = np.fromiter((by_path[row.path] for row in found), dtype=np.float64, count=size)
    columns["out_of_focus"] = out_of_focus(found, focus)
    columns.update(context_columns(ids, found, columns["card"], unembedded, groups))
    columns["subclass"] = np.array([chunk_id in rows and rows[chunk_id].symbol in subclasses
                                    and rows[chunk_id].kind in TYPE_KINDS for chunk_id in ids], dtype=np.float64)
    for name, value in shape.flags().items():
        columns[name] = np.full(size, value)
    columns["one"] = np.ones(size)
    columns.update(pool_columns(columns))
    return columns


def pool_columns(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The columns of :data:`POOL_COLUMNS`, read from one query's pool (all of its candidates)."""
    found = {}
    for name in STANDARDISED:
        values = columns[name]
        deviation = values.std() if len(values) else 0.0
        found[f"{name}_z"] = (values - values.mean()) / max(deviation, MIN_DEVIATION) if len(values) else values
        found[f"{name}_rr"] = reciprocal_rank_in_pool(values)
    return found


def reciprocal_rank_in_pool(values: np.ndarray) -> np.ndarray:
    """1 / (1 + how many candidates have more of this evidence); 0 for a candidate without any."""
    if not len(values):
        return values
    ordered = np.sort(-values)
    better = np.searchsorted(ordered, -values, side="left")
    return np.where(values > 0, 1.0 / (1.0 + better), 0.0)


NO_ROW = PoolRow("", "", "")
# The columns a candidate's kind and language decide, in :func:`kind_and_language`'s order.
TRAIT_COLUMNS = ("kind_type", "kind_callable", "kind_impl", "kind_module", "kind_text",
                 *(f"lang_{language}" for language in LANGUAGES))


def trait_matrix(found: list[PoolRow]) -> np.ndarray:
    """The :data:`TRAIT_COLUMNS` of each row (one row of the matrix per pooled row)."""
    pairs = list(zip(map(attrgetter("kind"), found), map(attrgetter("language"), found)))
    number = {pair: position for position, pair in enumerate(dict.fromkeys(pairs))}
    table = np.array([kind_and_language(*pair) for pair in number], dtype=np.float64).reshape(
        len(number), len(TRAIT_COLUMNS))
    return table[np.fromiter(map(number.__getitem__, pairs), dtype=np.intp, count=len(pairs))]


@cache  # a few dozen kinds and languages
def kind_and_language(kind: str, language: str) -> tuple[float, ...]:
    """The 0/1 values of :data:`TRAIT_COLUMNS` for a kind and a language (tsx counts as TypeScript)."""
    language = "typescript" if language == "tsx" else language
    return (float(kind in TYPE_KINDS), float(kind in CALLABLE_KINDS), float(kind == "impl"),
            float(kind == "module"), float(kind == "text"), *(float(language == known) for known in LANGUAGES))


def file_words(path: str, query_words: set[str]) -> float:
    """Share of the words of a file's name (``http_client.py``: http, client) the query uses."""
    parts = file_name_words(path)
    if not parts or not query_words:
        return 0.0
    return sum(part in query_words for part in parts) / len(parts)


@lru_cache(maxsize=65536)
def file_name_words(path: str) -> tuple[str, ...]:
    """The stemmed words of a file's name, once per path (every search of a repository meets the same files)."""
    name = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return tuple(stem(part) for part in split_identifier(name) if len(part) > 1)


def out_of_focus(found: list[PoolRow], focus: str) -> np.ndarray:
    """How many times :func:`retrievers.rank.ranking.focus_factor` would demote each row under ``focus``."""
    tests = np.fromiter(map(attrgetter("is_test"), found), dtype=np.float64, count=len(found))
    if focus == "implementation":
        return tests + np.fromiter(map(documentation, map(attrgetter("path"), found), map(attrgetter("kind"), found)),
                                   dtype=np.float64, count=len(found))
    return 1.0 - tests if focus == "tests" else np.zeros(len(found))


@lru_cache(maxsize=65536)
def documentation(path: str, kind: str) -> bool:
    """:func:`is_documentation`, once per path and kind (a search asks for hundreds of rows, a repository's again)."""
    return bool(path) and is_documentation(path, kind)


def owner_of(row: PoolRow) -> tuple[str, str] | None:
    """The (path, type) a method belongs to, or ``None`` for anything that is not a member."""
    if row.kind in CALLABLE_KINDS and "." in row.symbol:
        return row.path, row.symbol.rsplit(".", 1)[0]
    return None


class PoolGroups(NamedTuple):
    """Which of a pool's candidates share a file, and which are types and methods of the same type.

    Files and types are numbered in order of appearance, so the context and member columns are array operations.
    """

    file_of: np.ndarray  # each candidate's file number
    files: int
    types: np.ndarray  # positions of the type definitions ...
    type_group: np.ndarray  # ... and each one's (path, symbol) number
    members: np.ndarray  # positions of the methods ...
    member_group: np.ndarray  # ... and their type's (path, symbol) number
    groups: int


def pool_groups(found: list[PoolRow]) -> PoolGroups:
    """Number the pool's files and types in one pass over its rows."""
    file_number: dict[str, int] = {}
    group_number: dict[tuple[str, str], int] = {}
    file_of, types, type_group, members, member_group = [], [], [], [], []
    for position, row in enumerate(found):
        file_of.append(file_number.setdefault(row.path, len(file_number)))
        if row.kind in TYPE_KINDS:
            types.append(position)
            type_group.append(group_number.setdefault((row.path, row.symbol), len(group_number)))
        elif (owner := owner_of(row)) is not None:
            members.append(position)
            member_group.append(group_number.setdefault(owner, len(group_number)))

    def array(values: list[int]) -> np.ndarray:
        return np.array(values, dtype=np.intp)

    return PoolGroups(array(file_of), len(file_number), array(types), array(type_group), array(members),
                      array(member_group), len(group_number))


def context_columns(ids: list[int], found: list[PoolRow], card: np.ndarray,
                    unembedded: set[int] | frozenset[int] = frozenset(),
                    groups: PoolGroups | None = None) -> dict[str, np.ndarray]:
    """``file_card``, ``file_pool`` and ``owner_card``: what the pool says about a candidate's file and type.

    A file's best cosine is read from its embedded candidates; a file with none (its vectors still pending)
    gets the median of the other files' best, as a missing cosine gets the pool's median: unknown is neutral,
    and a chunk's neutral stand-in would sink a whole file below every file whose best is a real maximum.
    """
    groups = groups or pool_groups(found)
    file_of = groups.file_of
    embedded = (np.fromiter((chunk_id not in unembedded for chunk_id in ids), dtype=bool, count=len(ids))
                if unembedded else np.ones(len(ids), dtype=bool))
    best = np.zeros(groups.files)  # cosines are at least 0 (the evidence clips them)
    np.maximum.at(best, file_of[embedded], card[embedded])
    has_vectors = np.zeros(groups.files, dtype=bool)
    has_vectors[file_of[embedded]] = True
    neutral = float(np.median(best[has_vectors])) if has_vectors.any() else 0.0
    type_card = np.zeros(groups.groups)
    np.maximum.at(type_card, groups.type_group, card[groups.types])
    owner_card = np.zeros(len(ids))
    owner_card[groups.members] = type_card[groups.member_group]
    return {
        "file_card": np.where(has_vectors, best, neutral)[file_of],
        "file_pool": np.log1p(np.bincount(file_of, minlength=groups.files)[file_of].astype(np.float64)),
        "owner_card": owner_card,
    }


def member_columns(groups: PoolGroups, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """For each type candidate, the best evidence among its members in the pool (0 for the rest)."""
    stacked = np.stack([columns[name] for name in MEMBER_EVIDENCE], axis=1)
    best = np.full((groups.groups, len(MEMBER_EVIDENCE)), -np.inf)
    np.maximum.at(best, groups.member_group, stacked[groups.members])
    members = np.zeros_like(stacked)
    members[groups.types] = best[groups.type_group]
    members[np.isneginf(members)] = 0.0  # a type none of whose members is pooled
    return {f"member_{name}": members[:, index] for index, name in enumerate(MEMBER_EVIDENCE)}


def design_matrix(columns: dict[str, np.ndarray], features: tuple[str, ...]) -> np.ndarray:
    """One row per candidate, one column per feature; a feature ``a*b`` is the product of columns a and b."""
    size = len(columns["one"])
    matrix = np.ones((size, len(features)))
    for index, feature in enumerate(features):
        for part in feature.split("*"):
            matrix[:, index] *= columns[part]
    return matrix


@dataclass(frozen=True)
class LinearModel:
    """One fitted linear scorer: feature names and their weights."""

    features: tuple[str, ...]
    weights: np.ndarray

    def score(self, columns: dict[str, np.ndarray]) -> np.ndarray:
        """``weights . features`` per candidate (a log-score: higher is better)."""
        return design_matrix(columns, self.features) @ self.weights

    @property
    def weighs_focus(self) -> bool:
        """Whether the model demotes out-of-focus candidates itself (a learned factor instead of focus_factor's)."""
        return any("out_of_focus" in feature.split("*") for feature in self.features)

    @property
    def evidence(self) -> frozenset[str]:
        """The evidence components the model reads (the Searcher gathers only those)."""
        return frozenset(part for feature in self.features for part in feature.split("*")
                         if part in EVIDENCE or part.startswith("member_"))


@dataclass(frozen=True)
class LearnedBlend:
    """The models of one weights file: ``full`` (with vectors) and ``lexical`` (a search without them)."""

    version: str
    full: LinearModel
    lexical: LinearModel

    def model(self, with_vectors: bool) -> LinearModel:
        """The model for a search that has cosines, or for one that has none."""
        return self.full if with_vectors else self.lexical


def read_blend(path: Path) -> LearnedBlend:
    """Parse a weights file (raises ``ValueError`` for one this code cannot score with)."""
    data = json.loads(path.read_text())
    models = {}
    for name in ("full", "lexical"):
        entry = data["models"][name]
        features = tuple(entry["features"])
        unknown = {part for feature in features for part in feature.split("*")} - {*COLUMNS, *POOL_COLUMNS}
        if unknown or len(features) != len(entry["weights"]):
            raise ValueError(f"{path}: model {name} names unknown columns {sorted(unknown)} or miscounts its weights")
        models[name] = LinearModel(features, np.asarray(entry["weights"], dtype=np.float64))
    if data.get("unsupported"):
        raise ValueError(f"{path}: leaves columns {data['unsupported']} to a ranking that no longer exists; refit it")
    return LearnedBlend(str(data["version"]), models["full"], models["lexical"])


def fitted_blend_path(embedding_model: str) -> Path:
    """Where the weights fitted on ``embedding_model``'s cosines live (``training/fit_blend.py`` writes there)."""
    return BLEND_FILE if embedding_model == "minilm" else \
        BLEND_FILE.with_name(f"learned_blend-{embedding_model.replace(':', '_')}.json")


def blend_file(embedding_model: str = "minilm") -> Path:
    """The weights fitted on ``embedding_model``'s cosines when shipped, else the MiniLM fit's.

    A quantized copy's cosines are its model's to ~0.99, so it reads its model's fit.
    """
    own = fitted_blend_path(embedding_model.removesuffix("-quantized"))
    return own if own.exists() else BLEND_FILE


@lru_cache(maxsize=4)
def load_blend(path: Path = BLEND_FILE) -> LearnedBlend:
    """A shipped weights file, read once."""
    return read_blend(path)
