"""Answering a query: gather evidence (BM25, vectors, symbols, messages, mentioned paths), fuse and rank.

Pasted code is found as written (any spacing), a printed message through the template in the code that printed it.

May import: every other stage. Only the adapters (``langchain``) and the layers above (``graphs``,
``grepgraph``) import it.
"""
