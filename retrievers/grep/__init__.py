"""The grep mode: literal and RE2 patterns matched line by line, each line with its enclosing definition.

It reads the stored file texts, not the working tree.

May import: ``core``, ``source``, ``store``.
"""
