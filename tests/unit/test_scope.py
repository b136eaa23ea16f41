"""Path/glob and language filters, without an index."""

from __future__ import annotations

import numpy as np
import pytest
from grepgraph.retrievers.query.scope import Scope, ScopeError, dense_depth, split_values, within

FILES = {"src/app/main.go": "go", "src/app/main_test.go": "go", "src/web/ui.ts": "typescript",
         "src/web/view.tsx": "tsx", "lib/util.py": "python", "docs/guide.md": "text", "README.md": "text"}


def test_repeated_options_and_comma_lists_are_one_list():
    assert split_values(["src/**,lib/**", " docs/** ", ""]) == ["src/**", "lib/**", "docs/**"]
    assert split_values("go") == ["go"] and split_values(None) == []


@pytest.mark.parametrize(("paths", "languages", "kept"), [
    (["src/**"], None, {"src/app/main.go", "src/app/main_test.go", "src/web/ui.ts", "src/web/view.tsx"}),
    (["*.md"], None, {"docs/guide.md", "README.md"}),  # no slash: a name at any depth
    (["./lib/"], None, {"lib/util.py"}),
    (["src/**", "!**/*_test.go"], None, {"src/app/main.go", "src/web/ui.ts", "src/web/view.tsx"}),
    (None, ["ts"], {"src/web/ui.ts", "src/web/view.tsx"}),  # TypeScript includes TSX
    (None, ["Go,py"], {"src/app/main.go", "src/app/main_test.go", "lib/util.py"}),
    (["src/**"], ["go"], {"src/app/main.go", "src/app/main_test.go"}),
    (["nowhere/**"], None, set()),
    (["!src/**"], None, {"lib/util.py", "docs/guide.md", "README.md"}),  # only negatives: all but these
    (["!src/**", "!*.md"], ["python"], {"lib/util.py"}),
])
def test_globs_and_languages_keep_the_files_a_user_expects(paths, languages, kept):
    assert set(Scope.of(paths, languages).allowed_paths(FILES)) == kept


@pytest.mark.parametrize(("paths", "languages", "message"), [
    (None, ["cobol"], "unknown language 'cobol'; use one of: python, javascript"),
    (["src/\x00"], None, "NUL byte"),
    (["x" * 501], None, "the limit is 500"),
    ([f"d{n}/**" for n in range(51)], None, "51 path filters; the limit is 50"),
    ([3], None, "filters must be strings"),
])
def test_bad_filters_are_one_clear_line(paths, languages, message):
    with pytest.raises(ScopeError) as caught:
        Scope.of(paths, languages)
    assert message in str(caught.value)


def test_a_scope_describes_itself_as_typed_and_knows_when_it_is_everything():
    assert Scope.of(None, None).is_everything
    assert Scope.of(["src/**"], ["rs"]).describe() == 'paths ["src/**"] and languages ["rust"]'  # HTTP, MCP
    assert Scope.of(["src/**"], ["rs"]).describe("flags") == "--path 'src/**' --lang rust"  # the command line


def test_a_glob_matching_nothing_from_the_root_names_the_one_matching_at_any_depth():
    assert Scope.of(["app/**"]).no_match(FILES) == (
        'no indexed file matches paths ["app/**"]; globs start at the repository root, '
        'and paths ["**/app/**"] matches 2 files')
    assert Scope.of(["nowhere/**"]).no_match(FILES) == 'no indexed file matches paths ["nowhere/**"]'
    assert Scope.of(["*.rb", "/app/**"]).unanchored() is None  # any depth already, or anchored on purpose


def test_the_command_line_words_the_suggested_glob_as_a_flag_too():
    from grepgraph.cli import in_flag_terms

    message = Scope.of(["app/**"], ["go"]).no_match(FILES)
    assert in_flag_terms(message, {"paths": ["app/**"], "languages": ["go"]}) == (
        "no indexed file matches --path 'app/**' --lang go; globs start at the repository root, "
        "and --path '**/app/**' --lang go matches 2 files")


def test_within_and_dense_depth():
    assert within({1: 0.5, 2: 0.7, 9: 0.1}, np.array([2, 9])) == {2: 0.7, 9: 0.1}
    assert dense_depth(100, None, 10_000, 2_000) == 100
    assert dense_depth(100, np.arange(1_000), 10_000, 2_000) == 1_000  # a tenth of the chunks: ten times deeper
    assert dense_depth(100, np.arange(10), 10_000, 2_000) == 2_000
