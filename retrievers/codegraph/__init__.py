"""The code graph: symbols, call resolution across files and the local types that guide it.

May import: ``core``, ``source``, ``lexical``, ``parse``.
"""
