"""How much a search may be given: the limits every entry point enforces, and the message for a text over one.

The graph's input (``graphs/search_input.py`` states every field's limits), serve, MCP, the command line,
the LangChain retriever and :class:`retrievers.rank.search.Searcher` itself refuse a query longer than
:data:`MAX_QUERY_CHARS` with the same message; none of them cuts it. A stage may still read only a long
query's beginning on purpose (the embedder reads what its window holds of an issue report): that is a choice of
what to embed, not a cut of the input.

No imports: the command line reads these numbers on its fast path.
"""

from __future__ import annotations

# An issue report with its traceback and logs fits; a pasted file of several thousand lines does not.
MAX_QUERY_CHARS = 100_000
# A literal or regex query (grep mode) is a pattern, held to a shorter limit after the query's.
MAX_PATTERN_CHARS = 10_000
# Path globs and language names a search may be filtered by, and the longest glob.
MAX_GLOBS = 50
MAX_GLOB_CHARS = 500


class QueryTooLong(ValueError):
    """A query longer than :data:`MAX_QUERY_CHARS`; the message names the limit."""


def too_long(name: str, length: int, limit: int) -> str:
    """The one message for a text over its limit: ``query is 120,000 characters; the limit is 100,000``."""
    return f"{name} is {length:,} characters; the limit is {limit:,}"


def check_query_length(query: str) -> None:
    """Raise :class:`QueryTooLong` for a query longer than :data:`MAX_QUERY_CHARS` (never cut it)."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLong(too_long("query", len(query), MAX_QUERY_CHARS))
