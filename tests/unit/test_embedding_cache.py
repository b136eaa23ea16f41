import numpy as np
from grepgraph.retrievers.dense.cache import EmbeddingCache, default_cache_path


def test_vectors_round_trip_and_unknown_keys_are_misses(tmp_path):
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    vectors = np.arange(6, dtype=np.float32).reshape(2, 3)
    cache.put_many(["a", "b"], vectors)
    found = cache.get_many(["a", "b", "missing"])
    assert set(found) == {"a", "b"}
    assert np.array_equal(found["b"], vectors[1])


def test_a_second_process_sees_what_the_first_stored(tmp_path):
    EmbeddingCache(tmp_path / "cache.sqlite").put_many(["k"], np.ones((1, 4), dtype=np.float32))
    assert np.array_equal(EmbeddingCache(tmp_path / "cache.sqlite").get_many(["k"])["k"], np.ones(4))


def test_the_cache_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("GREPGRAPH_EMBEDDING_CACHE", "off")
    assert default_cache_path() is None
    assert EmbeddingCache.open_default() is None
    monkeypatch.setenv("GREPGRAPH_EMBEDDING_CACHE", str(tmp_path / "x.sqlite"))
    assert default_cache_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("GREPGRAPH_EMBEDDING_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "grepgraph" / "embeddings.sqlite"


def test_a_broken_cache_is_a_miss_and_says_so(tmp_path, caplog):
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    cache.put_many(["a"], np.ones((1, 3), dtype=np.float32))
    cache._connection.execute("DROP TABLE vectors")  # what a foreign or damaged file looks like to the cache
    with caplog.at_level("WARNING", logger="grepgraph.retrievers.dense.cache"):
        assert cache.get_many(["a"]) == {}
        cache.put_many(["b"], np.ones((1, 3), dtype=np.float32))
    messages = [record.getMessage() for record in caplog.records]
    assert any("read failed" in message and "1 texts" in message for message in messages), messages
    assert any("write failed" in message and "1 vectors not cached" in message for message in messages), messages


def test_an_unusable_cache_location_is_logged(tmp_path, monkeypatch, caplog):
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setenv("GREPGRAPH_EMBEDDING_CACHE", str(tmp_path / "file" / "cache.sqlite"))
    with caplog.at_level("WARNING", logger="grepgraph.retrievers.dense.cache"):
        assert EmbeddingCache.open_default() is None
    assert "unusable" in caplog.text and "embedding without it" in caplog.text
