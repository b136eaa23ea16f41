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
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import numpy as np

from .bm25 import top_k
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
from .index import CodeIndex, IndexMissing, closing_connection, load_segments, vector_backend_errors
from .languages import is_documentation, is_test_path
from .query_shape import TYPE_KINDS, described_kind, head_phrase
from .scope import Scope, ScopeError, chunk_ids_in, dense_depth, within
from .textstore import TextCache, TextStore
from .tokenize import STOP_WORDS, split_identifier, stem, tokenize_query

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
SCOPE_CACHE_SIZE = 64
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

    def to_result(self, snippet: str = "") -> dict:
        """The public result shape: path, lines, symbol, kind, score, snippet."""
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line,
                "symbol": self.symbol, "kind": self.kind, "score": round(float(self.score), 4),
                "snippet": snippet}


@dataclass
class LexicalSignal:
    """What the rerank/rewrite heuristics need from BM25 (the raw top score and its gap), and why vectors were not used.

    ``vectors_note`` is empty unless the query wanted vectors and could not have them (a Chroma
    server down): the ranking then rests on BM25, symbols and mentions, and callers can say so.
    """

    top_score: float = 0.0
    second_score: float = 0.0
    candidates: int = 0
    vectors_note: str = ""

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
    """Answers queries against a :class:`CodeIndex`; safe to share between threads."""

    def __init__(self, index: CodeIndex) -> None:
        """Open the index for reading (raises ``IndexMissing`` if there is none)."""
        index.require()
        self.index = index
        self._lock = threading.RLock()
        self._connection = index.connect()
        self._generation: str | None = None
        self._last_lexical: tuple | None = None
        self._vectors_retry_at = 0.0
        self._vectors_error = ""
        self._load()

    def close(self) -> None:
        """Release the SQLite connection and this index's Chroma client."""
        self._connection.close()
        self.index.reopen_vectors()

    # ----------------------------------------------------------------- loading
    def _current_generation(self) -> str:
        row = self._connection.execute("SELECT value FROM meta WHERE key = 'bm25_generation'").fetchone()
        return row[0] if row else ""

    def _database_identity(self) -> tuple[int, int] | None:
        try:
            stat = self.index.db_path.stat()
        except OSError:
            return None
        return (stat.st_dev, stat.st_ino)

    def _vectors_version(self) -> str:
        row = self._connection.execute("SELECT value FROM meta WHERE key = 'vectors_version'").fetchone()
        return row[0] if row else ""

    def _load(self) -> None:
        with self._lock:
            identity = self._database_identity()
            if identity is None:
                repo = self.index.repo
                raise IndexMissing(f"the index of {repo} was deleted; run: grepgraph index {repo}")
            if identity != getattr(self, "_identity", identity):
                # Rebuilt from scratch (another format, or deleted and re-indexed): a new database file.
                self._connection.close()
                self._connection = self.index.connect()
                self._generation = None
                self.index.reopen_vectors()
            self._identity = identity
            vectors_version = self._vectors_version()
            if vectors_version != getattr(self, "_loaded_vectors_version", vectors_version):
                self.index.reopen_vectors()
            self._loaded_vectors_version = vectors_version
            generation = self._current_generation()
            if generation == self._generation:
                return
            generation_dir = self.index.bm25_generation_dir(self._connection)
            live = np.fromiter((row[0] for row in self._connection.execute("SELECT id FROM chunks ORDER BY id")),
                               dtype=np.int64)
            self._segments = [(ids, bm25, np.isin(ids, live)) for ids, bm25 in load_segments(generation_dir)]
            self._last_lexical = None
            self._chunk_count = int(live.size)
            self._views = self.index.views(self._chunk_count)
            self._generation = generation
            self._languages = dict(self._connection.execute("SELECT path, language FROM files"))
            self._paths = list(self._languages)
            self._scopes: dict[Scope, tuple[list[str], np.ndarray]] = {}
            self._text_cache = TextCache()
            self._kinds: dict[str, tuple[bool, bool]] | None = None

    def refresh(self) -> None:
        """Pick up a newer committed index, if one was written since loading."""
        self._load()

    @property
    def chunk_count(self) -> int:  # noqa: D102
        return self._chunk_count

    # ----------------------------------------------------------------- components
    def lexical_scores(self, query_tokens: list[str], k: int = LEXICAL_CANDIDATES,
                       allowed: np.ndarray | None = None) -> tuple[dict[int, float], LexicalSignal]:
        """Top-``k`` chunk ids by BM25 (among ``allowed`` ids, if given) and the raw score signal."""
        if not query_tokens:
            return {}, LexicalSignal()
        last = self._last_lexical
        if last is not None and last[0] == tuple(query_tokens):
            # The graph probes BM25 before deciding on a rewrite, then retrieves with the same tokens.
            _, all_ids, all_scores = last
        else:
            ids_parts, score_parts = [], []
            for ids, bm25, live in self._segments:
                scores = bm25.scores(query_tokens)
                ids_parts.append(ids[live])
                score_parts.append(np.asarray(scores)[live])
            if not ids_parts:
                return {}, LexicalSignal()
            all_ids = np.concatenate(ids_parts)
            all_scores = np.concatenate(score_parts)
            # Segments are in id order (the delta holds newer ids), so all_ids is sorted: kept for _bm25_of.
            self._last_lexical = (tuple(query_tokens), all_ids, all_scores)
        # A filter applies before the cut, so a small part of the repository still gets its best k.
        best = top_k(all_scores if allowed is None else np.where(np.isin(all_ids, allowed), all_scores, 0.0), k)
        found = {int(all_ids[i]): float(all_scores[i]) for i in best}
        values = [float(all_scores[i]) for i in best[:2]]
        signal = LexicalSignal(values[0] if values else 0.0, values[1] if len(values) > 1 else 0.0, len(found))
        return found, signal

    def _bm25_of(self, tokens: list[str], chunk_ids: list[int]) -> dict[int, float]:
        """BM25 scores of specific chunks (vector candidates BM25 did not rank), from the last scoring."""
        if not tokens or not chunk_ids:
            return {}
        last = self._last_lexical
        if last is None or last[0] != tuple(tokens):
            self.lexical_scores(tokens, 1)
            last = self._last_lexical
        if last is None:
            return {}
        _, all_ids, all_scores = last
        if all_ids.size == 0:
            return {}
        wanted = np.asarray(sorted(chunk_ids), dtype=np.int64)
        positions = np.clip(np.searchsorted(all_ids, wanted), 0, all_ids.size - 1)
        hit = all_ids[positions] == wanted
        return {int(c): float(all_scores[p]) for c, p in zip(wanted[hit], positions[hit])}

    def _keys_to_chunks(self, view: str, key_scores: dict[str, float]) -> dict[int, float]:
        if not key_scores:
            return {}
        column = "card_key" if view == "card" else "code_key"
        keys = list(key_scores)
        found: dict[int, float] = {}
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            for chunk_id, key in self._connection.execute(
                f"SELECT id, {column} FROM chunks WHERE {column} IN ({marks})", batch  # noqa: S608
            ):
                found[chunk_id] = key_scores[key]
        return found

    def dense_scores(self, text: str, k: int = DENSE_CANDIDATES) -> dict[str, dict[int, float]]:
        """Top-``k`` chunk ids by cosine similarity, per embedded view."""
        if not text.strip():
            return {}
        store = self.index.vector_store(self._views)
        if not any(store.cached_count(view) for view in self._views):
            return {}  # nothing embedded yet (lexical-only index): don't pay for the query embedding
        vector = self.index.embedder.embed([text])[0]
        self._query_vector = vector
        return {view: self._keys_to_chunks(view, store.query(view, vector, k)) for view in self._views}

    def _guarded_dense(self, text: str, k: int) -> dict[str, dict[int, float]]:
        """:meth:`dense_scores`, or nothing while the Chroma server is unreachable (retried after a pause)."""
        if time.monotonic() < self._vectors_retry_at:
            return {}
        try:
            found = self.dense_scores(text, k)
        except vector_backend_errors() as error:
            self._vectors_failed(error)
            return {}
        self._vectors_error = ""
        return found

    def _vectors_failed(self, error: BaseException) -> None:
        self._vectors_retry_at = time.monotonic() + VECTORS_RETRY_AFTER_S
        url = self.index.chroma_url or "the embedded database"
        named = isinstance(error, EmbeddingUnavailable) or str(error).startswith("the Chroma server")
        detail = str(error) if named else f"the Chroma server at {url}: {error}"
        self._vectors_error = (f"vectors unavailable: {detail}; lexical results only,"
                               f" retried after {VECTORS_RETRY_AFTER_S:g}s")
        self.index.reopen_vectors()

    def _fill_dense(self, dense: dict[str, dict[int, float]], candidates: set[int]) -> None:
        """Exact cosines for candidates a view's top-k missed, so the blend compares like with like."""
        store = self.index.vector_store(self._views)
        for view, scores in dense.items():
            missing = [c for c in candidates if c not in scores]
            if not missing:
                continue
            column = "card_key" if view == "card" else "code_key"
            marks = ",".join("?" * len(missing))
            key_of = dict(self._connection.execute(
                f"SELECT id, {column} FROM chunks WHERE id IN ({marks})", missing))  # noqa: S608
            sims = store.similarities(view, self._query_vector, list(set(key_of.values())))
            for chunk_id, key in key_of.items():
                if key in sims:
                    scores[chunk_id] = sims[key]
            # Chunks with no vector (still being embedded, or tests in a large repository) get the
            # pool's median cosine: unknown is neutral, and a zero would bury an exact name match.
            known = sorted(scores.values())
            neutral = known[len(known) // 2] if known else 0.0
            for chunk_id in candidates:
                scores.setdefault(chunk_id, neutral)

    def name_coverage(self, query_tokens: list[str], pool: set[int]) -> dict[int, float]:
        """Share of each candidate's name words that the query uses (``write_usage`` vs "Writes a usage line")."""
        wanted = set(query_tokens)
        if not pool or not wanted:
            return {}
        ids = list(pool)
        marks = ",".join("?" * len(ids))
        coverage = {}
        for chunk_id, name in self._connection.execute(
                f"SELECT id, name FROM chunks WHERE id IN ({marks}) AND kind NOT IN ('module', 'text')", ids):  # noqa: S608
            words = {stem(part) for part in split_identifier(name) if len(part) > 1}
            if words and not name.startswith("__"):
                share = len(words & wanted) / len(words)
                if share:
                    coverage[chunk_id] = share
        return coverage

    def symbol_matches(self, query: str) -> dict[int, float]:
        """Chunks whose name or qualified symbol the query spells out (exact > prefix)."""
        matches: dict[int, float] = {}
        for token in code_tokens(query)[:12]:
            name = token.rsplit(".", 1)[-1]
            if len(name) < 3:
                continue
            for chunk_id, symbol in self._connection.execute(
                "SELECT id, symbol FROM chunks WHERE name = ? COLLATE NOCASE AND kind NOT IN ('module', 'text')",
                (name,),
            ):
                exact = symbol.lower() == token.lower() or symbol.lower().endswith("." + token.lower())
                bonus = SYMBOL_EXACT_BONUS if exact or "." not in token else SYMBOL_PREFIX_BONUS
                matches[chunk_id] = max(matches.get(chunk_id, 0.0), bonus)
            if len(name) >= 5:
                for (chunk_id,) in self._connection.execute(
                    "SELECT id FROM chunks WHERE name LIKE ? ESCAPE '\\' AND kind NOT IN ('module', 'text') LIMIT 50",
                    (name.replace("_", "\\_") + "%",),
                ):
                    matches.setdefault(chunk_id, SYMBOL_PREFIX_BONUS)
        return matches

    def mention_matches(self, query: str) -> dict[int, float]:
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
                hits = [p for p in self._paths if p == suffix or p.endswith("/" + suffix)]
                if hits and (width > 1 or len(hits) <= 3):
                    files.update(hits)
                    break
        if not files:
            return {}
        frames = {(m.group(3) or "") for m in TRACEBACK_FRAME.finditer(query)}
        matches: dict[int, float] = {}
        marks = ",".join("?" * len(files))
        for chunk_id, name, kind in self._connection.execute(
            f"SELECT id, name, kind FROM chunks WHERE path IN ({marks})", sorted(files)  # noqa: S608
        ):
            matches[chunk_id] = 1.0 if name in frames else 0.5
        return matches

    # ----------------------------------------------------------------- search
    def search(self, query: str, limit: int = 10, *, keywords: list[str] | None = None,
               dense_text: str | None = None, focus: str = "implementation",
               candidates: int = LEXICAL_CANDIDATES, weights: dict[str, float] | None = None,
               fusion: str = "blend", dense: bool = True, kind_priors: bool = True,
               scope: Scope | None = None, exact: bool = True) -> tuple[list[Hit], LexicalSignal]:
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

        Returns:
            The hits, best first, and the BM25 signal of the query.
        """
        self.refresh()
        query = query[:MAX_QUERY_CHARS]
        with self._lock:
            paths, allowed = self.scope_filter(scope)
            tokens = tokenize_query(query + " " + " ".join(keywords or []))
            lexical, signal = self.lexical_scores(tokens, candidates, allowed)
            if weights is not None and not any(weights.get(view) for view in ("card", "code")):
                dense = False
            long_query = len(query.split()) > LONG_QUERY_WORDS
            exact_weight = 0.0
            if weights is None and exact:
                pasted_block = long_query and is_code_block(query)
                exact_weight = LONG_QUERY_EXACT_WEIGHT if long_query and not pasted_block else EXACT_WEIGHT
            dense_input = dense_text or (query[:LONG_QUERY_DENSE_CHARS] if long_query else query[:2000])
            wants_vectors = dense
            depth = dense_depth(candidates, allowed, self._chunk_count, SCOPED_DENSE_MAX)
            cosines = self._guarded_dense(plain_text(dense_input), depth) if dense else {}
            symbols = self.symbol_matches(query + " " + " ".join(keywords or []))
            mentions = self.mention_matches(query)
            store = TextStore(self._connection, self._text_cache)
            pasted = exact_chunk_evidence(store, query, paths) if exact_weight else {}
            if allowed is not None:
                cosines, symbols, mentions = (
                    {view: within(scores, allowed) for view, scores in cosines.items()},
                    within(symbols, allowed), within(mentions, allowed))
            pool = set(lexical) | set(symbols) | set(pasted) | {c for scores in cosines.values() for c in scores}
            if cosines and allowed is not None and allowed.size <= SCOPED_EXACT_COSINES:
                pool |= {int(c) for c in allowed}
            if cosines:
                try:
                    self._fill_dense(cosines, pool)
                except vector_backend_errors() as error:
                    self._vectors_failed(error)
                    cosines = {}
            if wants_vectors and self._vectors_error:
                signal.vectors_note = self._vectors_error
            missing_lexical = [c for c in pool if c not in lexical]
            lexical_all = {**lexical, **self._bm25_of(tokens, missing_lexical)}
            if weights is None:
                weights = LONG_QUERY_WEIGHTS if long_query else WEIGHTS
            components: dict[str, dict[int, float]] = {
                "exact": pasted,
                "bm25": max_normalise(lexical_all),
                "name": self.name_coverage(tokens, pool),
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
            hits = self._hydrate(top, components)
            wants_type = kind_priors and described_kind(query) == "type"
            head = head_phrase(query) if kind_priors else []
            # "Validator which ...": opening with the name of a base class describes a kind of it.
            subclasses = self._subclasses_named_by(head if wants_type else head[:1])
            wants_type = wants_type or bool(subclasses)
            if wants_type:
                hits = self._lift_types_by_members(hits, components)
        for hit in hits:
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
        """The paths and sorted chunk ids a scope keeps (``None, None``: everything).

        Raises :class:`ScopeError` when the scope keeps no indexed file (a mistyped glob).
        """
        if scope is None or scope.is_everything:
            return None, None
        with self._lock:
            kept = self._scopes.get(scope)
            if kept is None:
                paths = scope.allowed_paths(self._languages)
                if not paths:
                    raise ScopeError(f"no indexed file matches {scope.describe()}")
                kept = (paths, chunk_ids_in(self._connection, paths))
                if len(self._scopes) >= SCOPE_CACHE_SIZE:
                    self._scopes.clear()
                self._scopes[scope] = kept
            return kept

    def _file_kinds(self) -> dict[str, tuple[bool, bool]]:
        """``{path: (is test, is documentation)}`` of every indexed file, computed once per index generation."""
        if self._kinds is None:
            self._kinds = {path: (is_test_path(path, language), is_documentation(path, language))
                           for path, language in self._languages.items()}
        return self._kinds

    def grep(self, text: str, mode: str = "literal", limit: int = 10, *, focus: str = "implementation",
             scope: Scope | None = None) -> GrepAnswer:
        """Every line matching a literal or RE2 regex, ranked (see :mod:`retrievers.grep`), the best ``limit`` kept.

        Raises :class:`PatternError` for a pattern that can't be searched and :class:`ScopeError` for a
        filter that keeps no file.
        """
        pattern = compile_pattern(text, mode)
        self.refresh()
        with self._lock:
            paths, _ = self.scope_filter(scope)
            store = TextStore(self._connection, self._text_cache)
            if not store.has_texts() and self._languages:
                repo = self.index.repo
                raise IndexMissing(f"the index of {repo} has no stored texts; run: grepgraph index --rebuild {repo}")
            kinds = self._file_kinds()

            def priority(path: str) -> float:
                return focus_factor(focus, *kinds.get(path, (False, False)))

            found = search_lines(store, pattern, paths, priority)
            ranked = rank_lines(found.matches, priority)
            results = results_for(self._connection, ranked[:limit])
        return GrepAnswer(results, len(found.matches), found.complete, found.stopped)

    def _lift_types_by_members(self, hits: list[Hit], components: dict) -> list[Hit]:
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
                found += [row[0] for row in self._connection.execute(
                    f"SELECT id FROM chunks WHERE path = ? AND symbol = ? AND kind IN ({kinds})",  # noqa: S608
                    (path, symbol, *TYPE_KINDS))]
            for hit in self._hydrate([(chunk_id, 0.0) for chunk_id in found], components):
                present[(hit.path, hit.symbol)] = hit
                hits.append(hit)
        for owner, score in best_member.items():
            hit = present.get(owner)
            if hit is not None and hit.kind in TYPE_KINDS and MEMBER_EVIDENCE * score > hit.score:
                hit.score = MEMBER_EVIDENCE * score
                hit.components["member"] = round(hit.score, 4)
        return hits

    def _subclasses_named_by(self, words: list[str]) -> set[str]:
        """Symbols of the classes that derive (at any depth) from a class a head-phrase word names."""
        found: set[str] = set()
        frontier = [word for word in words if len(word) > 2 and word not in STOP_WORDS]
        for _ in range(4):  # a few levels of hierarchy; cycles end at ``found``
            if not frontier:
                break
            marks = ",".join("?" * len(frontier))
            children = {source for (source,) in self._connection.execute(
                f"SELECT DISTINCT source FROM edges WHERE kind = 'inherits' AND target COLLATE NOCASE IN ({marks})"  # noqa: S608
                " LIMIT 500", frontier)} - found
            found |= children
            frontier = [child.rsplit(".", 1)[-1] for child in children]
        return found

    def _hydrate(self, ranked: list[tuple[int, float]], components: dict) -> list[Hit]:
        if not ranked:
            return []
        ids = [chunk_id for chunk_id, _ in ranked]
        marks = ",".join("?" * len(ids))
        rows = {row[0]: row for row in self._connection.execute(
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

    @property
    def connection(self) -> sqlite3.Connection:
        """The searcher's SQLite connection; hold :meth:`connection_lock` while using it."""
        return self._connection

    def connection_lock(self) -> threading.RLock:
        """The lock that serialises use of :attr:`connection` between threads."""
        return self._lock

    def chunk_text(self, path: str, symbol: str) -> str:
        """The stored text of a chunk, by path and symbol (empty if unknown)."""
        with self._lock:
            row = self._connection.execute(
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
