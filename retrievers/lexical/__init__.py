"""Words: code-aware tokenization and the BM25 engines.

May import: ``core``.
"""
