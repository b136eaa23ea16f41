"""Walking the repository: which files are indexed (ignore rules, languages, generated files), what changed.

Changes are found by stat and hash, and by git, run without the repository's own programs.

May import: ``core``.
"""
