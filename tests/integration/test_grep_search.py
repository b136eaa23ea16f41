"""Literal and regex search, path/language filters and exact-line evidence on a real index.

A small repository in five languages is written to ``tmp_path`` and indexed for real (tree-sitter,
BM25, the text store; lexical only, so the module runs in seconds): every test asserts what a
user would check — the line, its enclosing definition, the order, the count.
"""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.core.errors import IndexMissing
from grepgraph.retrievers.grep.patterns import PatternError
from grepgraph.retrievers.query.scope import Scope, ScopeError
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from tests.conftest import hang_deadline

PROJECT = Path(__file__).resolve().parents[2]
GREPGRAPH = PROJECT / ".venv" / "bin" / "grepgraph"
MESSAGE = "frobnicator overheated beyond tolerance"
LONG_BODY_LINES = 240


def long_function() -> str:
    """A 250-line function whose message sits past line 200 of it."""
    body = [f"    total += step_{n} * factor" for n in range(LONG_BODY_LINES)]
    return ("def calibrate_frobnicator(factor, limit):\n    total = 0\n" + "\n".join(body)
            + f'\n    if total > limit:\n        raise ValueError("{MESSAGE}")\n    return total\n')


FILES = {
    "engine/core.py": (
        '"""Checksums and calibration."""\n\nDEFAULT_TIMEOUT = 30\nREGISTRY = {"sha": compute_checksum}\n\n\n'
        "def compute_checksum(data: bytes) -> int:\n"
        '    """Sum of the bytes, folded to 16 bits."""\n'
        "    return sum(data) & 0xFFFF\n\n\n"
        "class Ledger:\n"
        '    """Entries and their checksums."""\n\n'
        "    def record(self, entry):\n"
        "        digest = compute_checksum(entry)\n"
        "        self.entries.append((entry, digest))\n"
        "        return digest\n\n\n"
        + long_function()
    ),
    "engine/util.py": "from engine.core import compute_checksum\n\n\ndef verify(blob, expected):\n"
                      "    return compute_checksum(blob) == expected\n",
    "tests/test_core.py": "from engine.core import compute_checksum\n\n\ndef test_compute_checksum():\n"
                          "    assert compute_checksum(b'ab') == 195\n",
    "web/checksum.ts": "export function computeChecksum(data: Uint8Array): number {\n"
                       "  let total = 0;\n  for (const byte of data) { total += byte; }\n"
                       "  return total & 0xffff;\n}\n\n"
                       "export const verifyChecksum = (data: Uint8Array, expected: number) =>\n"
                       "  computeChecksum(data) === expected;\n",
    "cmd/main.go": "package main\n\nimport \"fmt\"\n\n// ComputeChecksum folds bytes to 16 bits.\n"
                   "func ComputeChecksum(data []byte) int {\n\ttotal := 0\n\tfor _, b := range data {\n"
                   "\t\ttotal += int(b)\n\t}\n\treturn total & 0xffff\n}\n\n"
                   "func main() {\n\tfmt.Println(ComputeChecksum([]byte(\"ab\")))\n}\n",
    "docs/guide.md": "# Guide\n\nCall `compute_checksum` on the payload before storing it.\n",
    "engine/slow.py": "PATTERN_FODDER = '" + "a" * 900 + "!'\n",
}


def build_repo(root: Path) -> Path:
    """Write the fixture repository under ``root`` and return its path."""
    repo = root / "repo"
    for relative, text in FILES.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return repo


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if needle in line)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    root = tmp_path_factory.mktemp("grep")
    repo = build_repo(root)
    index = CodeIndex(repo, root / "index")
    index.update(embed=False)
    searcher = Searcher(index)
    yield {"repo": repo, "index": index, "searcher": searcher,
           "context": {"repo": str(repo), "index_dir": str(root / "index"), "llm_enabled": False}}
    searcher.close()
    forget_searchers()


# --------------------------------------------------------------------------- literal and regex


