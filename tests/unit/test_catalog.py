"""The repository catalog and the Agent Server's run policy: what a caller may name, on real directories."""

from __future__ import annotations

import os

import pytest
from grepgraph.graphs.catalog import (
    DeploymentPolicy,
    RepoCatalog,
    RepoNotServed,
    SettingNotAllowed,
    deployment_policy,
    normalise_url,
)
from grepgraph.graphs.context import Context


@pytest.fixture
def tree(tmp_path):
    """``srv/app``, ``srv/lib`` and ``other/app`` (a second ``app``), plus ``link -> srv/app`` and ``secret``."""
    for name in ("srv/app", "srv/lib", "other/app", "secret"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "srv" / "app")
    return tmp_path


def test_a_repository_is_named_by_its_directory_or_its_absolute_path(tree):
    catalog = RepoCatalog([tree / "srv" / "app", tree / "srv" / "lib"])
    app = catalog.lookup("app")
    assert app.path == tree / "srv" / "app" and app.index_dir == tree / "srv" / "app" / ".grepgraph"
    assert catalog.lookup(str(tree / "srv" / "lib")).name == "lib"
    assert catalog.lookup(str(tree / "srv" / "lib") + "/").name == "lib"  # lexical normalisation only
    assert catalog.lookup(None) == catalog.lookup("") == catalog.lookup("  ") == app  # the default


@pytest.mark.parametrize("spelling", [
    "../secret", "{root}/secret", "{root}/srv/lib/../../secret", "{root}/srv/lib/../app", "srv/app", "~",
    ".", "/", "{root}/link", "{root}/srv/app\x00", "APP",
])
def test_no_spelling_of_a_path_reaches_outside_the_catalog(tree, spelling):
    catalog = RepoCatalog([tree / "srv" / "app", tree / "srv" / "lib"])
    with pytest.raises(RepoNotServed, match="is not served by this server; use one of: app"):
        catalog.lookup(spelling.format(root=tree))


def test_a_symlink_the_operator_served_names_its_repository(tree):
    catalog = RepoCatalog([tree / "link"])
    assert catalog.lookup(str(tree / "link")).path == tree / "srv" / "app"
    assert catalog.lookup(str(tree / "srv" / "app")).name == "app"


def test_same_named_repositories_need_their_path(tree):
    catalog = RepoCatalog([tree / "srv" / "app", tree / "other" / "app"])
    with pytest.raises(RepoNotServed, match="names several served repositories"):
        catalog.lookup("app")
    assert catalog.lookup(str(tree / "other" / "app")).path == tree / "other" / "app"


def test_a_missing_repository_stops_the_server(tree):
    with pytest.raises(ValueError, match="repository not found"):
        RepoCatalog([tree / "missing"])
    with pytest.raises(ValueError, match="no repository to serve"):
        RepoCatalog([])


def test_urls_are_compared_by_scheme_host_port_and_path():
    assert normalise_url("HTTP://LocalHost:11434/") == normalise_url("http://localhost:11434")
    assert normalise_url("http://localhost") == "http://localhost:80"
    assert normalise_url("http://evil@localhost:11434") != normalise_url("http://localhost:11434")
    assert normalise_url("http://localhost:11434/v1") != normalise_url("http://localhost:11434")


def policy_for(tree) -> DeploymentPolicy:
    catalog = RepoCatalog([tree / "srv" / "app", tree / "srv" / "lib"], {str(tree / "srv" / "app"): tree / "idx"})
    return DeploymentPolicy(catalog, frozenset({normalise_url("http://localhost:11434")}), "")


def test_a_served_run_gets_the_repository_and_index_it_names(tree):
    admitted = policy_for(tree).admit(Context(repo="lib"))
    assert (admitted.repo, admitted.index_dir) == (str(tree / "srv" / "lib"), str(tree / "srv" / "lib" / ".grepgraph"))
    admitted = policy_for(tree).admit(Context(repo=str(tree / "srv" / "app"), index_dir=str(tree / "idx")))
    assert admitted.index_dir == str(tree / "idx")


@pytest.mark.parametrize(("settings", "error", "message"), [
    ({"repo": "/etc"}, RepoNotServed, "'/etc' is not served"),
    ({"repo": "{root}/srv/lib/../../secret"}, RepoNotServed, "not served"),
    ({"repo": "app", "index_dir": "{root}/secret"}, SettingNotAllowed, "index_dir"),
    ({"repo": "app", "index_dir": "{root}/srv/../idx"}, SettingNotAllowed, "index_dir"),
    ({"repo": "lib", "index_dir": "{root}/idx"}, SettingNotAllowed, "not the index lib is served with"),
    ({"repo": "app", "llm_base_url": "http://collector.example:11434"}, SettingNotAllowed, "llm_base_url"),
    ({"repo": "app", "chroma_url": "http://collector.example:8000"}, SettingNotAllowed, "chroma_url"),
])
def test_a_served_run_cannot_leave_the_policy(tree, settings, error, message):
    context = Context(**{key: value.format(root=tree) for key, value in settings.items()})
    with pytest.raises(error, match=message):
        policy_for(tree).admit(context)


def test_the_deployment_lists_more_repositories_and_llm_urls(tree, monkeypatch):
    monkeypatch.setenv("GREPGRAPH_REPO", str(tree / "srv" / "app"))
    monkeypatch.setenv("GREPGRAPH_LLM_BASE_URL", "http://localhost:11434")
    monkeypatch.delenv("GREPGRAPH_INDEX_DIR", raising=False)
    monkeypatch.delenv("GREPGRAPH_CHROMA_URL", raising=False)
    monkeypatch.setenv("GREPGRAPH_ALLOWED_REPOS", os.pathsep.join([str(tree / "srv" / "lib"), ""]))
    monkeypatch.setenv("GREPGRAPH_ALLOWED_LLM_URLS", "http://gpu.lan:11434/, ")
    policy = deployment_policy()
    assert policy.repos.names == ["app", "lib"]
    assert policy.admit(Context(repo="lib", llm_base_url="http://GPU.lan:11434")).repo == str(tree / "srv" / "lib")
    assert policy.admit(Context()).repo == str(tree / "srv" / "app")  # the deployment's own, by default
    with pytest.raises(RepoNotServed):
        policy.admit(Context(repo=str(tree / "secret")))
    monkeypatch.setenv("GREPGRAPH_ALLOWED_REPOS", str(tree / "missing"))
    with pytest.raises(ValueError, match="GREPGRAPH_ALLOWED_REPOS / GREPGRAPH_REPO: repository not found"):
        deployment_policy()
