"""Logging: ``--verbose`` and ``--log-file`` on the command line, fallbacks logged and named in the trace."""

import subprocess
import sys
from pathlib import Path

from grepgraph.graphs.code_search import graph
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.rank.search import NO_VECTORS_YET
from grepgraph.retrievers.store.index import CodeIndex

PROJECT = Path(__file__).resolve().parents[2]
FILES = {
    "shop/cart.py": 'def add_item(cart, item):\n    """Put an item in the cart."""\n    cart.append(item)\n',
    "shop/broken.py": "def checkout(:\n",
}


def make_repo(root: Path) -> Path:
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def grepgraph(*args: object) -> subprocess.CompletedProcess:
    """The command in a fresh process, as a user runs it (logging configured once, by its own main)."""
    return subprocess.run([sys.executable, "-m", "grepgraph.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=PROJECT, timeout=120)


def test_verbose_and_log_file_show_what_a_quiet_run_keeps_to_itself(tmp_path):
    repo = make_repo(tmp_path / "repo")
    quiet = grepgraph("index", repo, "--no-embed", "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""  # by default a user sees the summary and one-line errors only
    (repo / "shop" / "broken.py").write_text("def checkout(:\n    pass\n", encoding="utf-8")
    log_file = tmp_path / "logs" / "grepgraph.log"
    verbose = grepgraph("index", repo, "--no-embed", "--quiet", "-v", "--log-file", log_file)
    assert verbose.returncode == 0, verbose.stderr
    assert "INFO grepgraph.retrievers.store.index: shop/broken.py: syntax error" in verbose.stderr
    assert "INFO grepgraph.retrievers.store.index: shop/broken.py: syntax error" in log_file.read_text(encoding="utf-8")


def test_a_search_without_vectors_yet_logs_it_and_names_it_in_the_trace(tmp_path, caplog):
    repo = make_repo(tmp_path / "repo")
    CodeIndex(repo).update(embed=False)  # lexical index only: the vectors come with the next `grepgraph index`
    forget_searchers()
    try:
        with caplog.at_level("DEBUG", logger="grepgraph.retrievers.rank.search"):
            out = graph.invoke({"query": "put an item in the cart", "limit": 3},
                               context={"repo": str(repo), "llm_enabled": False})
    finally:
        forget_searchers()
    assert out["results"][0]["symbol"] == "add_item"  # lexical evidence carries the ranking
    (retrieve,) = [entry for entry in out["trace"] if entry["node"] == "retrieve"]
    assert retrieve["fallbacks"] == [NO_VECTORS_YET]
    assert any(record.name == "grepgraph.retrievers.rank.search" and NO_VECTORS_YET in record.getMessage()
               for record in caplog.records)
