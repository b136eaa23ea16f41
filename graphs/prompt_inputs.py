"""What the LLM is shown: a fixed instruction prefix, then the little each stage needs.

A small model on a CPU reads ~25 prompt tokens a second, so every token counts twice: once in latency and
once in how much of the prompt the model can attend to. The instructions come first and never change (the
server's prompt cache keeps them between calls); the variable part follows, cut to what carries the answer:

- an issue report becomes its opening (title and first sentence), its error lines and the code names it
  mentions, not thousands of characters of prose and traceback;
- a rerank candidate becomes a card: number, kind, symbol, file, signature and the first line of its
  docstring, not a 500-character snippet;
- related symbols are their names only (a path costs ~6 tokens and told the model nothing it used), and
  the background line is left out when the caller gave none.

Measured on one core of this machine (docs/llm-stages.md): a 1.5B model reads
~9 prompt tokens and writes ~4.5 tokens a second there, so the rewrite asks for 2-4 terms, not 3-6.
"""

from __future__ import annotations

import re

from grepgraph.prompts import load_prompt, render_prompt
from grepgraph.retrievers.lexical.tokenize import EXCEPTION_WORD_PATTERN
from grepgraph.retrievers.query.parsing import code_tokens

from .llm_providers import JsonSchema

# Related symbols looked up for the rewrite prompt (names the model may pick instead of inventing its own),
# and how many terms it may answer with: every output token costs ~0.2 s on one core, every prompt token
# ~0.1 s.
REWRITE_SYMBOLS = 6
MAX_REWRITE_TERMS = 4

# The objects each stage asks for; the server constrains its output to them.
REWRITE_SCHEMA = JsonSchema("search_terms", {
    "type": "object", "additionalProperties": False, "required": ["terms"],
    "properties": {"terms": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                                    "maxItems": MAX_REWRITE_TERMS}}})


def rerank_schema(candidates: int) -> JsonSchema:
    """At most ``candidates`` numbers: a model can't ramble past the list it was shown."""
    return JsonSchema("ranking", {
        "type": "object", "additionalProperties": False, "required": ["ranking"],
        "properties": {"ranking": {"type": "array", "items": {"type": "integer"}, "maxItems": max(1, candidates)}}})


ERROR_LINE = re.compile(rf"\b{EXCEPTION_WORD_PATTERN}\b|\b(?:raises?|fails?|crash\w*)\b", re.I)
OPENING_CHARS = 240
ERROR_LINE_CHARS = 160
MAX_ERROR_LINES = 3
MAX_NAMES = 12
SIGNATURE_CHARS = 120
DECORATOR_OR_COMMENT = re.compile(r"^\s*(?:@|#|//|/\*|\*)")
DOC_LINE = re.compile(r"^\s*(?:[rbuRBU]?(?:\"\"\"|''')|///?|/\*\*?|\*|#)\s*(.*?)\s*(?:\"\"\"|'''|\*/)?\s*$")


def query_digest(query: str, max_chars: int) -> str:
    """``query`` as the model should see it: whole when short, else opening + error lines + code names."""
    text = query.strip()
    if len(text) <= max_chars:
        return text
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    opening = " ".join(lines[:2])[:OPENING_CHARS]
    errors = [line[:ERROR_LINE_CHARS] for line in lines[2:] if ERROR_LINE.search(line)]
    # The last error lines are the ones a traceback ends with: the exception and its message.
    parts = [opening, *dict.fromkeys(errors[-MAX_ERROR_LINES:])]
    names = [name for name in code_tokens(text) if len(name) > 2][:MAX_NAMES]
    if names:
        parts.append("Code names mentioned: " + ", ".join(names))
    return "\n".join(parts)[:max_chars]


def background_line(intent: str) -> str:
    """``Background: ...`` and a line break, or nothing when the caller gave no background."""
    return f"Background: {intent}\n" if intent.strip() else ""


def rewrite_messages(query: str, intent: str, symbols: list[tuple[str, str]], max_chars: int) -> list[tuple[str, str]]:
    """System instructions (fixed) and the question, its background and the related symbols' names.

    ``symbols`` are ``(symbol, path)`` pairs; each name is shown once, without its path.
    """
    names = list(dict.fromkeys(symbol for symbol, _ in symbols if symbol))[:REWRITE_SYMBOLS]
    human = render_prompt("rewrite_input", query=query_digest(query, max_chars), background=background_line(intent),
                          symbols=", ".join(names) or "(none)")
    return [("system", load_prompt("rewrite")), ("human", human)]


def candidate_card(number: int, hit: dict, max_chars: int) -> str:
    """``[n] kind symbol (path)`` with the signature and the docstring's first line, within ``max_chars``."""
    lines = [line for line in (hit.get("text") or "").splitlines() if line.strip()]
    at = next((i for i, line in enumerate(lines) if not DECORATOR_OR_COMMENT.match(line)), len(lines))
    signature = lines[at].strip() if at < len(lines) else ""
    summary = ""
    for line in lines[at + 1 : at + 5]:
        match = DOC_LINE.match(line)
        if match and match.group(1):
            summary = match.group(1)
            break
    body = signature[:SIGNATURE_CHARS] + (f" — {summary}" if summary else "")
    return f"[{number}] {hit.get('kind', '')} {hit['symbol']} ({hit['path']})\n    {body[:max_chars]}"


def rerank_messages(query: str, intent: str, hits: list[dict], card_chars: int,
                    max_chars: int) -> list[tuple[str, str]]:
    """System instructions (fixed) and the question with its numbered candidate cards."""
    cards = "\n".join(candidate_card(number, hit, card_chars) for number, hit in enumerate(hits, start=1))
    human = render_prompt("rerank_input", query=query_digest(query, max_chars), background=background_line(intent),
                          candidates=cards)
    return [("system", load_prompt("rerank")), ("human", human)]
