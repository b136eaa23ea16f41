"""The index problems a user can act on: each message says what to do next."""

from __future__ import annotations


class IndexError_(RuntimeError):
    """A problem with the index a user can act on; the message says what to do."""


class IndexMissing(IndexError_):
    """No index has been built for this repository yet."""


class IndexBusy(IndexError_):
    """Another indexer holds the lock."""


class VectorsUnavailable(IndexError_):
    """The Chroma server or the embedding model's server can't be reached; the lexical index still works."""


def vector_backend_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the Chroma server (or the embedding model's server) is not answering".

    Use as ``except vector_backend_errors():`` (evaluated only when something was raised).
    """
    import httpx  # chromadb's HTTP client

    from ..dense.embeddings import EmbeddingUnavailable

    return (VectorsUnavailable, EmbeddingUnavailable, httpx.TransportError)
