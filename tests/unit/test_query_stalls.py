"""Inputs that used to backtrack for seconds in query parsing: each is answered, and answered right."""

from __future__ import annotations

from grepgraph.graphs.heuristics import decompose, looks_pasted, parse_json_object
from grepgraph.retrievers.query.mentions import PathNames
from grepgraph.retrievers.query.parsing import code_tokens, mentioned_paths


def test_a_query_full_of_paths_names_each_of_them():
    paths = [f"pkg{n}/sub/module_{n}.py" for n in range(800)]
    query = " ".join(paths) + " " + "a/" * 5_000 + "b"  # and a run of path characters with no file ending
    assert mentioned_paths(query) == paths


def test_path_mentions_keep_their_longest_ending_and_need_a_name():
    assert mentioned_paths("see src/app.py.bak and lib\\util.ts, not .py alone") == ["src/app.py", "lib/util.ts"]
    assert mentioned_paths("a.py.go x.pyi") == ["a.py.go", "x.pyi"]
    assert mentioned_paths("app.pyé") == []  # the ending must end a word


def test_a_sentence_stop_before_a_long_run_of_spaces():
    query = "Return the value here. " + " " * 20_000 + "Searcher does it"
    assert "Searcher" not in code_tokens(query)  # it starts a sentence
    assert code_tokens("Return the value here. " + " " * 20_000 + "and Searcher does it") == ["Searcher"]


def test_a_word_of_many_opening_brackets_is_pasted_only_with_a_closing_one():
    assert not looks_pasted("a(" * 10_000)
    assert looks_pasted("a(" * 10_000 + ")")
    assert not looks_pasted("a(\n)")  # the call must close on its line
    assert decompose("a(" * 10_000, 3) == (["a(" * 10_000], "single")


def test_an_llm_reply_with_a_long_run_of_spaces():
    assert parse_json_object("```json\n{\"terms\": [\"a\"]}" + " " * 20_000 + "```") == {"terms": ["a"]}
    assert parse_json_object("{" + " " * 20_000 + "x") is None


def test_mentioned_files_are_looked_up_by_name():
    names = PathNames(["src/app.py", "lib/app.py", "pkg/a/util.py", "pkg/b/util.py", "x/util.py", "y/util.py",
                       "tests/__init__.py", "app/__init__.py"])
    assert names.named_by("/home/me/proj/src/app.py") == ["src/app.py"]  # the longest suffix any path has
    assert names.named_by("app.py") == ["src/app.py", "lib/app.py"]  # a bare name: few files carry it
    assert names.named_by("util.py") == []  # four files: it names none
    assert names.named_by("a/util.py") == ["pkg/a/util.py"]
    assert names.named_by("/__init__.py") == ["tests/__init__.py", "app/__init__.py"]
    assert names.named_by("nowhere/else.py") == []


def test_a_query_of_a_thousand_mentions_against_many_files():
    paths = [f"pkg{n}/sub/module_{n}.py" for n in range(50_000)] + [f"d{n}/__init__.py" for n in range(5_000)]
    query = " ".join(f"/srv/pkg{n}/sub/module_{n}.py" for n in range(0, 50_000, 50))
    query += " " + " ".join(f"/elsewhere/e{n}/__init__.py" for n in range(500))
    mentions = mentioned_paths(query)
    assert len(mentions) == 1_500
    assert PathNames(paths).files_mentioned(mentions) == {f"pkg{n}/sub/module_{n}.py" for n in range(0, 50_000, 50)}
