"""The index problems a user can act on: each message says what to do next."""

from __future__ import annotations

import os
from pathlib import Path

# Temporary folders' roots: they hold projects (and downloads) but are none; indexing one reads them all.
TEMPORARY_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")


class IndexError_(RuntimeError):
    """A problem with the index a user can act on; the message says what to do."""


class IndexMissing(IndexError_):
    """No index has been built for this repository yet."""


def no_index_yet(repo: Path) -> IndexMissing:
    """The error for a repository without an index: the command that builds one, or where to go instead.

    A home folder, the filesystem root or a temporary folder's root is not a project: a search started
    there was meant for a project inside it, so indexing it is never suggested.
    """
    kind = container_kind(repo)
    if kind:
        return IndexMissing(f"no index for {repo}: it is {kind}, not a project; cd into a project's folder (or pass"
                            " --repo DIR) and run grepgraph index there")
    return IndexMissing(f"no index for {repo} yet; run: grepgraph index {repo}")


def container_kind(folder: Path) -> str:
    """``"your home folder"``, ``"the filesystem root"`` or ``"a temporary folder"`` when ``folder`` is one."""
    import tempfile  # only on this error path: it costs the command-line's fast path ~25 ms

    folder = Path(os.path.realpath(folder))
    if folder == Path(folder.anchor):
        return "the filesystem root"
    if folder == Path(os.path.realpath(Path.home())):
        return "your home folder"
    temporary = {Path(os.path.realpath(root)) for root in (*TEMPORARY_ROOTS, tempfile.gettempdir())}
    return "a temporary folder" if folder in temporary else ""


class IndexBusy(IndexError_):
    """Another indexer holds the lock."""


class VectorsUnavailable(IndexError_):
    """The Chroma server or the embedding model's server can't be reached; the lexical index still works."""


class EmbeddingUnavailable(RuntimeError):
    """The embedding model's server did not embed (down, unknown model, error or malformed reply)."""


def vector_backend_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the Chroma server (or the embedding model's server) is not answering".

    Use as ``except vector_backend_errors():`` (evaluated only when something was raised).
    """
    import httpx  # chromadb's HTTP client

    return (VectorsUnavailable, EmbeddingUnavailable, httpx.TransportError)
