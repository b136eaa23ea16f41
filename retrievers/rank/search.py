"""Hybrid search over one index: BM25, two vector views, symbol names and file mentions.

Every candidate of the pool (BM25's and the vectors' top, the symbols and files the query names, pasted code,
printed messages, callers, exception types) gets every evidence, and the learned blend of
:mod:`retrievers.rank.learned` scores it: one linear model over the evidence, the candidate's kind and language,
its file's and type's evidence and the query's shape, fitted on queries mined from many packages. A caller's own
``weights`` rank by a plain weighted blend of the normalised evidence instead (the benchmarks' BM25-only and
vectors-only baselines). The pool's sizes are named in :mod:`retrievers.rank.ranking`; the query's tokens, paths
and frames are read by :mod:`retrievers.query.parsing`.
"""

from __future__ import annotations

import logging
import sqlite3
from contextlib import AbstractContextManager

import numpy as np

from ..core.deadline import NO_DEADLINE, Deadline
from ..core.errors import IndexMissing, vector_backend_errors
from ..core.results import DEFAULT_LIMIT
from ..grep.lines import GrepAnswer, rank_lines, results_for, search_lines
from ..grep.patterns import PatternError, compile_pattern
from ..lexical.tokenize import repeated_by_frequency, tokenize_query
from ..query.asked import kind_chances
from ..query.described import kind_of, type_probability
from ..query.limits import check_query_length
from ..query.parsing import name_evidence, plain_text, reads_as_prose, without_environment_listing
from ..query.scope import Scope, ScopeError, dense_depth, within
from ..query.shape import describes_exception, head_phrase, is_multiline, is_question
from ..source.languages import is_documentation
from ..store.hierarchy import subclasses_named_by
from ..store.index import CodeIndex
from ..store.live import LiveSnapshots
from ..store.snapshot import IndexSnapshot, LexicalScores
from ..store.textstore import TextStore
from .evidence import (
    call_anchors,
    mention_matches,
    name_coverage,
    resolved_callers,
    symbol_matches,
)
from .exact import PastedEvidence, exact_chunk_evidence, is_code_block
from .fusion import max_normalise, reciprocal_rank_fusion, weighted_blend
from .gathered import Gathered, LexicalSignal
from .hits import hydrate, owner_types, pool_rows, scored_hits
from .learned import EVIDENCE, PoolRow, QueryShape, blend_file, load_blend
from .messages import template_evidence
from .nearest import NearestVectors
from .ranking import (
    CANDIDATES,
    FOCUS_DEMOTION,
    MAX_EXCEPTION_CANDIDATES,
    Hit,
    candidate_depth,
    collapse_duplicates,
    focus_factor,
)

log = logging.getLogger(__name__)

# With a path/language filter, Chroma's top-k is asked for this many times more candidates (the
# filter is applied to them), up to SCOPED_DENSE_MAX; a filter keeping at most SCOPED_EXACT_COSINES
# chunks gets the exact cosine of every one of them instead.
SCOPED_DENSE_MAX = 2_000
SCOPED_EXACT_COSINES = 1_000
NO_VECTORS_YET = "no vectors embedded yet: lexical evidence only"
STALE_VECTORS = ("the vector store was older than the index (vectors stored by another process after it was "
                 "loaded): candidates outside the vector top-k got the neutral cosine until the next refresh")

# What a search's signal says ranked its hits: the fitted weights, or the caller's own.
LEARNED_RANKING = "learned"
CALLER_WEIGHTS = "weights"