def test_literal_lists_every_line_definitions_and_implementation_first(indexed):
    answer = indexed["searcher"].grep("compute_checksum", "literal", limit=50)
    assert answer.complete and answer.total == len(answer.results) == 9
    first = answer.results[0]
    core = FILES["engine/core.py"]
    assert (first["path"], first["line"], first["symbol"], first["kind"]) == (
        "engine/core.py", line_of(core, "def compute_checksum"), "compute_checksum", "function")
    places = [(r["path"], r["line"]) for r in answer.results]
    # Implementation uses, then tests and docs (demoted like ordinary search does).
    assert places.index(("tests/test_core.py", 4)) > places.index(("engine/util.py", 5))
    assert places[-1][0] in ("docs/guide.md", "tests/test_core.py")
    by_place = {(r["path"], r["line"]): r for r in answer.results}
    assert by_place[("engine/core.py", line_of(core, "digest = compute"))]["symbol"] == "Ledger.record"
    module_line = by_place[("engine/core.py", line_of(core, "REGISTRY"))]
    assert module_line["kind"] == "module" and module_line["start_line"] <= 4 <= module_line["end_line"]
    for result in answer.results:
        assert "compute_checksum" in result["snippet"]
        assert result["start_line"] <= result["line"] <= result["end_line"]


def test_regex_matches_lines_in_every_language_with_their_symbols(indexed):
    answer = indexed["searcher"].grep(r"(?i)^\s*(?:export )?(?:def|func|function) compute_?checksum", "regex",
                                      limit=10)
    assert {(r["path"], r["symbol"]) for r in answer.results} == {
        ("engine/core.py", "compute_checksum"), ("cmd/main.go", "ComputeChecksum"),
        ("web/checksum.ts", "computeChecksum")}


def test_a_catastrophic_backtracking_regex_is_searched(indexed):
    # On 900 "a"s and a "!", a backtracking engine explores 2^900 ways to fail (it would hang here); RE2 reads
    # the line once. Its timings: benchmarks/grep_speed.py.
    with hang_deadline(60):
        assert indexed["searcher"].grep("(a+)+$", "regex", limit=5).total == 0
        assert indexed["searcher"].grep("(a+)+!'$", "regex", limit=5).results[0]["path"] == "engine/slow.py"


def test_patterns_that_cannot_run_are_refused_clearly(indexed):
    searcher = indexed["searcher"]
    with pytest.raises(PatternError, match="missing \\)"):
        searcher.grep("(unclosed", "regex")
    with pytest.raises(PatternError, match="backreferences are not supported"):
        searcher.grep(r"(\w)\1", "regex")
    with pytest.raises(PatternError, match="NUL byte"):
        searcher.grep("a\x00b", "literal")
    with pytest.raises(PatternError, match="the limit is 10,000"):
        searcher.grep("x" * 1_000_000, "literal")


# --------------------------------------------------------------------------- filters


def test_filters_keep_only_the_files_asked_for(indexed):
    searcher = indexed["searcher"]
    go_only = searcher.grep("hecksum", "literal", limit=50, scope=Scope.of(None, "go"))
    assert {r["path"] for r in go_only.results} == {"cmd/main.go"}
    web = searcher.grep("hecksum", "literal", limit=50, scope=Scope.of("web/**", None))
    assert {r["path"] for r in web.results} == {"web/checksum.ts"}
    several = searcher.grep("hecksum", "literal", limit=50, scope=Scope.of(["*.go,*.ts"], None))
    assert {r["path"] for r in several.results} == {"cmd/main.go", "web/checksum.ts"}
    with pytest.raises(ScopeError, match='no indexed file matches paths \\["nowhere/\\*\\*"\\]'):
        searcher.grep("x", "literal", scope=Scope.of("nowhere/**", None))


def test_a_filter_applies_before_the_top_k_cut(indexed):
    # Python holds most "checksum" evidence; with one candidate slot, only a filter applied first finds Go.
    hits, _ = indexed["searcher"].search("compute checksum", 3, candidates=1, scope=Scope.of(None, "go"))
    assert hits and hits[0].path == "cmd/main.go" and hits[0].symbol == "ComputeChecksum"


# --------------------------------------------------------------------------- exact-line evidence


