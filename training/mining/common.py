"""Paths, the exclusion check and the file rules every training script shares."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path, PurePosixPath

from grepgraph.retrievers.source.languages import LANGUAGE_BY_EXTENSION

TRAINING = Path(__file__).resolve().parent.parent
DATA = TRAINING / "data"
ARCHIVES = DATA / "archives"
SOURCE = DATA / "source"  # each package as fetched
CORPUS = DATA / "corpus"  # each package as searched: the queried docstrings blanked
QUERIES = DATA / "queries"
# A history's failing-test queries (mine_failures.py) and their features: <name>.failing.jsonl, .failing.npz.
FAILING = ".failing"
PACKAGES_FILE = TRAINING / "packages.json"
MANIFEST_FILE = TRAINING / "manifest.json"
MIRRORS = Path(os.environ.get("TRAINING_MIRRORS", "/work/.mirror"))
EXCLUDED_DIR = Path(os.environ.get("TRAINING_EXCLUDED_DIR", "/work/shared/bench"))

LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "java")
# The index's own table, without type stubs (a ``.pyi`` repeats its module's names without their code).
EXTENSIONS = {suffix: language for suffix, language in LANGUAGE_BY_EXTENSION.items() if suffix != ".pyi"}
# Copies of other projects inside a package: they may hold an excluded package's code.
VENDORED = {"_vendor", "vendor", "vendored", "third_party", "third-party", "node_modules", "bower_components"}
TEST_DIRECTORIES = {"test", "tests", "testing", "__tests__", "__mocks__", "testdata", "spec", "specs", "e2e"}
# The Java dev ruler's package inside the JDK sources: never read.
JDK_FORBIDDEN = "java/util/concurrent"


def say(line: str) -> None:
    """One line of progress on stdout, flushed (the scripts run in the background with logs)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def is_excluded(name: str) -> bool:
    """Whether a package or repository name belongs to something the project is evaluated on."""
    if str(EXCLUDED_DIR) not in sys.path:
        sys.path.insert(0, str(EXCLUDED_DIR))
    from excluded import is_excluded as check

    return check(name)


def language_of(rel: str) -> str | None:
    """The language of a source file by extension (``tsx`` for .tsx), or None for anything else."""
    return EXTENSIONS.get(PurePosixPath(rel).suffix.lower())


def family_of(language: str) -> str:
    """The manifest language a file language counts under (tsx is TypeScript)."""
    return "typescript" if language == "tsx" else language


def is_vendored(rel: str) -> bool:
    """Whether a relative path lies inside a vendored copy of another project."""
    return any(part.lower() in VENDORED for part in PurePosixPath(rel).parts[:-1])


def is_forbidden(rel: str) -> bool:
    """Whether a JDK source path lies in the package the Java ruler is built from."""
    return f"/{JDK_FORBIDDEN}/" in f"/{rel}" or rel.startswith(JDK_FORBIDDEN + "/")


def is_test_path(rel: str) -> bool:
    """Test files in any of the six languages (folders and each language's file-name conventions)."""
    parts = PurePosixPath(rel).parts
    name = parts[-1] if parts else ""
    stem = name.split(".")[0]
    return (
        any(part.lower() in TEST_DIRECTORIES for part in parts[:-1])
        or name in ("conftest.py", "tests.rs", "test.rs")
        or name.startswith("test_")
        or stem.endswith("_test")
        or ".test." in name
        or ".spec." in name
        or (name.endswith(".java") and (stem.endswith(("Test", "Tests", "IT")) or stem.startswith("Test")))
    )


AUXILIARY_DIRECTORIES = {"examples", "example", "benchmarks", "benchmark", "bench", "docs", "doc", "scripts"}


def is_auxiliary(rel: str) -> bool:
    """Examples, benchmarks, documentation and scripts: code about the library rather than the library."""
    return any(part.lower() in AUXILIARY_DIRECTORIES for part in PurePosixPath(rel).parts[:-1])


def is_declaration_file(rel: str) -> bool:
    """TypeScript declaration files: signatures only, never a definition to find."""
    return rel.endswith((".d.ts", ".d.mts", ".d.cts"))


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_json(path: Path):
    """A JSON file's content."""
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, value) -> None:
    """Write JSON with a stable layout (one-space indent, keys in the order given, final newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_jsonl(path: Path, rows) -> None:
    """One JSON object per line."""
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def package_id(entry: dict) -> str:
    """``<name>-<version>``, the folder name of a package under ``data/source`` and ``data/corpus``."""
    return f"{entry['name']}-{entry['version'].replace('/', '-')}"


def source_dir(entry: dict) -> Path:
    """Where a package's files lie as fetched: ``data/source/<name>-<version>``."""
    return SOURCE / package_id(entry)


def corpus_dir(entry: dict) -> Path:
    """Where a package's searchable copy lives: ``data/corpus/<name>-<version>``."""
    return CORPUS / package_id(entry)


def mirror_dir(repo: str) -> Path:
    """The local git directory of a GitHub repository brought in by the mirror tool (owner+name/repo)."""
    owner, name = repo.split("/", 1)
    return MIRRORS / f"{owner}+{name}" / "repo"
