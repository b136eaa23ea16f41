"""Fast, pure decisions the graph makes without I/O: intent, rewrite, decomposition, rerank, snippets.

Every function here is deterministic and cheap (microseconds), so it can run on every
query and be unit-tested without mocks. The thresholds come from ``Context``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from grepgraph.retrievers.lexical.tokenize import (
    EXCEPTION_NAME_PATTERN,
    SCRIPT_IDENTIFIER_PATTERN,
    STOP_WORDS,
    content_words,
    tokenize_query,
)
from grepgraph.retrievers.query.parsing import code_tokens, is_code_like
from grepgraph.retrievers.query.shape import is_question

ENTITY_WORDS = frozenset(
    "parameter parameters argument arguments method methods class classes function functions attribute "
    "attributes field fields property properties option options flag flags variable variables constant "
    "constants decorator decorators exception exceptions error errors type types interface module".split()
)
# A name part may be JavaScript's: ``$store``, a private ``#send``.
SYMBOL = rf"`?({SCRIPT_IDENTIFIER_PATTERN}(?:(?:\.|::){SCRIPT_IDENTIFIER_PATTERN})*)(?:\(\))?`?"

# relation -> patterns whose group(1) is the symbol
GRAPH_PATTERNS: dict[str, list[re.Pattern[str]]] = {
    "callers": [re.compile(p, re.I) for p in (
        rf"^(?:who|what|(?:which|what) \w+)\s+(?:calls?|invokes?|uses?)\s+{SYMBOL}\s*\??$",
        rf"^(?:find |show |list )?(?:the )?(?:callers|call sites|usages|uses) of\s+{SYMBOL}\s*\??$",
        rf"^where (?:is|are)\s+{SYMBOL}\s+(?:called|invoked|used)\s*\??$",
    )],
    "callees": [re.compile(p, re.I) for p in (
        rf"^what does\s+{SYMBOL}\s+call\s*\??$",
        rf"^(?:find |show |list )?(?:the )?(?:callees|calls made by|functions called by) (?:of\s+)?{SYMBOL}\s*\??$",
    )],
    "subclasses": [re.compile(p, re.I) for p in (
        rf"^(?:find |show |list )?(?:the |all )?(?:subclasses|children|implementations|implementers) of"
        rf"\s+{SYMBOL}\s*\??$",
        rf"^(?:what|which)(?: classes| types)?\s+(?:inherits? from|extends?|subclass(?:es)?|implements?)"
        rf"\s+{SYMBOL}\s*\??$",
        rf"^(?:classes|types) (?:that|which) (?:inherit from|extend|implement|subclass)\s+{SYMBOL}\s*\??$",
    )],
    "bases": [re.compile(p, re.I) for p in (
        rf"^(?:find |show |list )?(?:the )?(?:base classes|bases|parents|superclasses|parent classes) of"
        rf"\s+{SYMBOL}\s*\??$",
        rf"^what does\s+{SYMBOL}\s+(?:inherit from|extend|subclass)\s*\??$",
    )],
    "importers": [re.compile(p, re.I) for p in (
        rf"^(?:who|what|which (?:files|modules))\s+imports?\s+{SYMBOL}\s*\??$",
        rf"^where (?:is|are)\s+{SYMBOL}\s+imported\s*\??$",
        rf"^(?:find |show |list )?(?:the )?importers of\s+{SYMBOL}\s*\??$",
    )],
    "definition": [re.compile(p, re.I) for p in (
        rf"^where (?:is|are)\s+{SYMBOL}\s+(?:defined|declared|implemented)\s*\??$",
        rf"^(?:find |show |go to )?(?:the )?definition of\s+{SYMBOL}\s*\??$",
    )],
}


@dataclass(frozen=True)
class GraphQuestion:
    """A question the symbol graph answers: ``relation`` of ``symbol``."""

    relation: str
    symbol: str


def classify_graph_question(query: str) -> GraphQuestion | None:
    """Recognise "who calls X", "subclasses of X", "what imports X", "where is X defined" and the like."""
    text = " ".join(query.strip().split())
    for relation, patterns in GRAPH_PATTERNS.items():
        for pattern in patterns:
            match = pattern.match(text)
            if match:
                return GraphQuestion(relation, match.group(1).replace("::", "."))
    return None


# Function words only: the search stop list also drops words like "get" or "use" that are
# noise for BM25 but content for judging whether a query is prose.
FUNCTION_WORDS = STOP_WORDS - frozenset("get gets got given use used uses using one two please via etc".split())


def stopword_ratio(query: str) -> float:
    """Share of a query's words that are English function words (a, the, of, is, ...)."""
    words = re.findall(r"[A-Za-z']+", query.lower())
    return sum(w in FUNCTION_WORDS for w in words) / len(words) if words else 0.0