class Searcher:
    """Answers queries against a :class:`CodeIndex`; safe to share between threads, which search side by side.

    Every call works on one :class:`IndexSnapshot` from start to end, held through
    :class:`retrievers.store.live.LiveSnapshots`: the newest committed generation, or one a caller pins by
    name (a graph run keeps the generation its first search saw, which stays open for a while after a
    newer commit replaced it), read through a connection of the calling thread's own. No lock is held
    across a search: the query is embedded and the vectors are asked without one (a vector store a
    refresh replaces closes once its last call ends). While the vectors fail,
    :class:`retrievers.dense.breaker.VectorsBreaker` keeps searches lexical for a pause.
    """

    def __init__(self, index: CodeIndex) -> None:
        """Open the index for reading (raises ``IndexMissing`` if there is none)."""
        index.require()
        self.index = index
        self._snapshots = LiveSnapshots(index)
        self._vectors = NearestVectors(index)

    def close(self) -> None:
        """Release the connections, the generations' leases and this index's Chroma client."""
        self._snapshots.close()
        self.index.reopen_vectors()

    @property
    def embeds_alongside(self) -> bool:
        """Whether a query embeds on a worker thread while its lexical evidence is gathered (the default).

        ``False`` embeds it on the calling thread first, as searches ran before; benchmarks compare the two.
        """
        return self._vectors.overlap

    @embeds_alongside.setter
    def embeds_alongside(self, value: bool) -> None:
        self._vectors.overlap = value

    @property
    def chunk_count(self) -> int:
        """Chunks in the newest committed generation."""
        with self._snapshots.hold() as snapshot:
            return snapshot.chunk_count

    @property
    def generation(self) -> str:
        """The newest committed generation's name."""
        with self._snapshots.hold() as snapshot:
            return snapshot.generation

    @property
    def searches_in_progress(self) -> int:
        """Calls holding a snapshot now (a search that stopped at its deadline holds none)."""
        return self._snapshots.in_use

    # ----------------------------------------------------------------- components
    def lexical_scores(self, query_tokens: list[str], k: int = CANDIDATES,
                       allowed: np.ndarray | None = None, *,
                       generation: str | None = None) -> tuple[dict[int, float], LexicalSignal]:
        """Top-``k`` chunk ids by BM25 (among ``allowed`` ids, if given) and the raw score signal."""
        with self._snapshots.hold(generation) as snapshot:
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

    def dense_scores(self, text: str, k: int = CANDIDATES) -> dict[str, dict[int, float]]:
        """Top-``k`` chunk ids by cosine similarity, per embedded view."""
        with self._snapshots.hold() as snapshot:
            return self._vectors.nearest(snapshot, text, k)[0]

    def name_coverage(self, query_tokens: list[str], pool: set[int]) -> dict[int, float]:
        """Share of each candidate's name words the query uses, on the newest generation (see :mod:`.evidence`)."""
        with self._snapshots.hold() as snapshot:
            return name_coverage(snapshot, query_tokens, pool)

    # ----------------------------------------------------------------- search
    def search(self, query: str, limit: int = DEFAULT_LIMIT, *, keywords: list[str] | None = None,
               dense_text: str | None = None, focus: str = "implementation",
               candidates: int = CANDIDATES, weights: dict[str, float] | None = None,
               fusion: str = "blend", dense: bool = True, kind_priors: bool = True,
               scope: Scope | None = None, exact: bool = True, generation: str | None = None,
               focus_demotion: float = FOCUS_DEMOTION, depth: int | None = None,
               deadline: Deadline = NO_DEADLINE) -> tuple[list[Hit], LexicalSignal]:
        """Rank chunks for a query.

        Args:
            query: The user's text (natural language, code names or a whole issue report), at most
                :data:`retrievers.query.limits.MAX_QUERY_CHARS` characters (else ``QueryTooLong``).
            limit: How many hits to return.
            keywords: Extra BM25 terms (from a caller or an LLM rewrite), searched with the query.
            dense_text: Text to embed instead of the query (e.g. a hypothetical passage).
            focus: ``implementation`` demotes test files, ``tests`` demotes the rest, ``all`` neither.
            candidates: Size of each candidate list before blending.
            weights: Rank by these weights of the evidence (``card``, ``code``, ``bm25``, ``symbol``, ``mention``,
                ``name``, ...) instead of the learned blend: the benchmarks' single-evidence baselines.
            fusion: How ``weights`` combine the evidence: ``blend`` (weighted normalised scores) or ``rrf``
                (rank fusion of the same lists); kept to measure against.
            dense: Use the vectors (``False``: a lexical-only probe, ~1 ms).
            kind_priors: Read the exception types and the subclasses a query worded like a type's description
                names (``False``: their columns stay 0; kept to measure against).
            scope: Only chunks of the files these path globs and languages keep (applied before every cut).
            exact: Find text pasted from the code (the query, a quoted string, a code line) in the
                definitions holding it (``False``: that evidence stays 0; kept to measure against).
            generation: Search this index generation if it is still open (else the newest).
            focus_demotion: The factor out-of-focus results take under a caller's ``weights`` (see
                :func:`retrievers.rank.ranking.focus_factor`); the learned blend weighs the focus itself.
            depth: How many blended candidates are ranked before the cut (default
                :func:`retrievers.rank.ranking.candidate_depth` of ``limit``): a caller that asks for more
                results than it shows passes the depth of the limit it shows, so its top results are
                this search's top results for that limit.
            deadline: When the caller stops waiting: checked between the stages (lexical, dense, evidence,
                exact cosines, ranking), so a search nobody waits for any more stops and lets go of its snapshot.

        Returns:
            The hits, best first, and the BM25 signal of the query (with the generation searched).

        Raises:
            SearchDeadlineExceeded: ``deadline`` passed before the search was done.
        """
        check_query_length(query)
        query = without_environment_listing(query)
        blend = load_blend(blend_file(self.index.settings.embedding_model)) if weights is None else None
        deadline.check("the lexical stage")
        with self._snapshots.hold(generation, deadline) as snapshot:
            found = self._gather(snapshot, query, keywords=keywords, dense_text=dense_text, candidates=candidates,
                                 weights=weights, dense=dense, kind_priors=kind_priors, scope=scope, exact=exact,
                                 deadline=deadline)
            cut = depth or candidate_depth(limit)
            focused = False  # whether the scores already demote what is out of focus
            if blend is None:
                hits = self._weighted_hits(snapshot, found, fusion, cut)
                found.signal.ranking = CALLER_WEIGHTS
            else:
                ids, columns = found.columns(kind_priors, focus)
                deadline.check("the learned ranking")
                model = blend.model(found.cosines)
                hits = scored_hits(snapshot.connection, ids, model.score(columns), found.components, cut)
                focused = model.weighs_focus
                found.signal.ranking = LEARNED_RANKING
        for hit in hits if not focused else ():
            hit.score *= focus_factor(focus, hit.is_test, is_documentation(hit.path, hit.kind), focus_demotion)
        return collapse_duplicates(hits)[:limit], found.signal

    def candidate_table(self, query: str, *, candidates: int = CANDIDATES,
                        dense: bool = True) -> tuple[list[Hit], dict[str, np.ndarray]]:
        """Every pooled candidate of a query with the learned blend's columns (for fitting it; ``hits[i]`` is row i)."""
        check_query_length(query)
        query = without_environment_listing(query)
        with self._snapshots.hold() as snapshot:
            found = self._gather(snapshot, query, keywords=None, dense_text=None, candidates=candidates,
                                 weights=None, dense=dense, kind_priors=True, scope=None, exact=True,
                                 deadline=NO_DEADLINE)
            ids, columns = found.columns(kind_priors=True)
            hits = hydrate(snapshot.connection, [(chunk_id, 0.0) for chunk_id in ids], found.components)
        kept = np.isin(np.array(ids, dtype=np.int64), [hit.chunk_id for hit in hits])
        return hits, {name: values[kept] for name, values in columns.items()}

    def _gather(self, snapshot: IndexSnapshot, query: str, *, keywords: list[str] | None, dense_text: str | None,
                candidates: int, weights: dict[str, float] | None, dense: bool, kind_priors: bool,
                scope: Scope | None, exact: bool, deadline: Deadline) -> Gathered:
        """The candidate pool of a query and its evidence: all of it for the learned blend, else what weights use."""
        learned = weights is None
        paths, allowed = snapshot.scope_filter(scope)
        if weights is not None and not any(weights.get(view) for view in ("card", "code")):
            dense = False
        # The embedder reads as much of it as its window holds: a report's title and first lines.
        dense_input = dense_text or query
        wants_vectors = dense
        dense_k = dense_depth(candidates, allowed, snapshot.chunk_count, SCOPED_DENSE_MAX)
        # The query embeds on a worker thread while BM25 and the evidence that needs no cosine are gathered.
        nearest = self._vectors.start(snapshot, plain_text(dense_input), dense_k) if dense else None
        tokens = tokenize_query(query + " " + " ".join(keywords or []))
        bm25 = snapshot.lexical(repeated_by_frequency(tokens, query))
        lexical, signal = self._lexical_top(snapshot, bm25, tokens, candidates, allowed)
        pasted_block = is_code_block(query)
        deadline.check("the evidence stage")
        symbols, exact_symbols = symbol_matches(snapshot, query + " " + " ".join(keywords or []))
        type_chance = type_probability(query) if kind_priors else None
        described = kind_of(type_chance)
        exceptions = snapshot.exception_types() if kind_priors and describes_exception(query) else {}
        if exceptions and allowed is not None:
            allowed_ids = set(allowed.tolist())
            exceptions = {c: symbol for c, symbol in exceptions.items() if c in allowed_ids}
        head = head_phrase(query) if kind_priors else []
        # "Checker which ...": opening with the name of a base class describes a kind of it.
        subclasses = subclasses_named_by(snapshot.connection, head if described == "type" else head[:1])
        mentions, frames = mention_matches(snapshot, query)
        store = TextStore(snapshot.connection, snapshot.text_cache)
        pasted = exact_chunk_evidence(store, query, paths) if learned and exact else PastedEvidence({}, {})
        if allowed is not None:
            symbols, exact_symbols = within(symbols, allowed), within(exact_symbols, allowed)
            mentions, frames = within(mentions, allowed), within(frames, allowed)
        if weights is None:
            weights = dict.fromkeys(EVIDENCE, 1.0)  # the model weighs every evidence: gather all of it
        calls = resolved_callers(snapshot, call_anchors(exact_symbols, frames)) if weights.get("calls") else {}
        printed = template_evidence(store, query, paths) if weights.get("message") else {}
        if allowed is not None:
            calls = within(calls, allowed)
        # The pool but for the vectors' nearest; the learned path reads its rows while the query may still embed.
        pool = set(lexical) | set(symbols) | set(pasted.found) | set(calls) | set(printed)
        if len(exceptions) <= MAX_EXCEPTION_CANDIDATES:
            pool |= set(exceptions)
        words = name_evidence(query, tokens)
        rows: dict[int, PoolRow] = {}
        names: dict[int, float] = {}
        if learned:
            pool |= set(frames)  # traceback frames rank with full evidence
            names = self._read_rows_and_names(snapshot, pool, rows, words, allowed)
        deadline.check("the dense stage")
        cosines, query_vector = self._vectors.finish(snapshot, nearest) if nearest else ({}, None)
        if allowed is not None:
            cosines = {view: within(scores, allowed) for view, scores in cosines.items()}
        pool |= {c for scores in cosines.values() for c in scores}
        if cosines and allowed is not None and allowed.size <= SCOPED_EXACT_COSINES:
            pool |= {int(c) for c in allowed}
        if learned:
            names.update(self._read_rows_and_names(snapshot, pool, rows, words, allowed))  # the vectors' own
        else:
            names = name_coverage(snapshot, words, pool)
        deadline.check("the exact cosines")
        unembedded: set[int] = set()
        if cosines and query_vector is not None:
            try:
                if self._vectors.fill(snapshot, cosines, query_vector, pool, rows if learned else None, unembedded):
                    signal.fallbacks.append(STALE_VECTORS)
            except vector_backend_errors() as error:
                self._vectors.failed(error)
                cosines = {}
        vectors_error = self._vectors.breaker.note
        if wants_vectors and vectors_error:
            signal.vectors_note = vectors_error
        elif wants_vectors and not cosines and dense_input.strip():
            log.debug("%s (index of %s)", NO_VECTORS_YET, self.index.repo)
            signal.fallbacks.append(NO_VECTORS_YET)
        missing_lexical = [c for c in pool if c not in lexical]
        lexical_all = {**lexical, **(bm25.of(missing_lexical) if tokens else {})}
        components: dict[str, dict[int, float]] = {
            "exact": pasted.found,
            "exact_verbatim": pasted.verbatim,
            "bm25": max_normalise(lexical_all),
            "name": names,
            "symbol": symbols,
            "symbol_exact": exact_symbols,
            "mention": {c: v for c, v in mentions.items() if c in pool or c in frames},
            "mention_frame": frames,
            "calls": calls,
            "message": printed,
            **{view: {c: max(v, 0.0) for c, v in scores.items()} for view, scores in cosines.items()},
        }
        if not cosines:
            # No vectors yet (first index still embedding): lexical evidence carries the ranking.
            weights = {**weights, "bm25": 1.0}
        shape = QueryShape(multiline=is_multiline(query), statement=reads_as_prose(query) and not is_question(query),
                           question=is_question(query), described=described,
                           wants_type=described == "type" or bool(subclasses),
                           describes_exception=bool(exceptions), pasted_block=pasted_block,
                           type_probability=type_chance,
                           asked=kind_chances(query) if kind_priors else {})
        return Gathered(components, pool, rows, exceptions, subclasses, shape, set(words), weights, bool(cosines),
                        signal, unembedded)

    @staticmethod
    def _read_rows_and_names(snapshot: IndexSnapshot, pool: set[int], rows: dict[int, PoolRow], words: list[str],
                             allowed: np.ndarray | None) -> dict[int, float]:
        """Read the pooled chunks' rows ``rows`` lacks and their methods' types, and return their name coverage.

        The types join the pool and ``rows``. Called for the pool known before the query's embedding is joined
        (these reads overlap the embedding) and again for the vectors' nearest.
        """
        fresh = pool_rows(snapshot.connection, pool - rows.keys())
        rows.update(fresh)
        owners = owner_types(snapshot.connection, fresh, rows)
        if allowed is not None:
            kept = within(dict.fromkeys(owners, 0.0), allowed)
            owners = {c: row for c, row in owners.items() if c in kept}
        rows.update(owners)
        pool.update(owners)
        return name_coverage(snapshot, words, fresh.keys() | owners.keys(), rows)

    @staticmethod
    def _weighted_hits(snapshot: IndexSnapshot, found: Gathered, fusion: str, cut: int) -> list[Hit]:
        """The pool ranked by a caller's weights: a blend of the normalised evidence, or rank fusion of its lists."""
        components, weights = found.components, found.weights
        if fusion == "rrf":
            weighted = [(name, values) for name, values in components.items() if weights.get(name) and values]
            blended = reciprocal_rank_fusion([sorted(values, key=values.__getitem__, reverse=True)
                                              for _, values in weighted], [weights[name] for name, _ in weighted])
        else:
            blended = weighted_blend(components, weights)
        return hydrate(snapshot.connection, blended[:cut], components)

    # ----------------------------------------------------------------- filters, literal and regex search
    def scope_filter(self, scope: Scope | None) -> tuple[list[str] | None, np.ndarray | None]:
        """The paths and sorted chunk ids a scope keeps in the newest generation (``None, None``: everything).

        Raises :class:`ScopeError` when the scope keeps no indexed file (a mistyped glob).
        """
        with self._snapshots.hold() as snapshot:
            return snapshot.scope_filter(scope)

    def grep(self, text: str, mode: str = "literal", limit: int = DEFAULT_LIMIT, *, focus: str = "implementation",
             scope: Scope | None = None, focus_demotion: float = FOCUS_DEMOTION) -> GrepAnswer:
        """Every line matching a literal or RE2 regex, ranked (see :mod:`retrievers.grep.lines`), the best ``limit``.

        Raises :class:`PatternError` for a pattern that can't be searched and :class:`ScopeError` for a
        filter that keeps no file.
        """
        pattern = compile_pattern(text, mode)
        with self._snapshots.hold() as snapshot:
            paths, _ = snapshot.scope_filter(scope)
            store = TextStore(snapshot.connection, snapshot.text_cache)
            if not store.has_texts() and snapshot.languages:
                repo = self.index.repo
                raise IndexMissing(f"the index of {repo} has no stored texts; run: grepgraph index --rebuild {repo}")
            kinds = snapshot.file_kinds()

            def priority(path: str) -> float:
                return focus_factor(focus, *kinds.get(path, (False, False)), focus_demotion)

            found = search_lines(store, pattern, paths, priority)
            ranked = rank_lines(found.matches, priority)
            results = results_for(snapshot.connection, ranked[:limit])
        return GrepAnswer(results, len(found.matches), found.complete, found.stopped, snapshot.generation)

    def reading(self) -> AbstractContextManager[IndexSnapshot]:
        """Hold the newest snapshot for a few reads: its ``connection`` and ``generation`` stay consistent."""
        return self._snapshots.hold()

    @property
    def connection(self) -> sqlite3.Connection:
        """The connection of the snapshot this thread holds (inside :meth:`connection_lock`).

        Outside it, the newest snapshot's connection: for single-threaded scripts only.
        """
        return self._snapshots.connection

    def connection_lock(self) -> AbstractContextManager[IndexSnapshot]:
        """Hold the newest snapshot for this thread; :attr:`connection` is its connection meanwhile."""
        return self._snapshots.hold()


def open_searcher(repo: str, index_dir: str | None = None) -> Searcher:
    """Open a searcher on ``repo``'s index."""
    return Searcher(CodeIndex(repo, index_dir))


__all__ = ["GrepAnswer", "Hit", "LexicalSignal", "PatternError", "Scope", "ScopeError", "Searcher", "open_searcher"]

