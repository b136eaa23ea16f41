"""Gitignore-style glob rules: git's semantics, and no glob or .gitignore that stalls a search or an index."""

from __future__ import annotations

from pathlib import Path

import pytest
from grepgraph.retrievers.query.scope import Scope, ScopeError
from grepgraph.retrievers.source.globs import GlobError, GlobRules
from grepgraph.retrievers.source.walk import walk_repository

# Fourteen "*?" pairs: on a backtracking engine, seconds per long path that does not end in "x".
PATHOLOGICAL = "*?" * 14 + "x"


@pytest.mark.parametrize(("rules", "path", "verdict"), [
    (["*.md"], "docs/guide.md", True),  # no slash: a name at any depth
    (["*.md"], "docs/guide.mdx", None),
    (["/top.py"], "top.py", True),  # a leading slash anchors to the base
    (["/top.py"], "pkg/top.py", None),
    (["src/**"], "src/a/b.go", True),
    (["src/**"], "lib/src/b.go", None),  # a slash inside anchors too
    (["**/testdata/**"], "a/b/testdata/x.go", True),
    (["a/**/b.py"], "a/b.py", True),  # "/**/" is zero or more folders
    (["a/**/b.py"], "a/x/y/b.py", True),
    (["build/"], "pkg/build/", True),  # a trailing slash: directories only
    (["build/"], "pkg/build", None),
    (["build/"], "pkg/build/out.py", True),  # and what lies below them
    (["m?.py"], "m1.py", True),
    (["m?.py"], "m12.py", None),
    (["m?.py"], "m/.py", None),  # "?" never matches a slash
    (["[a-c]x.py"], "bx.py", True),
    (["[!a-c]x.py"], "bx.py", None),
    (["*.py", "!keep.py"], "pkg/keep.py", False),  # the later rule wins
    (["!keep.py", "*.py"], "pkg/keep.py", True),
    (["# a comment", "", "*.go"], "a.go", True),
    (["\\#literal.py"], "#literal.py", True),
])
def test_rules_follow_gitignore(rules, path, verdict):
    assert GlobRules(rules).decide(path) is verdict


def test_a_glob_of_many_stars_is_answered_on_long_paths():
    rules = GlobRules([PATHOLOGICAL])
    long_path = "a/" * 100 + "b" * 2_000
    assert rules.decide(long_path) is None
    assert rules.decide(long_path + "x") is True
    files = {long_path: "text", long_path + "x": "text", "src/x": "text", "src/" + "c" * 40 + "x": "text"}
    assert Scope.of([PATHOLOGICAL]).allowed_paths(files) == [long_path + "x", "src/" + "c" * 40 + "x"]


def test_a_filter_that_cannot_be_read_is_one_clear_line():
    with pytest.raises(ScopeError, match=r"invalid path filter '\[z-a\]': invalid character class range"):
        Scope.of(["[z-a]"])
    with pytest.raises(GlobError, match="Invalid git pattern"):
        GlobRules(["!"])


def test_names_that_are_not_utf8_are_matched():
    assert GlobRules(["*.py"]).decide("bad\udcffname.py") is True
    assert GlobRules(["bad\udcff*"]).decide("bad\udcffname.py") is True


def test_many_intricate_rules_are_read_and_answered():
    # A thousand of these overflow one RE2 set or automaton; in groups they are answered.
    rules = GlobRules([f"{'*?' * 20}{n}" for n in range(1_000)] + ["!keep*"])
    assert rules.decide("a/" + "b" * 60 + "999") is True
    assert rules.decide("keep" + "b" * 60 + "999") is False
    assert rules.decide("x" * 5_000) is None


def test_a_gitignore_of_pathological_and_unreadable_rules_does_not_stop_indexing(tmp_path: Path):
    lines = [PATHOLOGICAL, "[z-a]", "!", "\\", *(f"{'*?' * 20}{n}" for n in range(300)), "*.log.py"]
    (tmp_path / ".gitignore").write_text("\n".join(lines) + "\n")
    long_name = "m" * 200
    for name in (f"{long_name}.py", f"{long_name}.tsx", "debug.log.py", "app.py"):
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    paths = {source.path for source in walk_repository(tmp_path).files}
    assert paths == {f"{long_name}.py", "app.py", "pkg/mod.py"}  # .tsx ends in "x": the first rule ignores it
