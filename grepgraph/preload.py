"""Loading the embedding model on a thread while a fresh process imports the graph.

A search without a service pays, in order, for its imports (LangGraph with LangSmith: most of it), the
index, Chroma and the ONNX model. Building the model's ONNX session is C++ work that runs without the
GIL, so it can proceed on the second core while this thread imports Python modules; the graph then
finds the shared embedder loaded when it embeds the query. Only the model is started early: Chroma's
import is Python work, and two threads importing at once were slower than one after the other.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from grepgraph.retrievers.store.index import CodeIndex

log = logging.getLogger(__name__)


def _load(index: CodeIndex) -> None:
    """Load the index's embedder; a failure is left for the search to meet (and report) itself."""
    try:
        index.embedder.embed([])  # embedding nothing loads the model (MiniLM) or the client (Ollama), no more
    except Exception as error:  # noqa: BLE001 - the search loads it again and handles the error there
        log.debug("loading the embedding model ahead of the search failed: %s", error)


@contextmanager
def model_loading(index: CodeIndex, wanted: bool) -> Iterator[None]:
    """Load the index's embedding model on a thread for the duration of the block (when ``wanted``).

    The embedder is shared per process and guards its loading with a lock, so a search that reaches
    the query embedding first waits for this load rather than starting a second. The thread is joined
    on exit: the process never ends while the native session is half built.
    """
    if not wanted:
        yield
        return
    loader = threading.Thread(target=_load, args=(index,), name="grepgraph-model-load", daemon=True)
    loader.start()
    try:
        yield
    finally:
        loader.join()
