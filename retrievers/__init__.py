"""grepgraph's retrieval core: walking, chunking, BM25, vectors, fusion — no LangChain below the adapters."""

import logging

__version__ = "0.1.0"

# A library attaches no output of its own: the application (grepgraph.logs for the CLI) decides where records go.
logging.getLogger(__name__).addHandler(logging.NullHandler())
