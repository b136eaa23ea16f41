"""A newcomer's first graph questions on a small TypeScript state library, through the real command line.

The repository is indexed with the real embedding model and searched in this process (``--no-daemon``,
no LLM). A call that passes a callback (``each(objectTraps, (key, fn) => {...})``) must not pass for a
definition of ``each``, and a function named like its file (``finalize`` in ``finalize.ts``) must be the
caller of every call it makes, at every line, as ``--literal`` shows them.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from textwrap import dedent

import pytest
from grepgraph.graphs.resources import forget_searchers

from grepgraph.cli import main

pytestmark = pytest.mark.slow

FILES = {
    "src/common.ts": """\
        export function each(obj: any, iter: (key: string, value: any) => void) {
          Object.keys(obj).forEach((key) => iter(key, obj[key]));
        }

        export function maybeFreeze(scope: any, value: any, deep = false) {
          return deep ? Object.freeze(value) : value;
        }
        """,
    "src/proxy.ts": """\
        import { each } from "./common";

        const objectTraps: any = {};
        const arrayTraps: any = {};

        each(objectTraps, (key: string, fn: any) => {
          arrayTraps[key] = function () {
            arguments[0] = arguments[0][0];
            return fn.apply(this, arguments);
          };
        });
        """,
    "src/finalize.ts": """\
        import { each, maybeFreeze } from "./common";

        export function finalize(scope: any, value: any) {
          each(value, (key: string, child: any) => {
            finalizeProperty(scope, child);
          });
          maybeFreeze(scope, value);
          if (value.deep) {
            maybeFreeze(scope, value.child, true);
          }
          return value;
        }

        function finalizeProperty(scope: any, child: any) {
          maybeFreeze(scope, child);
        }
        """,
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, Path]:
    """The library, indexed once through ``grepgraph index`` (real vectors)."""
    root = tmp_path_factory.mktemp("newcomer")
    repo, index_dir = root / "repo", root / "index"
    for relative, text in FILES.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(dedent(text), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        _isolate(patch, root)
        code, _, err = cli("index", repo, "--index-dir", index_dir, "--quiet")
    assert code == 0, err
    return repo, index_dir


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    _isolate(monkeypatch, tmp_path)
    forget_searchers()
    yield
    forget_searchers()


def _isolate(patch: pytest.MonkeyPatch, cwd: Path) -> None:
    """No GREPGRAPH_* settings from outside and no grepgraph.toml in the working directory."""
    for name in list(os.environ):
        if name.startswith("GREPGRAPH_") and name != "GREPGRAPH_EMBEDDING_CACHE":
            patch.delenv(name)
    patch.chdir(cwd)


def cli(*args: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(arg) for arg in args])
    return code, out.getvalue(), err.getvalue()


def search(repo: tuple[Path, Path], *args: str) -> tuple[str, list[dict]]:
    """The printed answer and, asked again with ``--json``, its results."""
    where = ("--repo", repo[0], "--index-dir", repo[1], "--no-llm", "--no-daemon")
    code, text, err = cli("search", *args, *where)
    assert code == 0, err
    code, out, err = cli("search", *args, *where, "--json")
    assert code == 0, err
    return text, json.loads(out)["results"]


def test_where_is_each_defined_answers_the_definition_not_the_call_passing_a_callback(repo):
    _, results = search(repo, "where is each defined")

    assert [(r["path"], r["symbol"], r["kind"]) for r in results] == [("src/common.ts", "each", "function")]


def test_who_calls_maybe_freeze_names_the_function_at_both_of_its_calls(repo):
    text, results = search(repo, "who calls maybeFreeze")

    assert [(r["path"], r["symbol"], r["kind"], r["line"]) for r in results] == [
        ("src/finalize.ts", "finalize", "function", 7),
        ("src/finalize.ts", "finalize", "function", 9),
        ("src/finalize.ts", "finalizeProperty", "function", 15),
    ]
    assert "maybeFreeze(scope, value.child, true);" in results[1]["snippet"]  # the function's text, not the imports
    assert "import" not in results[0]["snippet"]
    assert "src/finalize.ts:9  finalize  [function, resolved]" in text
    assert "[module" not in text


def test_callers_agree_with_a_literal_search_on_who_makes_each_call(repo):
    _, callers = search(repo, "who calls maybeFreeze")
    _, lines = search(repo, "--literal", "maybeFreeze(")

    assert {(r["symbol"], r["line"]) for r in callers} == {
        (r["symbol"], r["line"]) for r in lines if r["path"] == "src/finalize.ts"}


def test_what_finalize_calls_lists_the_real_each_and_no_call_site(repo):
    _, results = search(repo, "what does finalize call")

    called = {(r["path"], r["symbol"]) for r in results}
    assert ("src/common.ts", "each") in called and ("src/common.ts", "maybeFreeze") in called
    assert not any(r["path"] == "src/proxy.ts" for r in results)