def lexically_strong(top: float, second: float, min_score: float, gap_ratio: float) -> bool:
    """BM25 already found one clear winner: a high top score well ahead of the next."""
    return top >= min_score and top > 0 and (top - second) / top >= gap_ratio


def should_rewrite(query: str, *, top: float, second: float, intent: str | None, min_content_words: int,
                   stopword_share: float, long_words: int, strong_score: float,
                   strong_gap: float) -> tuple[bool, str]:
    """Whether an LLM rewrite into code vocabulary is worth its latency, and why.

    Skips code-like queries and queries BM25 already answers; rewrites questions,
    wordy prose and long inputs such as whole issue reports. A caller's ``intent``
    disables the strong-lexical-signal bypass (the caller knows the query is ambiguous).
    """
    words = query.split()
    if len(words) > long_words:
        return True, f"long input ({len(words)} words)"
    content = content_words(query)
    tokens = re.findall(r"\S+", query)
    if tokens and sum(is_code_like(t.strip("`'\"(),:;?")) for t in tokens) >= max(1, len(tokens) // 2):
        return False, "code-like query"
    if len(content) < min_content_words:
        return False, f"{len(content)} content word(s) < {min_content_words}"
    if not intent and lexically_strong(top, second, strong_score, strong_gap):
        return False, f"strong lexical match (top {top:.1f}, gap {top - second:.1f})"
    if is_question(query):
        return True, "natural-language question"
    ratio = stopword_ratio(query)
    if ratio > stopword_share:
        return True, f"prose ({ratio:.0%} stop words)"
    return False, "keyword query"


# Run on decompose's text only, whose whitespace is single spaces: on runs of spaces their \s* and \s+ would
# backtrack (quadratic and worse).
SEQUENTIAL_SPLIT = re.compile(r"\s*(?:,\s*)?\b(?:and then|then|after that|afterwards|after|when)\b\s*", re.I)
UNION_SPLIT = re.compile(r"\s*(?:;|,?\s+\band also\b|,?\s+\balso\b|,?\s+\bas well as\b|,?\s+\band\b)\s*", re.I)
# Unambiguous markers of a second request, which split even a statement.
EXPLICIT_UNION = re.compile(r"\balso\b|\bas well as\b", re.I)
# In a statement a ";" separates requests only when a request follows it ("...; find the store code");
# otherwise it is part of a pasted message ("invalid value; expected a mapping").
REQUEST_AFTER_SEMICOLON = re.compile(
    r";\s*(?:how|what|where|why|which|when|who|does|is|can|find|show|list|locate|search|explain)\b", re.I)
# Quoted strings and code spans are one thing each, never split inside.
PROTECTED_SPAN = re.compile(r"`[^`]+`|\"[^\"]+\"|(?<!\w)'[^'\n]+'(?!\w)")
# What a pasted message, code line or traceback looks like, as opposed to a request (and a call, ``name(...)``:
# see _has_call).
PASTED_MARKERS = re.compile(
    rf"\b{EXCEPTION_NAME_PATTERN}\b|Traceback \(most recent call last\)|File \"[^\"]+\", line \d+"
    r"|[{}=]|->|::")
CALL_OPENING = re.compile(r"\w\(")


def looks_pasted(text: str) -> bool:
    """A statement with an exception name, a traceback frame or code punctuation was pasted, not asked."""
    return not is_question(text) and (bool(PASTED_MARKERS.search(text)) or _has_call(text))


def _has_call(text: str) -> bool:
    r"""A ``(`` after a word character and a ``)`` later on its line: ``\w\(.*\)`` without its backtracking.

    That expression scans to the line's end from every ``(``: quadratic in a line of thousands of them.
    """
    for line in text.split("\n"):
        close = line.rfind(")")
        if close > 0 and CALL_OPENING.search(line, 0, close):
            return True
    return False


def _mask_spans(text: str) -> tuple[str, list[str]]:
    """Replace quoted strings and code spans by placeholders the split patterns can't cut."""
    spans: list[str] = []

    def keep(match: re.Match[str]) -> str:
        spans.append(match.group())
        return f"\x00{len(spans) - 1}\x00"

    return PROTECTED_SPAN.sub(keep, text), spans


def _unmask(part: str, spans: list[str]) -> str:
    return re.sub(r"\x00(\d+)\x00", lambda match: spans[int(match.group(1))], part)


# A longer text is a report or pasted context, not a list of requests: its "and", "when" and "also" join the
# clauses of one problem (and the rewrite setting's default reads it as a report to put in code words).
REPORT_WORDS = 60


def decompose(query: str, max_parts: int) -> tuple[list[str], str]:
    """Split a multi-part question into sub-queries: ``(parts, "union" | "sequential" | "single")``.

    A part must carry at least two content words (or a code name) to stand alone, so
    "read and write files" stays whole while "how are edges stored and how are
    callers found" splits. Several code names in one query get one sub-query each.
    Quoted text and code spans are never split, nor is a pasted message, code line or traceback.
    """
    text = " ".join(query.split())
    if len(text.split()) > REPORT_WORDS or max_parts < 2 or looks_pasted(text):
        return [text], "single"
    masked, spans = _mask_spans(text)
    # "and", "then", "when" inside a statement ("Called when the context closes and ...") join
    # clauses of one topic; only questions, or explicit markers, carry several requests.
    if not is_question(text) and not (EXPLICIT_UNION.search(masked) or REQUEST_AFTER_SEMICOLON.search(masked)):
        return [text], "single"
    for mode, pattern in (("sequential", SEQUENTIAL_SPLIT), ("union", UNION_SPLIT)):
        parts = [_unmask(p.strip(" ,.?"), spans) for p in pattern.split(masked) if p and p.strip(" ,.?")]
        if len(parts) > 1 and all(_stands_alone(p) for p in parts):
            return parts[:max_parts], mode
    names = code_tokens(masked)
    if len(names) > 1 and len(content_words(masked)) <= len(names) + 6:
        return names[:max_parts], "union"
    return [text], "single"


def _stands_alone(part: str) -> bool:
    return len(content_words(part)) >= 2 or bool(code_tokens(part))


def should_rerank(query: str, *, top: float, second: float, candidates: int, limit: int, strong_score: float,
                  strong_gap: float) -> tuple[bool, str]:
    """Whether an LLM rerank is worth it: only for ambiguous lexical evidence with enough candidates."""
    if candidates <= limit:
        return False, f"{candidates} candidate(s) <= limit {limit}"
    if lexically_strong(top, second, strong_score, strong_gap):
        return False, f"strong lexical match (top {top:.1f}, gap {top - second:.1f})"
    words = {w.rstrip("s") for w in content_words(query)}
    if words & {w.rstrip("s") for w in ENTITY_WORDS} and is_question(query):
        return True, "question about a specific code entity"
    if top < strong_score / 3:
        return True, f"weak lexical evidence (top {top:.1f})"
    return False, "lexical evidence adequate"


def blend_rerank(fused: list[str], llm_order: list[str], keep_weight: float) -> list[str]:
    """Blend the LLM's order into the fused order by position, not by replacing it.

    ``score = keep * 1/(1+fused_rank) + (1-keep) * 1/(1+llm_rank)``; ids the LLM left
    out keep their fused term only, so the top fused ranks keep most of their weight.
    """
    llm_rank = {item: rank for rank, item in enumerate(llm_order)}
    def score(item_rank: tuple[int, str]) -> float:
        rank, item = item_rank
        llm = 1.0 / (1 + llm_rank[item]) if item in llm_rank else 0.0
        return keep_weight / (1 + rank) + (1 - keep_weight) * llm
    ranked = sorted(enumerate(fused), key=lambda pair: -score(pair))
    return [item for _, item in ranked]


THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)


