"""From a file to chunks: definitions, line windows, the cards that describe each chunk, the parallel parse.

Python is parsed with ``ast``, the other languages in ``treesitter``; ``coverage`` checks every line lands in a chunk.

May import: ``core``, ``source``, ``lexical``.
"""
