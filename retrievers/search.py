"""Hybrid search over one index: BM25, two vector views, symbol names and file mentions.

Within one query the lexical and dense scores are blended linearly after
normalisation (``score = w_card*cos_card + w_code*cos_code + w_bm25*bm25/max``):
on our benchmark this beat Reciprocal Rank Fusion of the same lists, which throws
away how *much* better the first hit is. Symbol names and file paths the query
mentions (``Searcher.search``, ``File "requests/sessions.py", line 12``) add bonuses.
All weights are named here.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import numpy as np

from .embeddings import EmbeddingUnavailable
from .fusion import max_normalise, reciprocal_rank_fusion, weighted_blend
from .grep import (
    GrepAnswer,
    PatternError,
    compile_pattern,
    exact_chunk_evidence,
    is_code_block,
    rank_lines,
    results_for,
    search_lines,
)
from .index import CodeIndex, IndexMissing, closing_connection, vector_backend_errors
from .languages import is_documentation
from .query_shape import TYPE_KINDS, described_kind, head_phrase, is_question, without_framing
from .results import CodeResult, code_result
from .scope import Scope, ScopeError, dense_depth, within
from .snapshot import IndexSnapshot, LexicalScores, committed_generation, open_snapshot
from .textstore import TextStore
from .tokenize import STOP_WORDS, split_identifier, stem, tokenize_query, with_abbreviations

LEXICAL_CANDIDATES = 100
DENSE_CANDIDATES = 100
WEIGHTS = {"card": 0.5, "code": 0.4, "bm25": 0.1, "symbol": 0.25, "mention": 0.3, "name": 0.15}
SYMBOL_EXACT_BONUS = 1.0
SYMBOL_PREFIX_BONUS = 0.4
TEST_DEMOTION = 0.5
# Documentation and config windows are not implementation: demoted like tests under that focus.
TEXT_DEMOTION = 0.5
# A query worded like a type's description ("Raised when ...", "A field that ...") lifts types this much.
TYPE_DESCRIPTION_BONUS = 0.3
# Before that bonus, such a type is worth at least this share of its best-matching member's score: a class
# is described by what its methods do.
MEMBER_EVIDENCE = 0.9
# "Validator which succeeds if ..." describes a kind of Validator: its subclasses are lifted this much.
SUBCLASS_BONUS = 0.15
# An ``impl Trait for Type`` block is rarely what a description asks for: the trait and the type hold the docs.
IMPL_DEMOTION = 0.5
# A type with more members than this is a facade (a trait of 100 adaptors): no single member describes it.
MAX_LIFT_MEMBERS = 40
# A description opening with a verb ("Returns the ...") is a function's; types step back.
CALLABLE_TYPE_FACTOR = 0.7
# Long inputs (issue reports) are mostly context: the vectors see their beginning,
# BM25 sees all of it, and mentioned files matter more.
LONG_QUERY_WORDS = 60
LONG_QUERY_WEIGHTS = {"card": 0.35, "code": 0.35, "bm25": 0.5, "symbol": 0.15, "mention": 0.4, "name": 0.1}
MAX_QUERY_CHARS = 20_000
# An issue report's title and first lines say what it is about; the rest (logs, tracebacks) is
# for BM25 and mentions, and embedding it would cost ~6x the time of a short query.
LONG_QUERY_DENSE_CHARS = 600
# Text pasted from the code (a line, a message, a block) ranks the definition holding it above any other
# evidence: the blend's weights add up to under 2, and the type lifts multiply that by at most 1.5.
EXACT_WEIGHT = 10.0
# Not in a long input that is not a pasted block (an issue report): its code lines are mostly traceback
# frames, which mention matching already weighs, and the deepest frame is rarely where the fix goes.
# Lexical-only on the issue ruler, full weight cost file Acc@5 0.771 -> 0.714; 0.3 left files equal and
# func Acc@10 0.559 -> 0.529, for 12 ms more per report.
LONG_QUERY_EXACT_WEIGHT = 0.0
# With a path/language filter, Chroma's top-k is asked for this many times more candidates (the
# filter is applied to them), up to SCOPED_DENSE_MAX; a filter keeping at most SCOPED_EXACT_COSINES
# chunks gets the exact cosine of every one of them instead.
SCOPED_DENSE_MAX = 2_000
SCOPED_EXACT_COSINES = 1_000
# A snapshot a newer commit replaced stays open this long (at most this many), so a graph run pinned to
# it (LLM calls included: up to twice the LLM timeout) can finish on it; one in use is never closed.
RETIRED_KEEP_S = 30.0
RETIRED_KEEP = 8
# After the Chroma server failed to answer, searches use lexical evidence alone for this long
# before trying it again (so a down server costs one failed connection, not one per query).
VECTORS_RETRY_AFTER_S = 10.0

CODE_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
PATH_MENTION = re.compile(r"[A-Za-z0-9_\-./\\]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|mjs|cjs)\b")
TRACEBACK_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([A-Za-z_][A-Za-z0-9_]*))?')


@dataclass
class Hit:
    """One ranked chunk with the evidence behind its score."""

    chunk_id: int
    score: float
    path: str = ""
    start_line: int = 0
    end_line: int = 0
    symbol: str = ""
    kind: str = ""
    language: str = ""
    is_test: bool = False
    text: str = ""
    signature: str = ""
    docstring: str = ""
    components: dict = field(default_factory=dict)

    def to_result(self, snippet: str = "") -> CodeResult:
        """The public result shape (:class:`retrievers.results.CodeResult`)."""
        return code_result(self.path, self.start_line, self.end_line, self.symbol, self.kind, self.score, snippet)


@dataclass
class LexicalSignal:
    """What the rerank/rewrite heuristics need from BM25 (the raw top score and its gap), and why vectors were not used.

    ``generation`` names the index generation searched.
    ``vectors_note`` is empty unless the query wanted vectors and could not have them (a Chroma
    server down): the ranking then rests on BM25, symbols and mentions, and callers can say so.
    """

    top_score: float = 0.0
    second_score: float = 0.0
    candidates: int = 0
    vectors_note: str = ""
    generation: str = ""

    @property
    def gap(self) -> float:  # noqa: D102
        return self.top_score - self.second_score


MARKUP = re.compile(r":(?:class|func|meth|attr|mod|obj|data|exc|ref|py:\w+):|`+|\*\*")


def plain_text(text: str) -> str:
    """Text without reST roles, backticks and bold markers, which only confuse the sentence encoder."""
    return " ".join(MARKUP.sub(" ", text).split()) if len(text) < 2000 else MARKUP.sub(" ", text)


def is_code_like(token: str) -> bool:
    """``store_parse_result``, ``Searcher.search``, ``parseHTTP``, ``a::b`` look like code; ``the`` does not."""
    if "." in token or "::" in token or "_" in token.strip("_"):
        return True
    camel_word = token[:1].isupper() and any(c.islower() for c in token[1:]) and len(token) > 3
    return len(split_identifier(token)) > 1 or camel_word


MIN_SENTENCE_WORDS = 4
SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+)\s*([A-Z][a-z]+)\b")


def code_tokens(query: str) -> list[str]:
    """The identifier-like tokens of a query, in order, without duplicates."""
    # "Returns the ...", "Register a ...": in a sentence, a capital that only starts it makes no class name
    # (a query of a word or two, "Searcher", still names one).
    capitalised = ({match.start(1) for match in SENTENCE_START.finditer(query)}
                   if len(query.split()) >= MIN_SENTENCE_WORDS else set())
    found = dict.fromkeys(match.group().replace("::", ".") for match in CODE_TOKEN.finditer(query)
                          if match.start() not in capitalised and is_code_like(match.group()))
    return [t.strip(".") for t in found if t.strip(".")]


def name_evidence(query: str, tokens: list[str]) -> list[str]:
    """The query tokens a definition's name may match: with code abbreviations, without a question's framing."""
    expanded = with_abbreviations(tokens)
    return without_framing(expanded) if is_question(query) else expanded


def mentioned_paths(query: str) -> list[str]:
    """File paths a query names (plain mentions and traceback frames), as written."""
    paths = [m.group(1) for m in TRACEBACK_FRAME.finditer(query)]
    paths += PATH_MENTION.findall(query)
    return list(dict.fromkeys(p.replace("\\", "/") for p in paths))


def collapse_duplicates(hits: list[Hit]) -> list[Hit]:
    """Best first, one hit per (path, symbol): overloads and re-definitions collapse to the best."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for hit in sorted(hits, key=lambda h: -h.score):
        key = (hit.path, hit.symbol)
        if key not in seen:
            seen.add(key)
            unique.append(hit)
    return unique


