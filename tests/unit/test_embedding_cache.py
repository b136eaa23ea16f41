import numpy as np

from retrievers.embedding_cache import EmbeddingCache, default_cache_path


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
