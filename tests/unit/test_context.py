"""Run settings: field defaults < grepgraph.toml < GREPGRAPH_* variables < the caller's context."""

from __future__ import annotations

import json
import os
from dataclasses import fields

import pytest
from grepgraph.graphs.context import Context, describe_settings, given_values, resolve_context


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No GREPGRAPH_* variable from the outside and an empty working directory (the default repository)."""
    for name in list(os.environ):
        if name.startswith("GREPGRAPH_"):
            monkeypatch.delenv(name)
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    return workdir


def write_config(tmp_path, text: str, name: str = "settings.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults(clean_environment):
    context = resolve_context()
    assert context.limit == 10
    assert context.llm_enabled is True
    assert context.llm_base_url == "http://localhost:11434"
    assert context.llm_model == "qwen2.5-coder:1.5b"
    assert (context.llm_provider, context.llm_api_key) == ("ollama", "")
    assert context.llm_timeout_s == 20.0
    assert context.index_dir == ""
    assert context.repo == str(clean_environment)


def test_every_setting_is_described():
    described = describe_settings()
    assert [name for name, _, _ in described] == [f.name for f in fields(Context)]
    assert all(description for _, _, description in described)


def test_toml_file_named_by_grepgraph_config(monkeypatch, tmp_path):
    path = write_config(tmp_path, 'limit = 7\nllm_model = "llama3.2:1b"\nllm_enabled = false\nllm_timeout_s = 2\n')
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(path))
    context = resolve_context()
    assert (context.limit, context.llm_model, context.llm_enabled) == (7, "llama3.2:1b", False)
    assert context.llm_timeout_s == 2.0 and isinstance(context.llm_timeout_s, float)


def test_toml_grepgraph_table(monkeypatch, tmp_path):
    path = write_config(tmp_path, "[grepgraph]\nlimit = 4\nrerank_top_n = 5\n")
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(path))
    context = resolve_context()
    assert (context.limit, context.rerank_top_n) == (4, 5)


def test_grepgraph_toml_in_the_working_directory(clean_environment):
    # The working directory is the default repository, so its grepgraph.toml is the repository's.
    (clean_environment / "grepgraph.toml").write_text("max_sub_queries = 2\n", encoding="utf-8")
    assert resolve_context().max_sub_queries == 2


def test_the_file_is_the_searched_repositorys(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    for repo, limit in ((first, 3), (second, 4)):
        repo.mkdir()
        (repo / "grepgraph.toml").write_text(f"limit = {limit}\n", encoding="utf-8")
    assert resolve_context({"repo": str(first)}).limit == 3
    assert resolve_context({"repo": str(second)}).limit == 4
    assert resolve_context({"repo": str(tmp_path)}).limit == 10  # no file there
    # $GREPGRAPH_CONFIG names one file for every repository.
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(write_config(tmp_path, "limit = 9\n")))
    assert resolve_context({"repo": str(first)}).limit == 9


def test_a_missing_config_file_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(tmp_path / "nowhere.toml"))
    with pytest.raises(ValueError, match="GREPGRAPH_CONFIG=.*nowhere.toml: no such file"):
        resolve_context()


def _other_value(f, tag: int):
    """A value of the field's type unlike its default (and unlike other tags)."""
    default = f.default
    if isinstance(default, bool):
        return not default
    choices = f.metadata.get("choices") or ()
    if choices:
        return next(choice for choice in choices if choice != default)
    if isinstance(default, (int, float)):
        return default + tag
    return f"/{tag}/{f.name}"


SETTINGS = [f for f in fields(Context)]


@pytest.mark.parametrize("f", SETTINGS, ids=[f.name for f in SETTINGS])
def test_every_setting_takes_each_layer_in_order(monkeypatch, tmp_path, f):
    from_file, from_env, from_caller = _other_value(f, 1), _other_value(f, 2), _other_value(f, 3)
    if isinstance(f.default, bool) or f.metadata.get("choices"):  # two values: the file and the caller agree
        from_env = from_caller = f.default
    path = write_config(tmp_path, f"[grepgraph]\n{f.name} = {json.dumps(from_file)}\n")
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(path))
    assert getattr(resolve_context(), f.name) == from_file
    monkeypatch.setenv(f"GREPGRAPH_{f.name.upper()}", str(from_env).lower() if isinstance(from_env, bool)
                       else str(from_env))
    assert getattr(resolve_context(), f.name) == from_env
    assert getattr(resolve_context({f.name: from_caller}), f.name) == from_caller
    assert getattr(resolve_context(Context(**{f.name: from_caller})), f.name) == from_caller
    if f.name != "repo":  # an empty repo means "not given"
        assert getattr(resolve_context(Context(**{f.name: f.default})), f.name) == f.default


def test_the_api_key_comes_from_the_environment_and_is_never_shown(monkeypatch, clean_environment):
    monkeypatch.setenv("GREPGRAPH_LLM_API_KEY", "sk-secret-123")
    context = resolve_context()
    assert context.llm_api_key == "sk-secret-123"
    assert "sk-secret-123" not in repr(context)


