"""Trust: a repository's own index and settings are used only when the user made or trusted them."""

from __future__ import annotations

import json
import subprocess

import pytest
from grepgraph.graphs.context import resolve_context
from grepgraph.retrievers.core import repo_trust
from grepgraph.retrievers.lexical.bm25 import RankBm25Index, load_lexical_index, save_lexical_index
from grepgraph.retrievers.store import trust


@pytest.fixture(autouse=True)
def own_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GREPGRAPH_CONFIG", raising=False)
    trust._verdicts.clear()


def test_an_index_folder_this_user_made_is_trusted_and_another_users_is_not(tmp_path, monkeypatch):
    mine = tmp_path / "repo" / ".grepgraph"
    assert trust.verdict(mine).trusted  # nothing there yet: ours to make
    mine.mkdir(parents=True)
    trust.mark_as_own(mine)
    assert trust.verdict(mine).trusted
    moved = tmp_path / "moved" / ".grepgraph"
    moved.parent.mkdir()
    mine.rename(moved)
    assert trust.verdict(moved).trusted  # a repository moved with its index keeps it

    shipped = tmp_path / "other" / ".grepgraph"
    shipped.mkdir(parents=True)
    (shipped / "index.sqlite").write_bytes(b"not ours")
    assert not trust.verdict(shipped).trusted
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "someone-else"))
    trust.mark_as_own(shipped)  # marked under another key: another user, another machine
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    trust._verdicts.clear()
    judged = trust.verdict(shipped)
    assert not judged.trusted and "not made by you" in judged.reason


def test_an_index_folder_tracked_by_git_is_foreign_even_with_a_valid_mark(tmp_path):
    repo = tmp_path / "repo"
    index_dir = repo / ".grepgraph"
    index_dir.mkdir(parents=True)
    trust.mark_as_own(index_dir)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-f", ".grepgraph"], check=True)
    trust._verdicts.clear()
    judged = trust.verdict(index_dir)
    assert not judged.trusted and "tracked by git" in judged.reason


def test_a_foreign_index_folder_sends_the_index_to_the_users_cache(tmp_path, caplog):
    repo = tmp_path / "repo"
    (repo / ".grepgraph").mkdir(parents=True)
    (repo / ".grepgraph" / "index.sqlite").write_bytes(b"shipped")
    with caplog.at_level("WARNING", logger="grepgraph.trust"):
        location = trust.index_location(repo)
    assert location == trust.cache_index_dir(repo)
    assert str(tmp_path / "cache") in str(location)
    assert any("not reading" in record.getMessage() for record in caplog.records)


def test_rank_bm25_segments_are_json_and_a_planted_pickle_is_never_read(tmp_path):
    index = RankBm25Index.build([["alpha", "beta"], ["gamma"], ["delta"], ["alpha"]])
    save_lexical_index(index, tmp_path / "bm25")
    assert not list((tmp_path / "bm25").glob("*.pkl"))
    (tmp_path / "bm25" / "documents.pkl").write_bytes(b"cos\nsystem\n(S'touch /tmp/pwned'\ntR.")
    loaded = load_lexical_index(tmp_path / "bm25")
    assert loaded.scores(["gamma"])[1] > 0


def test_an_unknown_engine_marker_is_refused(tmp_path):
    (tmp_path / "bm25").mkdir()
    (tmp_path / "bm25" / "engine.json").write_text(json.dumps({"engine": "os.system"}))
    with pytest.raises(ValueError, match="unknown BM25 engine"):
        load_lexical_index(tmp_path / "bm25")


def test_a_repositorys_settings_may_not_say_where_data_goes_until_trusted(tmp_path, caplog):
    repo = tmp_path / "repo"
    repo.mkdir()
    config = repo / "grepgraph.toml"
    config.write_text('llm_base_url = "http://collector.invalid:1"\nllm_api_key = "x"\nrerank_top_n = 3\n')
    with caplog.at_level("WARNING", logger="grepgraph.trust"):
        settings = resolve_context({"repo": str(repo)})
    assert settings.llm_base_url != "http://collector.invalid:1"
    assert settings.rerank_top_n == 3  # ranking settings still count
    notices = [record.getMessage() for record in caplog.records if record.name == "grepgraph.trust"]
    assert len(notices) == 1 and "llm_base_url" in notices[0] and "grepgraph trust" in notices[0]

    repo_trust.trust(config, tmp_path / "config")
    assert resolve_context({"repo": str(repo)}).llm_base_url == "http://collector.invalid:1"

    config.write_text(config.read_text().replace("collector", "elsewhere"))  # changed: trust again
    assert resolve_context({"repo": str(repo)}).llm_base_url != "http://elsewhere.invalid:1"
