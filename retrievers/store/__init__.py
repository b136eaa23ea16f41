"""The index on disk: building it, its rows, stored file texts, BM25 segments, generations and snapshots.

Also who may build it (the indexer lock) and read it (an index folder is opened only if this user made it),
the snapshots long-lived readers hold, and what an index reports of itself.

May import: ``core``, ``source``, ``lexical``, ``query``, ``parse``, ``dense``, ``codegraph``.
"""
