"""Reading a query: its shape (question, pasted code, message), the identifiers and paths it names, its scope.

May import: ``core``, ``source``, ``lexical``.
"""