class Searcher:
    """Answers queries against a :class:`CodeIndex`; safe to share between threads.

    Every call works on one :class:`IndexSnapshot` from start to end (see :mod:`retrievers.snapshot`):
    the newest committed generation, or one a caller pins by name (a graph run keeps the generation
    its first search saw). Calls on the same snapshot are serialised by its lock; a snapshot that a
    newer commit replaced stays open while in use and for ``RETIRED_KEEP_S`` after, so a pinned run
    can finish on it.
    """

    def __init__(self, index: CodeIndex) -> None:
        """Open the index for reading (raises ``IndexMissing`` if there is none)."""
        index.require()
        self.index = index
        # Guards the snapshots and the probe connection; never held while searching.
        self._lock = threading.Lock()
        self._probe = index.connect()
        self._identity = self._database_identity()
        self._loaded_vectors_version = self._vectors_version()
        self._current = open_snapshot(index)
        self._retired: list[IndexSnapshot] = []
        # Chroma's client and the retry state after a server failure are shared by every snapshot.
        self._vectors_lock = threading.RLock()
        self._vectors_retry_at = 0.0
        self._vectors_error = ""
        self._pinned = threading.local()

    def close(self) -> None:
        """Release the connections, the generations' leases and this index's Chroma client."""
        with self._lock:
            for snapshot in [self._current, *self._retired]:
                snapshot.close()
            self._retired = []
            self._probe.close()
        self.index.reopen_vectors()

    # ----------------------------------------------------------------- snapshots
    def _database_identity(self) -> tuple[int, int] | None:
        try:
            stat = self.index.db_path.stat()
        except OSError:
            return None
        return (stat.st_dev, stat.st_ino)

    def _vectors_version(self) -> str:
        row = self._probe.execute("SELECT value FROM meta WHERE key = 'vectors_version'").fetchone()
        return row[0] if row else ""

    def _refresh_locked(self) -> None:
        """Open a snapshot of a newer committed generation, if there is one (caller holds ``_lock``)."""
        identity = self._database_identity()
        if identity is None:
            repo = self.index.repo
            raise IndexMissing(f"the index of {repo} was deleted; run: grepgraph index {repo}")
        if identity != self._identity:
            # Rebuilt from scratch (another format, or deleted and re-indexed): a new database file.
            self._probe.close()
            self._probe = self.index.connect()
            self._identity = identity
            with self._vectors_lock:
                self.index.reopen_vectors()
        vectors_version = self._vectors_version()
        if vectors_version != self._loaded_vectors_version:
            with self._vectors_lock:
                self.index.reopen_vectors()
            self._loaded_vectors_version = vectors_version
        if committed_generation(self._probe) != self._current.generation:
            fresh = open_snapshot(self.index)
            self._current.retired_at = time.monotonic()
            self._retired.insert(0, self._current)
            self._current = fresh
        self._close_unused_locked()

    def _close_unused_locked(self) -> None:
        now = time.monotonic()
        keep = []
        for number, snapshot in enumerate(self._retired):
            expired = number >= RETIRED_KEEP or now - (snapshot.retired_at or now) > RETIRED_KEEP_S
            if expired and snapshot.users == 0:
                snapshot.close()
            else:
                keep.append(snapshot)
        self._retired = keep

    @contextmanager
    def _snapshot(self, generation: str | None = None) -> Iterator[IndexSnapshot]:
        """Hold one snapshot for a call: ``generation`` if still open, else the newest.

        A call nested in another on the same thread (``chunk_text`` inside ``connection_lock``) gets the
        snapshot the outer call holds.
        """
        pinned: list[IndexSnapshot] = self._pinned.__dict__.setdefault("stack", [])
        if pinned and generation in (None, pinned[-1].generation):
            yield pinned[-1]
            return
        with self._lock:
            self._refresh_locked()
            snapshot = next((s for s in self._retired if s.generation == generation), self._current)
            snapshot.users += 1
        try:
            with snapshot.lock:
                pinned.append(snapshot)
                try:
                    yield snapshot
                finally:
                    pinned.pop()
        finally:
            with self._lock:
                snapshot.users -= 1
                self._close_unused_locked()

    def refresh(self) -> None:
        """Pick up a newer committed index, if one was written since loading."""
        with self._lock:
            self._refresh_locked()

    @property
    def chunk_count(self) -> int:
        """Chunks in the newest committed generation."""
        with self._snapshot() as snapshot:
            return snapshot.chunk_count

    @property
    def generation(self) -> str:
        """The newest committed generation's name."""
        with self._snapshot() as snapshot:
            return snapshot.generation

    # ----------------------------------------------------------------- components
    def lexical_scores(self, query_tokens: list[str], k: int = LEXICAL_CANDIDATES,
                       allowed: np.ndarray | None = None, *,
                       generation: str | None = None) -> tuple[dict[int, float], LexicalSignal]:
        """Top-``k`` chunk ids by BM25 (among ``allowed`` ids, if given) and the raw score signal."""
        with self._snapshot(generation) as snapshot:
            return self._lexical_top(snapshot, snapshot.lexical(query_tokens), query_tokens, k, allowed)

    @staticmethod
    def _lexical_top(snapshot: IndexSnapshot, scores: LexicalScores, query_tokens: list[str], k: int,
                     allowed: np.ndarray | None) -> tuple[dict[int, float], LexicalSignal]:
        if not query_tokens:
            return {}, LexicalSignal(generation=snapshot.generation)
        found, best = scores.top(k, allowed)
        signal = LexicalSignal(best[0] if best else 0.0, best[1] if len(best) > 1 else 0.0, len(found),
                               generation=snapshot.generation)
        return found, signal

    @staticmethod
    def _keys_to_chunks(snapshot: IndexSnapshot, view: str, key_scores: dict[str, float]) -> dict[int, float]:
        if not key_scores:
            return {}
        column = "card_key" if view == "card" else "code_key"
        keys = list(key_scores)
        found: dict[int, float] = {}
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            for chunk_id, key in snapshot.connection.execute(
                f"SELECT id, {column} FROM chunks WHERE {column} IN ({marks})", batch  # noqa: S608
            ):
                found[chunk_id] = key_scores[key]
        return found

    def dense_scores(self, text: str, k: int = DENSE_CANDIDATES) -> dict[str, dict[int, float]]:
        """Top-``k`` chunk ids by cosine similarity, per embedded view."""
        with self._snapshot() as snapshot:
            return self._dense(snapshot, text, k)[0]

    def _dense(self, snapshot: IndexSnapshot, text: str,
               k: int) -> tuple[dict[str, dict[int, float]], np.ndarray | None]:
        """The top-``k`` cosines per view, and the query's vector (``None`` when nothing was embedded)."""
        if not text.strip():
            return {}, None
        with self._vectors_lock:
            store = self.index.vector_store(snapshot.views)
            if not any(store.cached_count(view) for view in snapshot.views):
                return {}, None  # nothing embedded yet (lexical-only index): don't pay for the query embedding
            vector = self.index.embedder.embed([text])[0]
            found = {view: store.query(view, vector, k) for view in snapshot.views}
        return {view: self._keys_to_chunks(snapshot, view, keys) for view, keys in found.items()}, vector

    def _guarded_dense(self, snapshot: IndexSnapshot, text: str,
                       k: int) -> tuple[dict[str, dict[int, float]], np.ndarray | None]:
        """:meth:`_dense`, or nothing while the Chroma server is unreachable (retried after a pause)."""
        with self._vectors_lock:
            if time.monotonic() < self._vectors_retry_at:
                return {}, None
        try:
            found = self._dense(snapshot, text, k)
        except vector_backend_errors() as error:
            self._vectors_failed(error)
            return {}, None
        with self._vectors_lock:
            self._vectors_error = ""
        return found

    def _vectors_failed(self, error: BaseException) -> None:
        url = self.index.chroma_url or "the embedded database"
        named = isinstance(error, EmbeddingUnavailable) or str(error).startswith("the Chroma server")
        detail = str(error) if named else f"the Chroma server at {url}: {error}"
        with self._vectors_lock:
            self._vectors_retry_at = time.monotonic() + VECTORS_RETRY_AFTER_S
            self._vectors_error = (f"vectors unavailable: {detail}; lexical results only,"
                                   f" retried after {VECTORS_RETRY_AFTER_S:g}s")
            self.index.reopen_vectors()

    def _fill_dense(self, snapshot: IndexSnapshot, dense: dict[str, dict[int, float]], query_vector: np.ndarray,
                    candidates: set[int]) -> None:
        """Exact cosines for candidates a view's top-k missed, so the blend compares like with like."""
        for view, scores in dense.items():
            missing = [c for c in candidates if c not in scores]
            if not missing:
                continue
            column = "card_key" if view == "card" else "code_key"
            marks = ",".join("?" * len(missing))
            key_of = dict(snapshot.connection.execute(
                f"SELECT id, {column} FROM chunks WHERE id IN ({marks})", missing))  # noqa: S608
            with self._vectors_lock:
                store = self.index.vector_store(snapshot.views)
                sims = store.similarities(view, query_vector, list(set(key_of.values())))
            for chunk_id, key in key_of.items():
                if key in sims:
                    scores[chunk_id] = sims[key]
            # Chunks with no vector (still being embedded, or tests in a large repository) get the
            # pool's median cosine: unknown is neutral, and a zero would bury an exact name match.
            known = sorted(scores.values())
            neutral = known[len(known) // 2] if known else 0.0
            for chunk_id in candidates:
                scores.setdefault(chunk_id, neutral)

    def name_coverage(self, query_tokens: list[str], pool: set[int],
                      snapshot: IndexSnapshot | None = None) -> dict[int, float]:
        """Share of each candidate's name words that the query uses (``write_usage`` vs "Writes a usage line")."""
        if snapshot is None:
            with self._snapshot() as current:
                return self.name_coverage(query_tokens, pool, current)
        wanted = set(query_tokens)
        if not pool or not wanted:
            return {}
        ids = list(pool)
        marks = ",".join("?" * len(ids))
        coverage = {}
        for chunk_id, name in snapshot.connection.execute(
                f"SELECT id, name FROM chunks WHERE id IN ({marks}) AND kind NOT IN ('module', 'text')", ids):  # noqa: S608
            words = {stem(part) for part in split_identifier(name) if len(part) > 1}
            if words and not name.startswith("__"):
                share = len(words & wanted) / len(words)
                if share:
                    coverage[chunk_id] = share
        return coverage

    @staticmethod
    def symbol_matches(snapshot: IndexSnapshot, query: str) -> dict[int, float]:
        """Chunks whose name or qualified symbol the query spells out (exact > prefix)."""
        matches: dict[int, float] = {}
        for token in code_tokens(query)[:12]:
            name = token.rsplit(".", 1)[-1]
            if len(name) < 3:
                continue
            for chunk_id, symbol in snapshot.connection.execute(
                "SELECT id, symbol FROM chunks WHERE name = ? COLLATE NOCASE AND kind NOT IN ('module', 'text')",
                (name,),
            ):
                exact = symbol.lower() == token.lower() or symbol.lower().endswith("." + token.lower())
                bonus = SYMBOL_EXACT_BONUS if exact or "." not in token else SYMBOL_PREFIX_BONUS
                matches[chunk_id] = max(matches.get(chunk_id, 0.0), bonus)
            if len(name) >= 5:
                for (chunk_id,) in snapshot.connection.execute(
                    "SELECT id FROM chunks WHERE name LIKE ? ESCAPE '\\' AND kind NOT IN ('module', 'text') LIMIT 50",
                    (name.replace("_", "\\_") + "%",),
                ):
                    matches.setdefault(chunk_id, SYMBOL_PREFIX_BONUS)
        return matches

    @staticmethod
    def mention_matches(snapshot: IndexSnapshot, query: str) -> dict[int, float]:
        """Chunks in files the query names, with a stronger bonus for traceback frames' functions."""
        mentions = mentioned_paths(query)
        if not mentions:
            return {}
        files = set()
        for mention in mentions:
            parts = PurePosixPath(mention).parts
            # Match the longest repository-relative suffix of the mentioned path.
            for width in range(min(len(parts), 6), 0, -1):
                suffix = "/".join(parts[-width:])
                hits = [p for p in snapshot.paths if p == suffix or p.endswith("/" + suffix)]
                if hits and (width > 1 or len(hits) <= 3):
                    files.update(hits)
                    break
        if not files:
            return {}
        frames = {(m.group(3) or "") for m in TRACEBACK_FRAME.finditer(query)}
        matches: dict[int, float] = {}
        marks = ",".join("?" * len(files))
        for chunk_id, name, kind in snapshot.connection.execute(
            f"SELECT id, name, kind FROM chunks WHERE path IN ({marks})", sorted(files)  # noqa: S608
        ):
            matches[chunk_id] = 1.0 if name in frames else 0.5
        return matches

    # ----------------------------------------------------------------- search
    def search(self, query: str, limit: int = 10, *, keywords: list[str] | None = None,
               dense_text: str | None = None, focus: str = "implementation",
               candidates: int = LEXICAL_CANDIDATES, weights: dict[str, float] | None = None,
               fusion: str = "blend", dense: bool = True, kind_priors: bool = True,
               scope: Scope | None = None, exact: bool = True,
               generation: str | None = None) -> tuple[list[Hit], LexicalSignal]:
        """Rank chunks for a query.

        Args:
            query: The user's text (natural language, code names or a whole issue report).
            limit: How many hits to return.
            keywords: Extra BM25 terms (from a caller or an LLM rewrite), searched with the query.
            dense_text: Text to embed instead of the query (e.g. a hypothetical passage).
            focus: ``implementation`` demotes test files, ``tests`` demotes the rest, ``all`` neither.
            candidates: Size of each candidate list before blending.
            weights: Override the blend weights (``card``, ``code``, ``bm25``, ``symbol``, ``mention``, ``name``).
            fusion: ``blend`` (weighted normalised scores, the default) or ``rrf`` (rank fusion of the
                same lists; kept to measure against).
            dense: Use the vectors (``False``: a lexical-only probe, ~1 ms).
            kind_priors: Let a query worded like a type's description lift types, their members' evidence
                and the subclasses of a base class it names (``False``: kept to measure against).
            scope: Only chunks of the files these path globs and languages keep (applied before every cut).
            exact: Let text pasted from the code (the query, a quoted string, a code line) rank the
                definition that holds it first (with the default weights).
            generation: Search this index generation if it is still open (else the newest).

        Returns:
            The hits, best first, and the BM25 signal of the query (with the generation searched).
        """
        query = query[:MAX_QUERY_CHARS]
        with self._snapshot(generation) as snapshot:
            paths, allowed = snapshot.scope_filter(scope)
            tokens = tokenize_query(query + " " + " ".join(keywords or []))
            bm25 = snapshot.lexical(tokens)
            lexical, signal = self._lexical_top(snapshot, bm25, tokens, candidates, allowed)
            if weights is not None and not any(weights.get(view) for view in ("card", "code")):
                dense = False
            long_query = len(query.split()) > LONG_QUERY_WORDS
            exact_weight = 0.0
            if weights is None and exact:
                pasted_block = long_query and is_code_block(query)
                exact_weight = LONG_QUERY_EXACT_WEIGHT if long_query and not pasted_block else EXACT_WEIGHT
            dense_input = dense_text or (query[:LONG_QUERY_DENSE_CHARS] if long_query else query[:2000])
            wants_vectors = dense
            depth = dense_depth(candidates, allowed, snapshot.chunk_count, SCOPED_DENSE_MAX)
            cosines, query_vector = (self._guarded_dense(snapshot, plain_text(dense_input), depth) if dense
                                     else ({}, None))
            symbols = self.symbol_matches(snapshot, query + " " + " ".join(keywords or []))
            described = described_kind(query) if kind_priors else None
            mentions = self.mention_matches(snapshot, query)
            store = TextStore(snapshot.connection, snapshot.text_cache)
            pasted = exact_chunk_evidence(store, query, paths) if exact_weight else {}
            if allowed is not None:
                cosines, symbols, mentions = (
                    {view: within(scores, allowed) for view, scores in cosines.items()},
                    within(symbols, allowed), within(mentions, allowed))
            pool = set(lexical) | set(symbols) | set(pasted) | {c for scores in cosines.values() for c in scores}
            if cosines and allowed is not None and allowed.size <= SCOPED_EXACT_COSINES:
                pool |= {int(c) for c in allowed}
            if cosines and query_vector is not None:
                try:
                    self._fill_dense(snapshot, cosines, query_vector, pool)
                except vector_backend_errors() as error:
                    self._vectors_failed(error)
                    cosines = {}
            vectors_error = self._vectors_error
            if wants_vectors and vectors_error:
                signal.vectors_note = vectors_error
            missing_lexical = [c for c in pool if c not in lexical]
            lexical_all = {**lexical, **(bm25.of(missing_lexical) if tokens else {})}
            if weights is None:
                weights = LONG_QUERY_WEIGHTS if long_query else WEIGHTS
            components: dict[str, dict[int, float]] = {
                "exact": pasted,
                "bm25": max_normalise(lexical_all),
                "name": self.name_coverage(name_evidence(query, tokens), pool, snapshot),
                "symbol": symbols,
                "mention": {c: v for c, v in mentions.items() if c in pool or v >= 1.0},
                **{view: {c: max(v, 0.0) for c, v in scores.items()} for view, scores in cosines.items()},
            }
            if not cosines:
                # No vectors yet (first index still embedding): lexical evidence carries the ranking.
                weights = {**weights, "bm25": 1.0}
            if fusion == "rrf":
                ranked_lists: list[list[int]] = [sorted(values, key=values.__getitem__, reverse=True)
                                                 for name, values in components.items()
                                                 if weights.get(name) and values]
                list_weights = [weights[name] for name, values in components.items() if weights.get(name) and values]
                blended = reciprocal_rank_fusion(ranked_lists, list_weights)
            else:
                blended = weighted_blend(components, weights)
            # Demotions and the type lifts below can raise a hit from deeper down.
            depth = max(limit * 2, 50)
            top = blended[:depth]
            listed = {chunk_id for chunk_id, _ in top}
            top += [(chunk_id, 0.0) for chunk_id in pasted if chunk_id not in listed]
            hits = self._hydrate(snapshot, top, components)
            wants_type = described == "type"
            head = head_phrase(query) if kind_priors else []
            # "Validator which ...": opening with the name of a base class describes a kind of it.
            subclasses = self._subclasses_named_by(snapshot, head if wants_type else head[:1])
            wants_type = wants_type or bool(subclasses)
            if wants_type:
                hits = self._lift_types_by_members(snapshot, hits, components)
        for hit in hits:
            if hit.kind == "impl":
                hit.score *= IMPL_DEMOTION
            if described == "callable" and hit.kind in TYPE_KINDS:
                hit.score *= CALLABLE_TYPE_FACTOR
            if wants_type and hit.kind in TYPE_KINDS:
                hit.score *= 1 + TYPE_DESCRIPTION_BONUS
                if hit.symbol in subclasses:
                    hit.score *= 1 + SUBCLASS_BONUS
            # Added after the type lifts, so a class never inherits its member's pasted line.
            hit.score += exact_weight * pasted.get(hit.chunk_id, 0.0)
            hit.score *= focus_factor(focus, hit.is_test, is_documentation(hit.path, hit.kind))
        return collapse_duplicates(hits)[:limit], signal

    # ----------------------------------------------------------------- filters, literal and regex search
    def scope_filter(self, scope: Scope | None) -> tuple[list[str] | None, np.ndarray | None]:
        """The paths and sorted chunk ids a scope keeps in the newest generation (``None, None``: everything).

        Raises :class:`ScopeError` when the scope keeps no indexed file (a mistyped glob).
        """
        with self._snapshot() as snapshot:
            return snapshot.scope_filter(scope)

    def grep(self, text: str, mode: str = "literal", limit: int = 10, *, focus: str = "implementation",
             scope: Scope | None = None) -> GrepAnswer:
        """Every line matching a literal or RE2 regex, ranked (see :mod:`retrievers.grep`), the best ``limit`` kept.

        Raises :class:`PatternError` for a pattern that can't be searched and :class:`ScopeError` for a
        filter that keeps no file.
        """
        pattern = compile_pattern(text, mode)
        with self._snapshot() as snapshot:
            paths, _ = snapshot.scope_filter(scope)
            store = TextStore(snapshot.connection, snapshot.text_cache)
            if not store.has_texts() and snapshot.languages:
                repo = self.index.repo
                raise IndexMissing(f"the index of {repo} has no stored texts; run: grepgraph index --rebuild {repo}")
            kinds = snapshot.file_kinds()

            def priority(path: str) -> float:
                return focus_factor(focus, *kinds.get(path, (False, False)))

            found = search_lines(store, pattern, paths, priority)
            ranked = rank_lines(found.matches, priority)
            results = results_for(snapshot.connection, ranked[:limit])
        return GrepAnswer(results, len(found.matches), found.complete, found.stopped, snapshot.generation)

    def _lift_types_by_members(self, snapshot: IndexSnapshot, hits: list[Hit], components: dict) -> list[Hit]:
        """Give each type the evidence of its best-scoring member (fetching the type if it ranked lower)."""
        best_member: dict[tuple[str, str], float] = {}
        for hit in hits:
            if hit.kind in ("method", "function") and "." in hit.symbol:
                owner = (hit.path, hit.symbol.rsplit(".", 1)[0])
                best_member[owner] = max(best_member.get(owner, 0.0), hit.score)
        if not best_member:
            return hits
        present = {(hit.path, hit.symbol): hit for hit in hits}
        missing = [owner for owner in best_member if owner not in present]
        if missing:
            kinds = ",".join("?" * len(TYPE_KINDS))
            found = []
            for path, symbol in missing:
                found += [row[0] for row in snapshot.connection.execute(
                    f"SELECT id FROM chunks WHERE path = ? AND symbol = ? AND kind IN ({kinds})",  # noqa: S608
                    (path, symbol, *TYPE_KINDS))]
            for hit in self._hydrate(snapshot, [(chunk_id, 0.0) for chunk_id in found], components):
                present[(hit.path, hit.symbol)] = hit
                hits.append(hit)
        for owner, score in best_member.items():
            hit = present.get(owner)
            if hit is not None and self._member_count(snapshot, *owner) > MAX_LIFT_MEMBERS:
                continue
            if hit is not None and hit.kind in TYPE_KINDS and MEMBER_EVIDENCE * score > hit.score:
                hit.score = MEMBER_EVIDENCE * score
                hit.components["member"] = round(hit.score, 4)
        return hits

    @staticmethod
    def _member_count(snapshot: IndexSnapshot, path: str, symbol: str) -> int:
        """How many definitions a type holds directly."""
        return snapshot.connection.execute(
            "SELECT count(*) FROM chunks WHERE path = ? AND parent = ?", (path, symbol)).fetchone()[0]

    @staticmethod
    def _subclasses_named_by(snapshot: IndexSnapshot, words: list[str]) -> set[str]:
        """Symbols of the classes that derive (at any depth) from a class a head-phrase word names."""
        found: set[str] = set()
        frontier = [word for word in words if len(word) > 2 and word not in STOP_WORDS]
        for _ in range(4):  # a few levels of hierarchy; cycles end at ``found``
            if not frontier:
                break
            marks = ",".join("?" * len(frontier))
            children = {source for (source,) in snapshot.connection.execute(
                f"SELECT DISTINCT source FROM edges WHERE kind = 'inherits' AND target COLLATE NOCASE IN ({marks})"  # noqa: S608
                " LIMIT 500", frontier)} - found
            found |= children
            frontier = [child.rsplit(".", 1)[-1] for child in children]
        return found

    @staticmethod
    def _hydrate(snapshot: IndexSnapshot, ranked: list[tuple[int, float]], components: dict) -> list[Hit]:
        if not ranked:
            return []
        ids = [chunk_id for chunk_id, _ in ranked]
        marks = ",".join("?" * len(ids))
        rows = {row[0]: row for row in snapshot.connection.execute(
            "SELECT id, path, start_line, end_line, symbol, kind, language, is_test, text, signature, docstring"
            f" FROM chunks WHERE id IN ({marks})", ids)}  # noqa: S608
        hits = []
        for chunk_id, score in ranked:
            row = rows.get(chunk_id)
            if row is None:
                continue
            hits.append(Hit(chunk_id, score, row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]),
                            row[8], row[9], row[10],
                            {name: round(values[chunk_id], 4) for name, values in components.items()
                             if chunk_id in values}))
        return hits

    def reading(self) -> AbstractContextManager[IndexSnapshot]:
        """Hold the newest snapshot for a few reads: its ``connection`` and ``generation`` stay consistent."""
        return self._snapshot()

    @property
    def connection(self) -> sqlite3.Connection:
        """The connection of the snapshot this thread holds (inside :meth:`connection_lock`).

        Outside it, the newest snapshot's connection: for single-threaded scripts only.
        """
        pinned = self._pinned.__dict__.get("stack")
        if pinned:
            return pinned[-1].connection
        with self._lock:
            return self._current.connection

    def connection_lock(self) -> AbstractContextManager[IndexSnapshot]:
        """Hold the newest snapshot for this thread; :attr:`connection` is its connection meanwhile."""
        return self._snapshot()

    def chunk_text(self, path: str, symbol: str) -> str:
        """The stored text of a chunk, by path and symbol (empty if unknown)."""
        with self._snapshot() as snapshot:
            row = snapshot.connection.execute(
                "SELECT text FROM chunks WHERE path = ? AND symbol = ? LIMIT 1", (path, symbol)).fetchone()
        return row[0] if row else ""


def focus_factor(focus: str, is_test: bool, is_doc: bool) -> float:
    """The score factor of a result under a focus: tests and docs demoted for implementation, the rest for tests."""
    factor = 1.0
    if (focus == "implementation" and is_test) or (focus == "tests" and not is_test):
        factor *= TEST_DEMOTION
    if focus == "implementation" and is_doc:
        factor *= TEXT_DEMOTION
    return factor


def open_searcher(repo: str, index_dir: str | None = None) -> Searcher:
    """Open a searcher on ``repo``'s index."""
    return Searcher(CodeIndex(repo, index_dir))


__all__ = ["GrepAnswer", "Hit", "LexicalSignal", "PatternError", "Scope", "ScopeError", "Searcher",
           "closing_connection", "code_tokens", "is_code_like", "mentioned_paths", "open_searcher"]