def test_a_pasted_line_ranks_its_definition_first_whatever_the_indentation(indexed):
    searcher = indexed["searcher"]
    for query in (f'raise ValueError("{MESSAGE}")', f'            raise   ValueError( "{MESSAGE}" )'):
        hits, _ = searcher.search(query, 5)
        assert (hits[0].path, hits[0].symbol) == ("engine/core.py", "calibrate_frobnicator"), query


def test_a_quoted_message_inside_a_question_and_the_innermost_definition(indexed):
    searcher = indexed["searcher"]
    hits, _ = searcher.search(f'why do I get "{MESSAGE}" when calibrating with a big factor?', 5)
    assert hits[0].symbol == "calibrate_frobnicator"
    hits, _ = searcher.search("self.entries.append((entry, digest))", 5)
    assert hits[0].symbol == "Ledger.record"  # the method, not the class around it


def test_a_pasted_block_longer_than_a_question_still_finds_its_definition(indexed):
    block = "\n".join(f"    total += step_{n} * factor" for n in range(200, 215))  # 75 words, a long input
    hits, _ = indexed["searcher"].search(block + f'\nif total > limit:\n    raise ValueError("{MESSAGE}")', 3)
    assert hits[0].symbol == "calibrate_frobnicator"


def test_the_graph_routes_modes_and_keeps_exact_evidence(indexed):
    context = indexed["context"]
    out = graph.invoke({"query": "compute_checksum", "mode": "literal", "limit": 3}, context=context)
    assert out["total_matches"] == 9 and len(out["results"]) == 3
    assert [entry["node"] for entry in out["trace"]] == ["classify_intent", "grep"]
    out = graph.invoke({"query": f'    raise ValueError("{MESSAGE}")'}, context=context)
    assert out["results"][0]["symbol"] == "calibrate_frobnicator" and "total_matches" not in out
    out = graph.invoke({"query": "checksum", "paths": ["web/**"]}, context=context)
    assert {r["path"] for r in out["results"]} == {"web/checksum.ts"}


def test_the_cli_prints_each_line_with_its_symbol(indexed):
    run = subprocess.run([str(GREPGRAPH), "search", "--literal", "compute_checksum(", "--repo", str(indexed["repo"]),
                          "--index-dir", str(indexed["index"].index_dir), "--limit", "2"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "5 matching lines, showing 2"
    assert lines[1].startswith("engine/core.py:") and lines[1].endswith("compute_checksum  [function]")
    assert lines[2].strip() == "def compute_checksum(data: bytes) -> int:"


# --------------------------------------------------------------------------- the store follows the repository


def test_incremental_updates_keep_the_text_store_in_sync(tmp_path):
    repo = build_repo(tmp_path)
    index = CodeIndex(repo, tmp_path / "index")
    index.update(embed=False)
    (repo / "engine" / "util.py").write_text("def verify(blob, expected):\n    return blob == expected\n")
    (repo / "cmd" / "main.go").unlink()
    (repo / "engine" / "new.py").write_text("def fresh_helper():\n    return 'brand new text'\n")
    index.update(embed=False)
    searcher = Searcher(index)
    try:
        assert {r["path"] for r in searcher.grep("compute_checksum", "literal", 50).results} == {
            "engine/core.py", "tests/test_core.py", "docs/guide.md"}
        assert searcher.grep("ComputeChecksum", "literal").total == 0
        assert [r["symbol"] for r in searcher.grep("brand new text", "literal").results] == ["fresh_helper"]
        with sqlite3.connect(index.db_path) as connection:
            connection.execute("INSERT INTO texts_fts (texts_fts) VALUES ('integrity-check')")
            stored = {row[0] for row in connection.execute("SELECT path FROM texts")}
            files = {row[0] for row in connection.execute("SELECT path FROM files")}
        assert stored == files
    finally:
        searcher.close()


def test_an_index_without_stored_texts_says_how_to_fix_it(tmp_path):
    repo = build_repo(tmp_path)
    index = CodeIndex(repo, tmp_path / "index")
    index.update(embed=False)
    with sqlite3.connect(index.db_path) as connection:
        connection.execute("DELETE FROM texts")
    searcher = Searcher(index)
    try:
        with pytest.raises(IndexMissing, match="run: grepgraph index --rebuild"):
            searcher.grep("compute_checksum", "literal")
    finally:
        searcher.close()
