"""Walking the repository: which files are indexed (ignore rules, languages, generated files), what changed.

May import: ``core``.
"""
