"""Bad patterns and filters for literal / regex search and the filters: one clear line, never a hang.

The CLI is run as a user runs it (a subprocess per case, under a timeout); the graph is called the
way agents call it. Every test runs under a deadline, so a hang fails instead of stalling the suite.
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.nodes import InvalidSearchInput
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.store.index import CodeIndex

from grepgraph import service_client
from tests.conftest import hang_deadline, isolated_settings
from tests.integration.test_grep_search import build_repo

PROJECT = Path(__file__).resolve().parents[2]
GREPGRAPH = PROJECT / ".venv" / "bin" / "grepgraph"
TEST_DEADLINE_S = 120
CLI_TIMEOUT_S = 60


@pytest.fixture(autouse=True)
def deadline():
    with hang_deadline(TEST_DEADLINE_S):
        yield


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    with isolated_settings(tmp_path_factory):
        root = tmp_path_factory.mktemp("bad-grep")
        repo = build_repo(root)
        CodeIndex(repo, root / "index").update(embed=False)
        yield {"repo": repo, "index_dir": root / "index",
               "context": {"repo": str(repo), "index_dir": str(root / "index"), "llm_enabled": False}}
        forget_searchers()
        service_client.stop_service(root / "index")  # the one the CLI searches started


BAD_INPUT = {
    "regex that does not compile": ({"query": "([a-", "mode": "regex"}, "invalid regex '([a-': missing ]"),
    "lookaround": ({"query": "(?!x)y", "mode": "regex"}, "lookarounds and backreferences are not supported"),
    # The query's limit comes first, in every mode; a pattern within it still has its own, shorter one.
    "1 MB literal": ({"query": "x" * 1_000_000, "mode": "literal"}, "query is 1,000,000 characters"),
    "1 MB regex": ({"query": "x" * 1_000_000, "mode": "regex"}, "query is 1,000,000 characters"),
    "long literal": ({"query": "x" * 50_000, "mode": "literal"}, "the literal is 50,000 characters"),
    "NUL in a literal": ({"query": "ab\x00cd", "mode": "literal"}, "the literal contains a NUL byte"),
    "NUL in a regex": ({"query": "ab\x00", "mode": "regex"}, "the regex contains a NUL byte"),
    "NUL in a glob": ({"query": "x", "paths": ["src/\x00"]}, "a path filter contains a NUL byte"),
    "glob that matches nothing": ({"query": "x", "mode": "literal", "paths": ["nowhere/**"]},
                                  'no indexed file matches paths ["nowhere/**"]'),
    "glob and language that match nothing together": ({"query": "x", "paths": ["web/**"], "languages": ["go"]},
                                                       'no indexed file matches paths ["web/**"] and languages ["go"]'),
    "unknown language": ({"query": "x", "languages": ["cobol"]}, "unknown language 'cobol'"),
    "unknown mode": ({"query": "x", "mode": "fuzzy"}, "mode must be one of auto, literal, regex"),
    "limit over 1000": ({"query": "x", "mode": "literal", "limit": 1001}, "limit must be an integer from 1 to 1000"),
    "filters not strings": ({"query": "x", "languages": [3]}, "filters must be strings"),
}


@pytest.mark.parametrize("name", BAD_INPUT)
def test_the_graph_refuses_bad_patterns_and_filters_in_one_line(indexed, name):
    request, message = BAD_INPUT[name]
    with pytest.raises(InvalidSearchInput) as caught:
        graph.invoke(request, context=indexed["context"])
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_catastrophic_patterns_are_searched_and_match_nothing(indexed):
    # Each would backtrack exponentially in Python's re on the fixture's line of 900 "a"s: with a backtracking
    # engine this test would hit its deadline. (Their timings: benchmarks/grep_speed.py.)
    for pattern in ("(a+)+$", "(a|aa)+$", "(a*)*!$", "(.*a){12}$"):
        out = graph.invoke({"query": pattern, "mode": "regex"}, context=indexed["context"])
        assert out["total_matches"] == 0, pattern


def run_cli(*arguments: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if not name.startswith("GREPGRAPH_")}
    env["GREPGRAPH_EMBEDDING_CACHE"] = "off"
    return subprocess.run([str(GREPGRAPH), *arguments], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=CLI_TIMEOUT_S)


def test_the_cli_answers_bad_patterns_and_filters_with_one_line_and_exit_2(indexed, tmp_path):
    where = ("--repo", str(indexed["repo"]), "--index-dir", str(indexed["index_dir"]))
    cases = {
        "bad regex": ((*where, "--regex", "(unclosed"), "invalid regex '(unclosed': missing )"),
        "backreference": ((*where, "--regex", r"(a)\1"), "backreferences are not supported"),
        # argv cannot carry 1 MB (Linux caps one argument at 128 KiB): 120,000 characters is over the limit.
        "over-long literal": ((*where, "--literal", "y" * 120_000), "query is 120,000 characters"),
        "long literal": ((*where, "--literal", "y" * 50_000), "the literal is 50,000 characters"),
        "empty literal": ((*where, "--literal", ""), "the literal is empty"),
        "glob matches nothing": ((*where, "--literal", "x", "--path", "nowhere/**"),
                                 "no indexed file matches --path 'nowhere/**'"),
        "unknown language": ((*where, "checksum", "--lang", "cobol"), "unknown language 'cobol'"),
        "query and a pattern": ((*where, "checksum", "--literal", "x"), "give one of: a query, --literal"),
        "limit over 1000": ((*where, "--literal", "x", "--limit", "5000"), "limit must be an integer from 1 to 1000"),
    }
    with ThreadPoolExecutor(2) as pool:
        runs = dict(zip(cases, pool.map(lambda case: run_cli("search", *case[0], cwd=tmp_path), cases.values())))
    for name, (_, message) in cases.items():
        run = runs[name]
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2, (name, run.stderr)
        assert len(lines) == 1 and lines[0].startswith("grepgraph: error: ") and message in lines[0], (name, lines)


def test_the_cli_runs_a_catastrophic_regex(indexed, tmp_path):
    run = run_cli("search", "--regex", "(a+)+$", "--repo", str(indexed["repo"]), "--index-dir",
                  str(indexed["index_dir"]), cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "no matches"
