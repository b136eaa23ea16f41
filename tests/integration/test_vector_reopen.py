"""A long-running reader reloads Chroma after each re-index and frees the copy it replaces (real Chroma)."""

import gc
import shutil
from pathlib import Path

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from grepgraph.retrievers.core.index_settings import DEFAULT_EMBEDDING_MODEL
from grepgraph.retrievers.dense.embeddings import embedder_for
from grepgraph.retrievers.dense.minilm import MiniLMEmbedder
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex, closing_connection

from tests.conftest import SAMPLE_REPO

PLANTS = ("marigold", "tulip", "fern", "cactus", "orchid", "lavender", "bamboo", "ivy")
REOPENS = 200
# Before clients were released, each reopen of the fixture's database kept ~0.5 MB (77 MB over 150 here);
# released, 150 reopens grew 12 MB (allocator noise, caches of the warm process).
REOPENS_GROWTH_LIMIT_MB = 35


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    """One real model for the module."""
    return embedder_for(DEFAULT_EMBEDDING_MODEL)


@pytest.fixture
def repo(tmp_path: Path, embedder: MiniLMEmbedder) -> Path:
    """A copy of the fixture repository, indexed with vectors."""
    copy = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, copy)
    CodeIndex(copy, embedder=embedder).update()
    return copy


def current_store(index: CodeIndex):
    """The store the index's calls use now (opening it if none is open)."""
    with index.using_vectors() as store:
        return store


def is_released(store) -> bool:
    """The store's client is closed and its Chroma system stopped (native handles dropped)."""
    system = store.client.system
    return store.closed and not system._running and not any(
        getattr(component, "bindings", None) is not None for component in system.components())


def registered_systems(index: CodeIndex) -> list:
    """Chroma systems in Chroma's process-wide registry for this index's database."""
    return [system for identifier, system in SharedSystemClient._identifier_to_system.items()
            if identifier == str(index.index_dir / "chroma")]


def add_function(repo: Path, plant: str) -> None:
    """A new file with one function whose docstring no other chunk shares."""
    (repo / "graphstore" / f"{plant}.py").write_text(
        f"def tally_{plant}(rows):\n"
        f'    """Count the {plant} seedlings planted in the greenhouse rows."""\n'
        "    return len(rows)\n")


def test_each_reindex_is_seen_and_the_replaced_client_is_released(repo, embedder):
    writer = CodeIndex(repo, embedder=embedder)  # as another process would: its own client
    searcher = Searcher(CodeIndex(repo, embedder=embedder))
    stores = []
    try:
        for plant in PLANTS:
            add_function(repo, plant)
            assert writer.update().vectors_embedded > 0
            hits = searcher.search(f"how many {plant} seedlings are in the greenhouse", limit=3)[0]
            assert f"tally_{plant}" in {hit.symbol for hit in hits}
            stores.append(current_store(searcher.index))
        assert len({id(store.client.system) for store in stores}) == len(PLANTS)
        assert all(is_released(store) for store in stores[:-1])
        assert not stores[-1].closed
        assert registered_systems(searcher.index) == []
    finally:
        searcher.close()
    assert is_released(stores[-1])


def test_a_call_in_progress_keeps_its_store_until_it_ends(repo, embedder):
    index = CodeIndex(repo, embedder=embedder)
    query = embedder.embed(["open a connection to the graph store"])[0]
    with index.using_vectors() as store:
        index.reopen_vectors()
        assert not store.closed
        assert store.query("card", query, 3)  # still answers
    assert is_released(store)
    fresh = current_store(index)
    assert fresh is not store and not fresh.closed
    index.reopen_vectors()
    assert is_released(fresh)


def test_many_reopens_return_their_memory(repo, embedder):
    index = CodeIndex(repo, embedder=embedder)
    query = np.asarray(embedder.embed(["read the settings file"])[0])

    def reopen_and_query() -> None:
        with index.using_vectors() as store:
            store.query("card", query, 5)
        index.reopen_vectors()

    for _ in range(20):  # allocator and Chroma warm-up
        reopen_and_query()
    gc.collect()
    before = rss_mb()
    for _ in range(REOPENS):
        reopen_and_query()
    gc.collect()
    assert rss_mb() - before < REOPENS_GROWTH_LIMIT_MB
    assert registered_systems(index) == []


def rss_mb() -> float:
    """This process's resident memory."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def card_key_of(index: CodeIndex, symbol: str) -> str:
    with closing_connection(index) as connection:
        return connection.execute("SELECT card_key FROM chunks WHERE symbol = ?", (symbol,)).fetchone()[0]


def test_changes_made_through_the_searchers_own_index_keep_its_store(repo, embedder):
    shared = CodeIndex(repo, embedder=embedder)  # the resident service: its watcher writes through the searcher's index
    searcher = Searcher(shared)
    try:
        searcher.search("count the seedlings", limit=1)
        store = current_store(shared)
        for plant in PLANTS[:3]:
            add_function(repo, plant)
            assert shared.update().vectors_embedded > 0
            hits = searcher.search(f"how many {plant} seedlings are in the greenhouse", limit=3)[0]
            assert f"tally_{plant}" in {hit.symbol for hit in hits}
            assert current_store(shared) is store and not store.closed  # no reload
            assert not store.missing("card", [card_key_of(shared, f"tally_{plant}")])  # the new vector is in it

        add_function(repo, PLANTS[3])
        assert CodeIndex(repo, embedder=embedder).update().vectors_embedded > 0  # another writer: reload
        hits = searcher.search(f"how many {PLANTS[3]} seedlings are in the greenhouse", limit=3)[0]
        assert f"tally_{PLANTS[3]}" in {hit.symbol for hit in hits}
        assert current_store(shared) is not store and is_released(store)
    finally:
        searcher.close()


def test_a_store_holds_a_change_only_in_an_unbroken_line_of_its_own(repo, embedder):
    index = CodeIndex(repo, embedder=embedder)
    store = current_store(index)
    opened_at = store.holds_version
    assert opened_at and index.vectors_hold(opened_at)
    store.note_change(opened_at, "v1")
    store.note_change("v1", "v2")
    assert index.vectors_hold("v2") and not index.vectors_hold("v1")
    store.note_change("v-elsewhere", "v3")  # a change made by someone else came in between
    assert not index.vectors_hold("v3")
    store.note_change("v3", "v4")
    assert not index.vectors_hold("v4")
    index.reopen_vectors()
