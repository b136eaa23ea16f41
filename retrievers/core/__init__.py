"""The ground every stage stands on: settings, the data model, the result schema, errors, memory hand-back.

Also which repositories' settings are trusted, a search's deadline, and SQLite ``IN`` lists in batches.

May import: the standard library and third-party packages only; no other stage.
"""
