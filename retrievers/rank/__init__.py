"""Answering a query: gather evidence (BM25, vectors, symbols, messages, mentioned paths), fuse and rank.

May import: every other stage. Only the adapters (``langchain``) and the layers above (``graphs``,
``grepgraph``) import it.
"""