def test_environment_beats_the_file(monkeypatch, tmp_path):
    path = write_config(tmp_path, 'limit = 7\nllm_model = "from-file"\n')
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(path))
    monkeypatch.setenv("GREPGRAPH_LIMIT", "3")
    monkeypatch.setenv("GREPGRAPH_LLM_ENABLED", "false")
    monkeypatch.setenv("GREPGRAPH_STRONG_LEXICAL_SCORE", "9.5")
    context = resolve_context()
    assert context.limit == 3
    assert context.llm_model == "from-file"
    assert context.llm_enabled is False
    assert context.strong_lexical_score == 9.5


@pytest.mark.parametrize("raw", ["1", "true", "True", "yes", "on"])
def test_boolean_spellings(monkeypatch, raw):
    monkeypatch.setenv("GREPGRAPH_LLM_ENABLED", raw)
    assert resolve_context().llm_enabled is True


@pytest.mark.parametrize(("variable", "raw"), [("GREPGRAPH_LIMIT", "ten"), ("GREPGRAPH_LLM_TIMEOUT_S", "fast"),
                                               ("GREPGRAPH_REWRITE_MIN_CONTENT_WORDS", "2.5")])
def test_a_bad_environment_value_names_the_variable(monkeypatch, variable, raw):
    monkeypatch.setenv(variable, raw)
    with pytest.raises(ValueError, match=f"{variable}={raw!r}"):
        resolve_context()


def test_a_bad_boolean_value_is_rejected(monkeypatch):
    monkeypatch.setenv("GREPGRAPH_LLM_ENABLED", "ture")
    with pytest.raises(ValueError, match="GREPGRAPH_LLM_ENABLED"):
        resolve_context()


def test_a_bad_file_value_names_the_setting(monkeypatch, tmp_path):
    path = write_config(tmp_path, 'limit = "ten"\n')
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(path))
    with pytest.raises(ValueError, match="limit"):
        resolve_context()


def test_an_unknown_key_in_the_file_is_an_error(monkeypatch, tmp_path):
    path = write_config(tmp_path, "limit = 5\nllm_modle = 'typo'\n")
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(path))
    with pytest.raises(ValueError, match="unknown setting.*llm_modle"):
        resolve_context()


def test_an_unknown_key_in_the_explicit_context_is_an_error():
    with pytest.raises(ValueError, match="unknown setting.*limt"):
        resolve_context({"limt": 3})


def test_explicit_context_beats_file_and_environment(monkeypatch, tmp_path):
    path = write_config(tmp_path, 'limit = 7\nllm_model = "from-file"\n')
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(path))
    monkeypatch.setenv("GREPGRAPH_LIMIT", "3")
    context = resolve_context({"limit": 20, "llm_model": "explicit", "index_dir": None})
    assert (context.limit, context.llm_model) == (20, "explicit")
    assert context.index_dir == ""  # None means "not given"
    # A Context instance carries only its non-default fields as explicit values.
    assert resolve_context(Context(limit=25)).limit == 25


def test_an_explicit_value_equal_to_the_default_still_wins(monkeypatch):
    monkeypatch.setenv("GREPGRAPH_LIMIT", "3")
    monkeypatch.setenv("GREPGRAPH_LLM_ENABLED", "false")
    # What LangGraph does with graph.invoke(..., context={"limit": 10, "llm_enabled": True}):
    context = resolve_context(Context(**{"limit": 10, "llm_enabled": True}))
    assert (context.limit, context.llm_enabled) == (10, True)
    # Fields the caller did not give still come from the environment.
    assert resolve_context(Context(limit=10)).llm_enabled is False


def test_a_context_remembers_what_its_caller_gave():
    assert given_values(Context(limit=10, llm_model="x")) == {"limit": 10, "llm_model": "x"}
    assert given_values(Context()) == {}
    changed = Context()
    changed.limit = 4  # set after construction: differs from the default, so it counts as given
    assert given_values(changed) == {"limit": 4}
    assert given_values({"limit": 10}) == {"limit": 10}


def test_file_changes_apply_at_once(monkeypatch, tmp_path):
    path = write_config(tmp_path, "limit = 5\n")
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(path))
    assert resolve_context().limit == 5
    path.write_text("limit = 66\n", encoding="utf-8")  # another size: a change even within one mtime tick
    assert resolve_context().limit == 66


def test_environment_changes_apply_at_once(monkeypatch):
    assert resolve_context().limit == 10
    monkeypatch.setenv("GREPGRAPH_LIMIT", "4")
    assert resolve_context().limit == 4


def test_repo_defaults_to_grepgraph_repo_then_the_working_directory(monkeypatch, tmp_path, clean_environment):
    assert resolve_context().repo == str(clean_environment)
    repo = tmp_path / "project"
    repo.mkdir()
    monkeypatch.setenv("GREPGRAPH_REPO", str(repo))
    assert resolve_context().repo == str(repo)
    assert resolve_context({"repo": "/somewhere/else"}).repo == "/somewhere/else"
