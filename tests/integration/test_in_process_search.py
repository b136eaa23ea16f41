"""A command-line search without a service, as from a fresh shell: it loads only what its kind of search needs.

Each search runs ``grepgraph search --no-daemon`` in a new process on a real index of the fixture repository
(real MiniLM vectors, embedded Chroma) and reports which heavy modules that process imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import indexed_sample_repo

pytestmark = pytest.mark.slow

QUERY = "insert an edge into the graph store"
VECTOR_MODULES = ("chromadb", "onnxruntime")
# Runs the real command line, then says which of VECTOR_MODULES the process imported and the exit status.
SEARCH_AND_REPORT = (
    "import sys\n"
    "from grepgraph.cli import main\n"
    "code = main(sys.argv[1:])\n"
    f"print('LOADED', sorted(m for m in {VECTOR_MODULES!r} if m in sys.modules), code)\n"
)


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> dict[str, str]:
    return indexed_sample_repo(tmp_path_factory)


def search(context: dict[str, str], *arguments: str, cwd: Path) -> tuple[str, list[str]]:
    """The search's output and the vector modules its process imported."""
    command = [sys.executable, "-c", SEARCH_AND_REPORT, "search", *arguments, "--repo", context["repo"],
               "--index-dir", context["index_dir"], "--no-llm", "--no-daemon"]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    *output, report = done.stdout.rstrip("\n").splitlines()
    assert report.startswith("LOADED") and report.endswith(" 0"), done.stdout + done.stderr
    return "\n".join(output), json.loads(report[len("LOADED "):-2].replace("'", '"'))


@pytest.mark.parametrize("pattern", [["--literal", "def store_parse_result"],
                                     ["--regex", r"def store_\w+\("]])
def test_a_literal_or_regex_search_imports_neither_chroma_nor_the_model(context, tmp_path: Path, pattern):
    output, loaded = search(context, *pattern, cwd=tmp_path)
    assert "graphstore/store.py" in output and "store_parse_result" in output
    assert loaded == []


def test_a_described_query_loads_the_model_alongside_and_answers_as_the_graph_does(context, tmp_path: Path):
    from grepgraph.graphs.code_search import graph

    output, loaded = search(context, "--json", QUERY, cwd=tmp_path)
    assert loaded == sorted(VECTOR_MODULES)
    expected = graph.invoke({"query": QUERY, "limit": 10, "mode": "auto"}, context={**context, "llm_enabled": False})
    assert json.loads(output)["results"] == json.loads(json.dumps(expected["results"]))
    assert json.loads(output)["files"] == json.loads(json.dumps(expected["files"]))
    assert expected["files"][0]["path"] == "graphstore/store.py"
    assert expected["results"][0]["path"] == "graphstore/store.py"


def test_the_short_flags_of_grep_tools_mean_what_the_long_ones_do(context, tmp_path: Path):
    """``-n`` as in qmd and head, ``-g`` / ``-t`` / ``-l`` as in ripgrep: the number, glob, language and files."""
    short, _ = search(context, "--json", "-n", "2", "-g", "graphstore/**", "-t", "python", "-l", QUERY, cwd=tmp_path)
    long, _ = search(context, "--json", "--limit", "2", "--path", "graphstore/**", "--lang", "python", "--files",
                     QUERY, cwd=tmp_path)
    assert json.loads(short) == json.loads(long)
    files = [entry["path"] for entry in json.loads(short)["files"]]
    assert files and all(path.startswith("graphstore/") for path in files)
    assert len(json.loads(short)["results"]) <= 2


def test_the_model_loader_leaves_no_thread_behind_and_a_literal_search_starts_none(context, tmp_path: Path):
    script = (
        "import sys, threading\n"
        "from grepgraph.preload import model_loading\n"
        "from grepgraph.retrievers.store.index import CodeIndex\n"
        f"index = CodeIndex({context['repo']!r}, {context['index_dir']!r})\n"
        "with model_loading(index, wanted=False):\n"
        "    skipped = 'onnxruntime' not in sys.modules and threading.active_count() == 1\n"
        "with model_loading(index, wanted=True):\n"
        "    pass\n"
        "print(skipped, 'onnxruntime' in sys.modules, threading.active_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.stdout.split() == ["True", "True", "1"], done.stdout + done.stderr
