"""Which files the walker indexes, and why it skips the others."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from grepgraph.retrievers.source.walk import MINIFIED_LINE_CHARS, generated_reason, walk_repository

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_repo"


def make_repo(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def walked(root: Path, **kwargs) -> set[str]:
    return {source.path for source in walk_repository(root, **kwargs).files}


def test_sample_repository():
    result = walk_repository(FIXTURE)
    paths = {source.path for source in result.files}
    assert {
        "graphstore/store.py", "graphstore/search.py", "graphstore/parser.py", "graphstore/config.py",
        "tests/test_store.py", "tests/test_search.py", "web/src/router.ts", "web/src/router.spec.ts",
        "cmd/server/main.go", "docs/architecture.md",
    } <= paths
    assert not any(path.startswith(("ignored_dir/", "node_modules/", "assets/")) for path in paths)
    assert result.skipped["gitignored"] >= 1  # ignored_dir/
    assert result.skipped["unsupported type"] >= 1  # assets/logo.png
    languages = {source.path: source.language for source in result.files}
    assert languages["cmd/server/main.go"] == "go"
    assert languages["web/src/router.ts"] == "typescript"
    assert languages["docs/architecture.md"] == "text"


def test_files_have_relative_posix_paths_absolute_locations_and_sizes(tmp_path):
    make_repo(tmp_path, {"pkg/mod.py": "x = 1\n", "b.go": "package b\n", "a.md": "# A\n"})
    files = walk_repository(tmp_path).files
    assert [source.path for source in files] == ["a.md", "b.go", "pkg/mod.py"]
    module = files[-1]
    assert module.absolute == tmp_path.resolve() / "pkg" / "mod.py"
    assert module.language == "python"
    assert module.size == len("x = 1\n")


def test_gitignore_files_and_directories(tmp_path):
    make_repo(tmp_path, {
        ".gitignore": "# comment\n*.log.py\nscratch/\n/only_top.py\n",
        "app.py": "",
        "debug.log.py": "",
        "scratch/notes.py": "",
        "pkg/scratch/deep.py": "",  # "scratch/" matches at any depth
        "only_top.py": "",
        "pkg/only_top.py": "",  # "/only_top.py" is anchored to the root
    })
    result = walk_repository(tmp_path)
    assert {source.path for source in result.files} == {"app.py", "pkg/only_top.py"}
    assert result.skipped["gitignored"] == 4


def test_nested_gitignore_applies_below_its_directory_only(tmp_path):
    make_repo(tmp_path, {
        ".gitignore": "*.tmp.py\n",
        "pkg/.gitignore": "/local.py\ncache/\n",
        "local.py": "",
        "pkg/local.py": "",
        "pkg/sub/local.py": "",  # anchored: only pkg/local.py is ignored
        "pkg/cache/x.py": "",
        "cache/x.py": "",  # pkg's rule does not reach the root
        "pkg/sub/a.tmp.py": "",  # the root's rule reaches every level
    })
    assert walked(tmp_path) == {"local.py", "pkg/sub/local.py", "cache/x.py"}


def test_nested_gitignore_negation_reincludes(tmp_path):
    make_repo(tmp_path, {
        ".gitignore": "generated_*.py\n",
        "pkg/.gitignore": "!generated_keep.py\n",
        "generated_a.py": "",
        "pkg/generated_b.py": "",
        "pkg/generated_keep.py": "",
    })
    assert walked(tmp_path) == {"pkg/generated_keep.py"}


def test_skipped_directories(tmp_path):
    make_repo(tmp_path, {
        "app.py": "",
        "node_modules/left-pad/index.js": "",
        "web/node_modules/react/index.js": "",
        ".git/hooks/pre-commit.py": "",
        "pkg/__pycache__/mod.py": "",
        ".venv/lib/site.py": "",
        ".grepgraph/chroma/x.py": "",
        "pkg.egg-info/top.py": "",
        "build/lib/app.py": "",
        "dist/app.js": "",
        "vendor/dep/dep.go": "",
        # Build-output names are skipped at the top only: deeper down they are often real packages.
        "pip/_internal/operations/build/wheel.py": "",
        "src/vendor/helpers.go": "",
    })
    assert walked(tmp_path) == {"app.py", "pip/_internal/operations/build/wheel.py", "src/vendor/helpers.go"}


def test_unsupported_types_are_counted(tmp_path):
    make_repo(tmp_path, {"app.py": "", "logo.png": b"\x89PNG\r\n\x1a\n", "data.bin": b"\0\1", "notes.txt": "hi"})
    result = walk_repository(tmp_path)
    assert {source.path for source in result.files} == {"app.py", "notes.txt"}
    assert result.skipped["unsupported type"] == 2


def test_size_cap(tmp_path):
    make_repo(tmp_path, {"small.py": "x = 1\n", "big.py": "x = 1\n" * 100, "exact.py": "y" * 50})
    result = walk_repository(tmp_path, max_file_bytes=50)
    assert {source.path for source in result.files} == {"small.py", "exact.py"}
    assert result.skipped["too large"] == 1


@pytest.mark.parametrize(
    ("name", "head", "reason"),
    [
        ("store.py", b"def store():\n    return 1\n", None),
        ("README.md", b"# Title\n\nSome text.\n", None),
        ("logo.py", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "binary"),
        ("data.json", b'{"a": 1}\0', "binary"),
        ("app.min.js", b"var a=1;\n", "generated"),
        ("style.min.css", b"a{b:c}\n", "generated"),
        ("schema_pb2.py", b"# -*- coding: utf-8 -*-\n", "generated"),
        ("api.pb.go", b"package api\n", "generated"),
        ("package-lock.json", b"{}\n", "generated"),
        ("go.sum", b"x v1.0.0 h1:abc\n", "generated"),
        ("models.py", b"# Generated by Django 4.2 on 2024-01-01\nfrom django.db import migrations\n", "generated"),
        ("types.go", b"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage types\n", "generated"),
        ("schema.ts", b"/* eslint-disable */\n// @generated\nexport type A = 1;\n", "generated"),
        ("bundle.js", b"var a=" + b"1+" * MINIFIED_LINE_CHARS + b"1;", "minified"),
        ("long_line.py", b"x = 1\n" + b"y" * (MINIFIED_LINE_CHARS * 2) + b"\n", None),
        ("many_lines.js", b"z" * (MINIFIED_LINE_CHARS * 2) + b"\n1\n2\n3\n", None),
    ],
)
def test_generated_reason(name, head, reason):
    assert generated_reason(name, head) == reason


def test_symlink_inside_repository_is_kept_outside_is_skipped(tmp_path):
    outside = make_repo(tmp_path / "outside", {"secret.py": "TOKEN = 'x'\n"})
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    (repo / "alias.py").symlink_to("app.py")
    (repo / "leak.py").symlink_to(outside / "secret.py")
    (repo / "relative_leak.py").symlink_to("../outside/secret.py")
    (repo / "dangling.py").symlink_to("missing.py")
    result = walk_repository(repo)
    assert {source.path for source in result.files} == {"alias.py", "app.py"}
    assert result.skipped["symlink outside repository"] == 2
    assert result.skipped["broken symlink"] == 1


def test_symlinked_directory_outside_is_not_followed(tmp_path):
    outside = make_repo(tmp_path / "outside", {"lib/secret.py": ""})
    repo = make_repo(tmp_path / "repo", {"app.py": ""})
    (repo / "lib").symlink_to(outside / "lib", target_is_directory=True)
    assert walked(repo) == {"app.py"}


def test_symlink_loops_do_not_hang(tmp_path):
    repo = make_repo(tmp_path / "repo", {"pkg/app.py": ""})
    (repo / "pkg" / "up").symlink_to("..", target_is_directory=True)
    (repo / "pkg" / "self").symlink_to(".", target_is_directory=True)
    (repo / "ping.py").symlink_to("pong.py")
    (repo / "pong.py").symlink_to("ping.py")
    outcome: dict = {}
    worker = threading.Thread(target=lambda: outcome.setdefault("result", walk_repository(repo)), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "walk_repository did not finish: it followed a symlink loop"
    result = outcome["result"]
    assert {source.path for source in result.files} == {"pkg/app.py"}
    assert result.skipped["broken symlink"] == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_directory_does_not_abort_the_walk(tmp_path):
    make_repo(tmp_path, {"app.py": "", "locked/inner.py": ""})
    (tmp_path / "locked").chmod(0)
    try:
        assert walked(tmp_path) == {"app.py"}
    finally:
        (tmp_path / "locked").chmod(0o755)
