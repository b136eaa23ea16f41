"""The ground every stage stands on: settings, the data model, the result schema, errors, memory hand-back.

May import: the standard library and third-party packages only; no other stage.
"""