def strip_think(text: str) -> str:
    """Remove ``<think>...</think>`` reasoning blocks some local models emit."""
    return THINK_BLOCK.sub("", text or "").strip()


def parse_json_object(text: str) -> dict | None:
    """The first JSON object in an LLM reply (fenced or bare), or ``None``."""
    text = strip_think(text)
    # (?<!\s): a closing fence's spaces are taken from their start only, not again from each of them.
    text = re.sub(r"^```(?:json)?\s*|(?<!\s)\s*```$", "", text.strip())
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else None
    except (ValueError, TypeError):
        pass
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        return value if isinstance(value, dict) else None
    return None


def clean_terms(value: object, max_terms: int = 6) -> list[str]:
    """Validate an LLM's ``terms``: short strings, no duplicates, at most ``max_terms``."""
    if not isinstance(value, list):
        return []
    terms = []
    for item in value:
        # Printable only: control characters and lone surrogates would break the query embedder.
        if (isinstance(item, str) and 0 < len(item.strip()) <= 60 and item.strip().isprintable()
                and item.strip() not in terms):
            terms.append(item.strip())
    return terms[:max_terms]


def snippet(text: str, terms: list[str], max_lines: int = 6) -> str:
    """The ``max_lines`` consecutive lines of a chunk that mention the query terms most.

    The first line (usually the signature) wins ties, so a result reads as "what it is"
    before "where the words are". Terms are matched as lowercase stems inside each line:
    cheap enough to run on every result of every query.
    """
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return text.strip("\n")
    wanted = [t for t in tokenize_query(" ".join(terms)) if len(t) > 2][:30]
    lowered = [line.lower() for line in lines]
    per_line = [sum(term in line for term in wanted) for line in lowered]
    best_start, best = 0, -1
    window = sum(per_line[:max_lines])
    for start in range(0, len(lines) - max_lines + 1):
        if start:
            window += per_line[start + max_lines - 1] - per_line[start - 1]
        if window > best:
            best_start, best = start, window
    return "\n".join(lines[best_start : best_start + max_lines]).strip("\n")
