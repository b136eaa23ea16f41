"""Which language a file is in, and whether it is a test file, by each language's conventions."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath

LANGUAGE_BY_EXTENSION = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}

# Text indexed in line windows: docs, config, and code we have no grammar for.
TEXT_EXTENSIONS = {
    ".md", ".rst", ".txt", ".toml", ".yaml", ".yml", ".json", ".cfg", ".ini", ".sql",
    ".sh", ".bash", ".c", ".h", ".cc", ".cpp", ".hpp", ".rb", ".php", ".kt", ".swift",
    ".cs", ".scala", ".lua", ".html", ".css", ".scss", ".proto", ".graphql", ".tf",
}
TEXT_FILENAMES = {"Dockerfile", "Makefile", "README", "LICENSE", "CHANGELOG"}

TEST_DIRECTORIES = {"test", "tests", "__tests__", "spec", "specs", "e2e"}
# Test directories only at the repository's root: ``testing/`` holds a project's tests there, while a
# ``testing`` package deeper down is often public API (test helpers a library ships).
ROOT_TEST_DIRECTORIES = {"testing"}
_TEST_FILE_PATTERNS = {
    "python": re.compile(r"^(test_.*|.*_test|conftest)\.pyi?$"),
    "javascript": re.compile(r"^.*\.(test|spec)\.[mc]?jsx?$"),
    "typescript": re.compile(r"^.*\.(test|spec)\.[mc]?ts$"),
    "tsx": re.compile(r"^.*\.(test|spec)\.tsx$"),
    "go": re.compile(r"^.*_test\.go$"),
    "rust": re.compile(r"^(tests?|.*_tests?)\.rs$"),
    "java": re.compile(r"^(Test.*|.*Tests?|.*IT|.*TestCase)\.java$"),
}


def language_of(path: str) -> str | None:
    """The language name for a path, ``"text"`` for indexable text, ``None`` to skip."""
    pure = PurePosixPath(path)
    suffix = pure.suffix.lower()
    if suffix in LANGUAGE_BY_EXTENSION:
        return LANGUAGE_BY_EXTENSION[suffix]
    if suffix in TEXT_EXTENSIONS or pure.name in TEXT_FILENAMES:
        return "text"
    return None


def is_test_path(path: str, language: str | None = None) -> bool:
    """Whether a repository-relative path is a test file.

    A file counts as a test when any directory on its path is a conventional test
    directory (``tests/``, ``__tests__/``, Java's ``src/test/``, Rust's crate-level
    ``tests/``, a root ``testing/``) or its name follows its language's convention (``test_x.py``,
    ``x_test.go``, ``x.spec.ts``, ``FooTest.java``).
    """
    pure = PurePosixPath(path)
    directories = {part.lower() for part in pure.parts[:-1]}
    if directories & TEST_DIRECTORIES or (len(pure.parts) > 1 and pure.parts[0].lower() in ROOT_TEST_DIRECTORIES):
        return True
    language = language or language_of(path)
    pattern = _TEST_FILE_PATTERNS.get(language or "")
    return bool(pattern and pattern.match(pure.name))


DOCUMENTATION_DIRECTORIES = {"doc", "docs", ".github", "documentation"}


@lru_cache(maxsize=65536)  # every search's pool asks again about the same few thousand files
def is_documentation(path: str, kind: str) -> bool:
    """Whether a chunk is prose or project plumbing rather than implementation.

    Text windows count, and so does anything under ``docs/`` or ``.github/`` (Sphinx
    ``conf.py``, issue templates).
    """
    if kind == "text":
        return True
    parts = PurePosixPath(path).parts[:-1]
    return bool(parts) and parts[0].lower() in DOCUMENTATION_DIRECTORIES
