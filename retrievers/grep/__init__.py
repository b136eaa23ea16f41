"""The grep mode: literal and RE2 patterns matched line by line, each line with its enclosing definition.

It reads the stored file texts, not the working tree. :mod:`.patterns` compiles what is searched for
(:mod:`.literals` finds a regex's required substrings), :mod:`.scan` finds the matching lines,
:mod:`.definitions` tells definition lines, :mod:`.spans` the chunk around a line, and :mod:`.lines`
runs, ranks and reports a search.

May import: ``core``, ``source``, ``lexical``, ``store``.
"""
