"""Language detection by extension, and test-file conventions per language and directory."""

from __future__ import annotations

import pytest
from grepgraph.retrievers.source.languages import is_test_path, language_of


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("graphstore/store.py", "python"),
        ("stubs/store.pyi", "python"),
        ("LEGACY.PY", "python"),
        ("web/src/router.ts", "typescript"),
        ("web/src/config.mts", "typescript"),
        ("web/src/App.tsx", "tsx"),
        ("web/src/index.js", "javascript"),
        ("web/src/index.mjs", "javascript"),
        ("web/src/Button.jsx", "javascript"),
        ("cmd/server/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/main/java/com/acme/Store.java", "java"),
        ("docs/architecture.md", "text"),
        ("pyproject.toml", "text"),
        ("schema.sql", "text"),
        ("native/graph.c", "text"),
        ("Makefile", "text"),
        ("Dockerfile", "text"),
        ("README", "text"),
        ("assets/logo.png", None),
        ("dist/app.wasm", None),
        ("go.sum", None),
        (".gitignore", None),
    ],
)
def test_language_of(path, language):
    assert language_of(path) == language


@pytest.mark.parametrize(
    "path",
    [
        # Python: test_*.py, *_test.py, conftest.py
        "graphstore/test_store.py",
        "graphstore/store_test.py",
        "conftest.py",
        "pkg/conftest.py",
        # JavaScript / TypeScript: *.test.* and *.spec.*
        "web/src/router.spec.ts",
        "web/src/router.test.ts",
        "web/src/App.test.tsx",
        "web/src/App.spec.tsx",
        "web/src/router.test.js",
        "web/src/router.spec.mjs",
        "web/src/Button.test.jsx",
        # Go: *_test.go
        "cmd/server/main_test.go",
        # Rust: tests.rs, *_tests.rs
        "src/graph/tests.rs",
        "src/graph_tests.rs",
        # Java: Test*, *Test, *Tests, *IT, *TestCase
        "src/main/java/com/acme/StoreTest.java",
        "src/main/java/com/acme/StoreTests.java",
        "src/main/java/com/acme/TestStore.java",
        "src/main/java/com/acme/StoreIT.java",
        "src/main/java/com/acme/StoreTestCase.java",
        # Directory conventions, whatever the file is called
        "tests/helpers.py",
        "test/fixtures.go",
        "pkg/tests/data.json",
        "web/__tests__/router.ts",
        "web/spec/router.js",
        "web/specs/router.ts",
        "e2e/login.ts",
        "src/test/java/com/acme/Fixtures.java",
        "crate/tests/integration.rs",
        "Tests/Helpers.py",
        "tests/fixtures/sample_repo/docs/architecture.md",
        "testing/python/collect.py",  # a root testing/ directory holds the project's tests
    ],
)
def test_is_test_path(path):
    assert is_test_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "graphstore/store.py",
        "graphstore/testing.py",  # a helper library, not a test module
        "numpy/testing/utils.py",  # a testing package inside the code is public API
        "graphstore/contest.py",
        "graphstore/latest/store.py",
        "attestation/verify.py",
        "web/src/router.ts",
        "web/src/testUtils.ts",
        "web/src/router.tests.ts",
        "cmd/server/main.go",
        "cmd/server/testdata.go",
        "src/lib.rs",
        "src/main/java/com/acme/Store.java",
        "src/main/java/com/acme/Contest.java",
        "docs/testing.md",
        "README.md",
    ],
)
def test_is_not_test_path(path):
    assert not is_test_path(path)


def test_file_name_convention_follows_the_given_language():
    # A name is judged by the language it is in: *_test is Go's and Python's convention, not Java's.
    assert is_test_path("pkg/store_test.py", "python")
    assert not is_test_path("pkg/store_test.py", "java")
    assert not is_test_path("pkg/notes_test.txt")
