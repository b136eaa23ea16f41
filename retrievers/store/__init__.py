"""The index on disk: building it, its rows, stored file texts, BM25 segments, generations and snapshots.

May import: ``core``, ``source``, ``lexical``, ``query``, ``parse``, ``dense``, ``codegraph``.
"""
