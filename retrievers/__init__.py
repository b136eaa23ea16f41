"""grepgraph's retrieval core: walking, chunking, BM25, vectors, fusion — no LangChain below the adapters."""

__version__ = "0.1.0"
