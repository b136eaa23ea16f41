"""Bad input everywhere: queries and limits the graph and the CLI must refuse clearly (or search anyway), and a
repository full of files an indexer trips over.

The repository is built in a temporary directory: the sample repository's ``graphstore/`` package plus Latin-1
and binary files, a 50 MB sparse file, symlink loops, symlinks out of the repository, an unreadable file, a
FIFO, syntax errors in every supported language, and files deleted or rewritten while the indexer runs (from its
progress callback). Each must be skipped and counted in ``IndexSummary.skipped`` or parsed without crashing;
the index completes and search still works. Every test runs under a deadline (``signal.setitimer``) and every
CLI call under a subprocess timeout, so a hang fails instead of stalling the suite.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.nodes import InvalidSearchInput
from grepgraph.graphs.resources import forget_searchers
from grepgraph.graphs.search_input import MAX_QUERY_CHARS
from grepgraph.retrievers.core.errors import IndexError_
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

from grepgraph import service_client
from tests.conftest import hang_deadline, isolated_settings

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
SAMPLE_REPO = PROJECT / "tests" / "fixtures" / "sample_repo"
GREPGRAPH = PROJECT / ".venv" / "bin" / "grepgraph"
TEST_DEADLINE_S = 60
CLI_TIMEOUT_S = 60
IS_ROOT = os.geteuid() == 0
QUESTION = "how are call edges inserted into the database"

SYNTAX_ERRORS = {
    "py": "def broken(:\n    return (\nclass Missing\n",
    "js": "function f( {\n  return [1, 2\n}}}\nconst = ;\n",
    "ts": "interface A { x: number\nfunction g(a: ): void {\n  let = ;\n",
    "tsx": "const C = () => <div><span></div>;\nexport function D( {\n",
    "go": "package main\nfunc main( {\n  fmt.Println(\"x\"\n}\n",
    "rs": "fn main( {\n    let x = ;\n}\nimpl for {\n",
    "java": "public class Broken {\n  void m( {\n    int x = ;\n}\n",
}


# --------------------------------------------------------------------------- nothing hangs
@pytest.fixture(autouse=True)
def deadline():
    """Fail a test that runs longer than TEST_DEADLINE_S instead of hanging the suite."""
    with hang_deadline(TEST_DEADLINE_S):
        yield


@pytest.fixture(scope="module")
def isolated_module(tmp_path_factory):
    """No GREPGRAPH_* settings from outside (the embedding cache stays off) and no grepgraph.toml in the cwd."""
    with isolated_settings(tmp_path_factory):
        yield


# --------------------------------------------------------------------------- the hostile repository
def build_hostile_repo(root: Path) -> Path:
    repo = root / "repo"
    outside = root / "outside"
    shutil.copytree(SAMPLE_REPO / "graphstore", repo / "graphstore")
    bad = repo / "bad"
    bad.mkdir()
    outside.mkdir()
    (bad / "latin.py").write_bytes(
        '"""Fonctions pour le caf\xe9."""\n\n\ndef caf\xe9_cr\xe8me(tasse):\n    return "cr\xe8me " + tasse\n'
        .encode("latin-1"))
    (bad / "blob.py").write_bytes(b"\x00\x01\x02\xffbinary\x00" * 200)
    (bad / "late_nul.py").write_bytes(b"def before_the_nul():\n    return 1\n" * 300 + b'X = "\x00"\n')
    (bad / "mixed.py").write_bytes(b'def mixed_bytes():\n    return "\xe9\xff\xc3\x28\xed\xa0\x80"\n')
    (bad / "empty.py").write_bytes(b"")
    with open(bad / "huge.py", "wb") as handle:  # sparse: 50 MB that take no space
        handle.truncate(50 * 1024 * 1024)
    os.symlink("loop_b.py", bad / "loop_a.py")  # a -> b -> a
    os.symlink("loop_a.py", bad / "loop_b.py")
    os.symlink("..", bad / "parent")  # a directory symlink to its own parent
    os.symlink("missing.py", bad / "dangling.py")
    (outside / "secret.py").write_text('API_TOKEN = "never-index-me"\n')
    os.symlink(outside / "secret.py", bad / "outside_link.py")
    os.symlink(outside, repo / "outside_dir")
    (bad / "locked.py").write_text("def locked_away():\n    return 0\n")
    os.chmod(bad / "locked.py", 0)
    os.mkfifo(bad / "pipe.py")  # reading it would block forever
    for extension, text in SYNTAX_ERRORS.items():
        (bad / f"broken_{extension}.{extension}").write_text(text)
    (bad / "doomed.py").write_text("def doomed_function():\n    return 0\n")
    (bad / "changing.py").write_text("def before_rewrite():\n    return 0\n")
    (bad / "late_doomed.py").write_text("def late_doomed_function():\n    return 0\n")
    (bad / "late_changing.py").write_text("def late_before_rewrite():\n    return 0\n")
    return repo


LATE_SYMBOLS = "SELECT symbol FROM chunks WHERE path IN ('bad/late_doomed.py', 'bad/late_changing.py')"


def indexed_rows(index: CodeIndex, sql: str) -> list[tuple]:
    connection = sqlite3.connect(f"file:{index.db_path}?mode=ro", uri=True)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def hostile(isolated_module, tmp_path_factory):
    """The hostile repository indexed once; files deleted and rewritten in two phases of that run."""
    repo = build_hostile_repo(tmp_path_factory.mktemp("hostile"))
    bad = repo / "bad"
    phases: list[tuple[str, int, int]] = []

    def meddle(phase: str, done: int, total: int) -> None:
        phases.append((phase, done, total))
        if (phase, done) == ("scan", 0):  # listed by the walk, gone or different before it is read
            (bad / "doomed.py").unlink()
            (bad / "changing.py").write_text("def after_rewrite():\n    return 1\n")
        if (phase, done) == ("parse", 0):  # already read: gone or different before the commit
            (bad / "late_doomed.py").unlink()
            (bad / "late_changing.py").write_text(
                "def late_after_rewrite():\n    return 1\n\n\ndef extra():\n    pass\n")

    index = CodeIndex(repo)
    summary = index.update(progress=meddle)
    yield {"repo": repo, "index": index, "summary": summary, "phases": phases}
    os.chmod(bad / "locked.py", 0o644)
    forget_searchers()
    service_client.stop_service(index.index_dir)  # the one the CLI searches started


def test_the_index_completes_and_counts_every_skipped_file(hostile):
    summary = hostile["summary"]
    assert ("scan", 0) in [(phase, done) for phase, done, _ in hostile["phases"]]
    assert ("parse", 0) in [(phase, done) for phase, done, _ in hostile["phases"]]
    skipped = summary.skipped
    assert skipped.get("binary") == 1, skipped  # blob.py
    assert skipped.get("too large") == 1, skipped  # huge.py, skipped by its size without being read
    assert skipped.get("broken symlink") == 3, skipped  # loop_a.py, loop_b.py, dangling.py
    assert skipped.get("symlink outside repository") == 1, skipped  # outside_link.py
    assert skipped.get("not a regular file") == 1, skipped  # pipe.py
    # doomed.py vanished between the walk and the read; as root, chmod 000 does not stop reading locked.py,
    # so only a non-root run can check that it is counted as unreadable too.
    assert skipped.get("unreadable") == (1 if IS_ROOT else 2), skipped
    paths = {row[0] for row in indexed_rows(hostile["index"], "SELECT path FROM files")}
    assert not {path for path in paths if path.startswith(("bad/parent/", "outside_dir/"))}, paths  # not followed
    assert not {"bad/blob.py", "bad/huge.py", "bad/pipe.py", "bad/doomed.py", "bad/outside_link.py"} & paths
    assert ("bad/locked.py" in paths) == IS_ROOT
    assert summary.vectors_pending == 0 and summary.chunks > 0


def test_syntax_errors_and_odd_encodings_are_parsed_without_crashing(hostile):
    index = hostile["index"]
    files = {row[0]: row[1:] for row in indexed_rows(index, "SELECT path, language, chunks, error FROM files")}
    languages = {"py": "python", "js": "javascript", "ts": "typescript", "tsx": "tsx", "go": "go", "rs": "rust",
                 "java": "java"}
    for extension, language in languages.items():
        path = f"bad/broken_{extension}.{extension}"
        assert path in files, path
        assert files[path][0] == language and files[path][1] >= 1, (path, files[path])
    assert files["bad/broken_py.py"][2].startswith("syntax error"), files["bad/broken_py.py"]
    assert files["bad/late_nul.py"][2], "a NUL byte past the binary sniffing window is a parse error"
    assert files["bad/empty.py"][1] == 0
    assert hostile["summary"].parse_errors >= 2
    symbols = {row[0] for row in indexed_rows(index, "SELECT symbol FROM chunks WHERE path LIKE 'bad/%'")}
    assert {"caf\xe9_cr\xe8me", "mixed_bytes", "after_rewrite"} <= symbols, symbols  # Latin-1 decoded
    assert "before_rewrite" not in symbols  # rewritten before it was read: the new content is indexed


def test_files_changed_after_they_were_read_are_caught_up_by_the_next_run(hostile):
    index = hostile["index"]
    symbols = {row[0] for row in indexed_rows(index, LATE_SYMBOLS)}
    # Read before the change: this run indexed what it read, and recorded the old modification times ...
    assert {"late_doomed_function", "late_before_rewrite"} <= symbols, symbols
    summary = index.update()
    # ... so the next run notices both files, and nothing else.
    assert (summary.files_removed, summary.files_changed) == (1, 1), summary
    symbols = {row[0] for row in indexed_rows(index, LATE_SYMBOLS)}
    assert symbols == {"late_after_rewrite", "extra"}, symbols


def test_search_still_works_on_the_hostile_repository(hostile):
    searcher = Searcher(CodeIndex(hostile["repo"]))
    try:
        hits, _ = searcher.search(QUESTION, limit=5)
        assert any(hit.path == "graphstore/store.py" for hit in hits), [(h.path, h.symbol) for h in hits]
        hits, _ = searcher.search("caf\xe9 cr\xe8me tasse", limit=3)
        assert hits[0].path == "bad/latin.py", [(h.path, h.symbol) for h in hits]
    finally:
        searcher.close()


# --------------------------------------------------------------------------- the graph
@pytest.fixture(scope="module")
def context(hostile) -> dict:
    forget_searchers()
    return {"repo": str(hostile["repo"]), "llm_enabled": False}


REFUSED = [
    pytest.param({"query": ""}, "query is empty", id="empty"),
    pytest.param({"query": " \n\t  \r "}, "query is empty", id="whitespace"),
    pytest.param({"query": "\x00\x01\x1b"}, "query is empty", id="only-control-characters"),
    pytest.param({"query": "\ud800\udfff"}, "query is empty", id="only-lone-surrogates"),
    pytest.param({"query": "edges " * 200_000}, "characters; the limit is 100,000", id="1MB"),
    pytest.param({"query": None}, "query must be a string", id="none"),
    pytest.param({"query": b"edges"}, "query must be a string", id="bytes"),
    pytest.param({"query": "edges", "limit": 0}, "limit must be an integer from 1 to 100", id="limit-0"),
    pytest.param({"query": "edges", "limit": -1}, "limit must be an integer from 1 to 100", id="limit-negative"),
    pytest.param({"query": "edges", "limit": 10**9}, "limit must be an integer from 1 to 100", id="limit-1e9"),
    pytest.param({"query": "edges", "limit": "10"}, "limit must be an integer from 1 to 100", id="limit-string"),
    pytest.param({"query": "edges", "limit": True}, "limit must be an integer from 1 to 100", id="limit-bool"),
    pytest.param({"query": "edges", "limit": 2.5}, "limit must be an integer from 1 to 100", id="limit-float"),
    pytest.param({"query": "edges", "focus": "everything"}, "focus must be one of", id="unknown-focus"),
    pytest.param({"query": "edges", "keywords": "insert"}, "keywords must be a list of strings", id="keywords-str"),
    pytest.param({"query": "edges", "concepts": [1, None]}, "concepts must be a list of strings", id="concepts-ints"),
    pytest.param({"query": "edges", "passage": 42}, "passage must be a string", id="passage-int"),
]


@pytest.mark.parametrize(("request_", "message"), REFUSED)
def test_the_graph_refuses_bad_input_clearly(context, request_, message):
    with pytest.raises(InvalidSearchInput, match=message):
        graph.invoke(request_, context=context)


SEARCHED = [
    pytest.param({"query": "edges\x00 insert\x01\x7f \x1b[31mdatabase\x1b[0m"}, id="control-characters"),
    pytest.param({"query": "insert \ud800 edges \udfff database"}, id="lone-surrogates"),
    pytest.param({"query": "insert edges \udcff\udcfe"}, id="surrogateescape-bytes"),
    pytest.param({"query": "\ufeff\u200binsert\u202e edges"}, id="invisible-and-bidi"),
    pytest.param({"query": "insert edges", "passage": "\ud800 rows into the edges table"}, id="passage-surrogate"),
    pytest.param({"query": "insert edges", "concepts": ["\udcff persist", "\x00"]}, id="concepts-surrogate"),
    pytest.param({"query": "insert edges", "keywords": ["\ud800", "executemany\x07"]}, id="keywords-surrogate"),
    pytest.param({"query": "insert edges", "intent": "\x00\ud800 debugging"}, id="intent-surrogate"),
    pytest.param({"query": "insert edges " * (MAX_QUERY_CHARS // 13)}, id="just-under-the-limit"),
    pytest.param({"query": "insert edges", "limit": 1}, id="limit-1"),
    pytest.param({"query": "insert edges", "limit": 100}, id="limit-100"),
    pytest.param({"query": "who calls \ud800_insert_edges"}, id="graph-question-surrogate"),
]


@pytest.mark.parametrize("request_", SEARCHED)
def test_the_graph_searches_odd_but_valid_input(context, request_):
    output = graph.invoke(request_, context=context)
    assert output["results"], request_
    assert len(output["results"]) <= request_.get("limit", 10)
    for result in output["results"]:
        result["snippet"].encode("utf-8")  # printable by any caller: no lone surrogates in the output


def test_the_graph_returns_a_clean_empty_list_or_results_for_nonsense(context):
    output = graph.invoke({"query": "qzxwv plorkt mnbvcx"}, context=context)
    assert isinstance(output["results"], list)


@pytest.mark.parametrize(("kind", "message"), [("missing", "repository not found"), ("file", "not a directory")])
def test_the_graph_names_a_repository_that_is_not_there(isolated_module, tmp_path, kind, message):
    repo = tmp_path / "not-a-repo.py"
    if kind == "file":
        repo.write_text("x = 1\n")
    forget_searchers()
    with pytest.raises(IndexError_, match=message):
        graph.invoke({"query": "edges"}, context={"repo": str(repo), "llm_enabled": False})


# --------------------------------------------------------------------------- the CLI
def run_cli(*arguments: str | bytes, cwd: Path) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if not name.startswith("GREPGRAPH_")}
    env["GREPGRAPH_EMBEDDING_CACHE"] = "off"
    return subprocess.run([str(GREPGRAPH), *arguments], cwd=cwd, env=env, capture_output=True,
                          timeout=CLI_TIMEOUT_S)


def cli_cases(repo: Path, tmp: Path) -> dict[str, tuple[tuple, int, str]]:
    """name -> (arguments, exit status, what stderr's only line says (exit 2) or stdout contains (exit 0))."""
    a_file = tmp / "a-file.py"
    a_file.write_text("x = 1\n")
    unindexed = tmp / "unindexed"
    unindexed.mkdir()
    search = ("search", "--repo", str(repo), "--no-llm")
    return {
        "empty query": (("search", "", "--repo", str(repo)), 2, "query is empty"),
        "whitespace query": (("search", " \t \n ", "--repo", str(repo)), 2, "query is empty"),
        # argv cannot carry 1 MB (Linux caps one argument at 128 KiB): 120,000 characters is over our limit.
        "over-long query": ((*search, "e" * 120_000), 2, "the limit is 100,000"),
        "control characters": ((*search, "insert\x01 edges\x1b[31m database"), 0, "graphstore/store.py"),
        "invalid UTF-8": ((*search, b"insert \xff\xfe edges \xed\xa0\x80 database", "--json"), 0, '"results"'),
        "limit 0": ((*search, "edges", "--limit", "0"), 2, "limit must be an integer from 1 to 100, got 0"),
        "limit -1": ((*search, "edges", "--limit", "-1"), 2, "limit must be an integer from 1 to 100, got -1"),
        "limit 10**9": ((*search, "edges", "--limit", str(10**9)), 2, "limit must be an integer from 1 to 100"),
        "limit True": ((*search, "edges", "--limit", "True"), 2, "argument -n/--limit: invalid int value: 'True'"),
        "unknown focus": ((*search, "edges", "--focus", "everything"), 2, "argument --focus: invalid choice"),
        "search missing repo": (("search", "edges", "--repo", str(tmp / "nope")), 2, "repository not found"),
        "search repo is a file": (("search", "edges", "--repo", str(a_file)), 2, "not a directory"),
        "search unindexed repo": (("search", "edges", "--repo", str(unindexed)), 2, "no index for"),
        "index missing repo": (("index", str(tmp / "nope")), 2, "repository not found"),
        "index repo is a file": (("index", str(a_file)), 2, "not a directory"),
        "status missing repo": (("status", str(tmp / "nope")), 2, "repository not found"),
    }


def test_the_cli_answers_bad_input_with_one_line_and_exit_2(hostile, tmp_path):
    cases = cli_cases(hostile["repo"], tmp_path)
    with ThreadPoolExecutor(2) as pool:  # each call starts Python and imports the graph: two at a time
        runs = dict(zip(cases, pool.map(lambda case: run_cli(*case[0], cwd=tmp_path), cases.values())))
    failures = []
    for name, (arguments, status, expected) in cases.items():
        run = runs[name]
        stdout, stderr = run.stdout.decode("utf-8", "replace"), run.stderr.decode("utf-8", "replace")
        problem = ""
        if run.returncode != status:
            problem = f"exit {run.returncode}, expected {status}"
        elif "Traceback" in stderr:
            problem = "traceback on stderr"
        elif status == 2 and arguments[0] in ("search", "index", "status") and "invalid" not in expected:
            lines = stderr.strip().splitlines()
            if len(lines) != 1 or not lines[0].startswith("grepgraph: error: ") or expected not in lines[0]:
                problem = f"expected one line 'grepgraph: error: ...{expected}...'"
        elif status == 2 and expected not in stderr:  # argparse: usage, then the error line
            problem = f"{expected!r} not on stderr"
        elif status == 0 and expected not in stdout:
            problem = f"{expected!r} not in the output"
        if problem:
            failures.append(f"{name}: {problem}\n  stdout: {stdout[-500:]!r}\n  stderr: {stderr[-1500:]!r}")
    assert not failures, "\n".join(failures)
