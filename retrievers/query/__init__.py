"""Reading a query: its shape (question, pasted code, message), the identifiers and paths it names, its scope.

Also the indexed files a mentioned path names, and how long a query may be.

May import: ``core``, ``source``, ``lexical``.
"""
