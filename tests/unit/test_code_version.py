"""A service is replaced when any of the code it runs changed: nested modules and prompts included."""

import os
from pathlib import Path

import pytest

from grepgraph import service_client


@pytest.fixture
def code_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the packages' layout in tmp_path, which code_version reads instead of the installed code."""
    files = {
        "grepgraph/cli.py": "def main(): ...\n",
        "graphs/nodes.py": "def rewrite(state): ...\n",
        "retrievers/parse/treesitter/python.py": "def chunks(tree): ...\n",
        "retrievers/dense/minilm.py": "class MiniLMEmbedder: ...\n",
        "prompts/rewrite.md": "Rewrite the query.\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    roots = {"grepgraph": "grepgraph", "grepgraph.graphs": "graphs", "grepgraph.retrievers": "retrievers",
             "grepgraph.prompts": "prompts"}
    monkeypatch.setattr(service_client, "package_directory", lambda name: tmp_path / roots[name])
    return tmp_path


def version() -> str:
    return service_client.code_version.__wrapped__()  # uncached: the process-wide value is computed once


def edit(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 1_000_000, before + 1_000_000))  # a later time even on a coarse clock


@pytest.mark.parametrize("changed", ["retrievers/parse/treesitter/python.py", "retrievers/dense/minilm.py",
                                     "graphs/nodes.py", "prompts/rewrite.md"])
def test_a_change_in_a_nested_module_or_a_prompt_changes_the_version(code_tree: Path, changed: str):
    before = version()
    edit(code_tree / changed, (code_tree / changed).read_text() + "# changed\n")
    assert version() != before


def test_a_new_module_in_a_sub_package_changes_the_version(code_tree: Path):
    before = version()
    (code_tree / "retrievers" / "dense" / "breaker.py").write_text("class Breaker: ...\n")
    assert version() != before


def test_compiled_files_and_other_data_do_not_change_it(code_tree: Path):
    before = version()
    (code_tree / "retrievers" / "dense" / "__pycache__").mkdir()
    (code_tree / "retrievers" / "dense" / "__pycache__" / "minilm.cpython-311.pyc").write_bytes(b"\0")
    (code_tree / "grepgraph" / "notes.txt").write_text("not code\n")
    assert version() == before


def test_the_installed_code_includes_the_prompts_and_every_sub_package():
    roots = [service_client.package_directory(name) for name in service_client.PACKAGES]
    assert any((root / "rewrite.md").is_file() for root in roots)
    assert any((root / "parse" / "treesitter").is_dir() for root in roots)
