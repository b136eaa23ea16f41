"""Building blocks of the training-corpus scripts: fetching packages, finding definitions, mining queries.

Tooling for ``training/fetch_corpus.py`` and ``training/mine_queries.py``; not part of the installed package.
"""
