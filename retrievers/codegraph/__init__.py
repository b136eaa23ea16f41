"""The code graph: symbols, call resolution across files and the local types that guide it.

What resolution talks about (keys, file facts) is in ``facts``; each language's scoping rules in ``language_rules``.

May import: ``core``, ``source``, ``lexical``, ``parse``.
"""
