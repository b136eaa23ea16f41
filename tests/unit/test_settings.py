"""Index settings and the layers shared with the run settings: flag > GREPGRAPH_* > grepgraph.toml > index > default."""

from __future__ import annotations

import os
from dataclasses import fields

import pytest
from grepgraph.retrievers.core.index_settings import IndexSettings, describe_index_settings, resolve_index_settings
from grepgraph.retrievers.core.repo_trust import REACHES_OUT, trust
from grepgraph.retrievers.core.run_settings import default_repo, ollama_url
from grepgraph.retrievers.core.service_settings import ServiceSettings, resolve_service_settings
from grepgraph.retrievers.core.settings import CALLER, DEFAULT, ENVIRONMENT, FILE, INDEX, config_path


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("GREPGRAPH_"):
            monkeypatch.delenv(name)
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    return workdir


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    return path


# One value per layer for every index setting, none of them the default.
LAYER_VALUES = {
    "bm25_backend": {"file": "rank_bm25", "stored": "rank_bm25", "env": "bm25s", "flag": "rank_bm25"},
    "embedding_model": {"file": "ollama:from-file", "stored": "ollama:stored", "env": "ollama:from-env",
                        "flag": "minilm"},
    "views": {"file": "card", "stored": "card+code", "env": "card+code", "flag": "auto"},
    "embed_tests": {"file": "never", "stored": "always", "env": "always", "flag": "never"},
    "max_file_bytes": {"file": 1000, "stored": 2000, "env": 3000, "flag": 4000},
}


def test_the_layer_table_names_every_index_setting():
    assert set(LAYER_VALUES) == {f.name for f in fields(IndexSettings)}


@pytest.mark.parametrize("name", sorted(LAYER_VALUES))
def test_every_index_setting_takes_each_layer_in_order(monkeypatch, repo, name):
    values = LAYER_VALUES[name]
    default = getattr(IndexSettings(), name)
    stored = IndexSettings(**{name: values["stored"]})

    def resolved(given=None):
        settings, sources = resolve_index_settings(repo, given, stored=stored)
        return getattr(settings, name), sources[name]

    assert resolve_index_settings(repo)[0] == IndexSettings()
    assert resolve_index_settings(repo)[1][name] == DEFAULT
    assert getattr(resolve_index_settings(repo)[0], name) == default
    assert resolved() == (values["stored"], INDEX)
    text = values["file"] if isinstance(values["file"], int) else f'"{values["file"]}"'
    (repo / "grepgraph.toml").write_text(f"limit = 3\n[index]\n{name} = {text}\n", encoding="utf-8")
    if name in REACHES_OUT:  # where data goes: the repository's file counts once the user trusts it
        assert resolved() == (values["stored"], INDEX)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(repo.parent / "config"))
        trust(repo / "grepgraph.toml", repo.parent / "config")
    assert resolved() == (values["file"], FILE)
    monkeypatch.setenv(f"GREPGRAPH_{name.upper()}", str(values["env"]))
    assert resolved() == (values["env"], ENVIRONMENT)
    assert resolved({name: values["flag"]}) == (values["flag"], CALLER)
    assert resolved({name: None}) == (values["env"], ENVIRONMENT)  # a flag not given


def test_the_index_table_may_sit_under_grepgraph(repo):
    (repo / "grepgraph.toml").write_text('[grepgraph]\nlimit = 3\n[grepgraph.index]\nviews = "card"\n')
    assert resolve_index_settings(repo)[0].views == "card"


@pytest.mark.parametrize(("variable", "raw", "message"), [
    ("GREPGRAPH_VIEWS", "cards", "expected one of auto, card, card[+]code"),
    ("GREPGRAPH_EMBED_TESTS", "sometimes", "expected one of auto, always, never"),
    ("GREPGRAPH_BM25_BACKEND", "lucene", "expected one of bm25s, rank_bm25"),
    ("GREPGRAPH_MAX_FILE_BYTES", "1e6x", "invalid literal"),
])
def test_a_bad_environment_value_names_the_variable_and_the_choices(monkeypatch, repo, variable, raw, message):
    monkeypatch.setenv(variable, raw)
    with pytest.raises(ValueError, match=f"{variable}={raw!r}: {message}"):
        resolve_index_settings(repo)


def test_a_bad_file_value_and_an_unknown_key_name_the_file(repo):
    config = repo / "grepgraph.toml"
    config.write_text('[index]\nviews = "all"\n')
    with pytest.raises(ValueError, match=r"grepgraph.toml: views = 'all': expected one of"):
        resolve_index_settings(repo)
    config.write_text('[index]\nveiws = "card"\n')
    with pytest.raises(ValueError, match="grepgraph.toml: unknown setting.*veiws"):
        resolve_index_settings(repo)


def test_the_file_is_the_repositorys_unless_grepgraph_config_names_one(monkeypatch, repo, tmp_path):
    assert config_path(repo) is None
    (repo / "grepgraph.toml").write_text("limit = 2\n")
    assert config_path(repo) == repo / "grepgraph.toml"
    named = tmp_path / "elsewhere.toml"
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(named))
    assert config_path(repo) == named


def test_outside_the_graph_the_ollama_url_and_repo_come_from_environment_then_file(monkeypatch, repo, tmp_path,
                                                                                  clean_environment):
    assert ollama_url(repo) == "http://localhost:11434"
    (repo / "grepgraph.toml").write_text('llm_base_url = "http://gpu-box:11434"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert ollama_url(repo) == "http://localhost:11434"  # not until the user trusts the repository's file
    trust(repo / "grepgraph.toml", tmp_path / "config")
    assert ollama_url(repo) == "http://gpu-box:11434"
    monkeypatch.setenv("GREPGRAPH_LLM_BASE_URL", "http://127.0.0.1:9999")
    assert ollama_url(repo) == "http://127.0.0.1:9999"

    assert default_repo() == str(clean_environment)
    config = tmp_path / "settings.toml"
    config.write_text(f'repo = "{repo}"\n')
    monkeypatch.setenv("GREPGRAPH_CONFIG", str(config))
    assert default_repo() == str(repo)
    monkeypatch.setenv("GREPGRAPH_REPO", "/from/env")
    assert default_repo() == "/from/env"


def test_every_index_setting_is_described():
    described = describe_index_settings()
    assert [name for name, _, _ in described] == [f.name for f in fields(IndexSettings)]
    assert all(description for _, _, description in described)


def test_grepgraph_init_writes_every_setting_and_the_file_reads_back_as_the_defaults(monkeypatch, repo, capsys):
    import re

    from grepgraph.graphs.context import Context, resolve_context

    from grepgraph.cli import main

    target = repo / "grepgraph.toml"
    assert main(["init", str(target)]) == 0
    text = target.read_text()
    names = set(re.findall(r"^# (\w+) = ", text, flags=re.M))
    assert names == ({f.name for f in fields(Context)} | {f.name for f in fields(IndexSettings)}
                     | {f.name for f in fields(ServiceSettings)})
    target.write_text(re.sub(r"^# (\w+ = )", r"\1", text, flags=re.M))  # every setting uncommented
    assert resolve_index_settings(repo)[0] == IndexSettings()
    assert resolve_index_settings(repo)[1]["views"] == FILE
    assert resolve_service_settings(repo) == ServiceSettings()
    resolved = resolve_context({"repo": str(repo)})
    assert (resolved.limit, resolved.llm_model) == (Context().limit, Context().llm_model)
    assert main(["init", str(target)]) == 2 and "exists" in capsys.readouterr().err
