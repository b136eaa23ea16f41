"""Every process finds the same nearest vectors in an index (real Chroma, one reader process per read)."""

import json
import subprocess
import sys
from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings
from grepgraph.retrievers.dense.vectors import HNSW_SAVE_AT_EVERY_WRITE

from tests.given_vectors import given_store, random_vectors

# More vectors than Chroma's default threshold (1,000), in the indexer's batches, ending with a partial batch: with
# the default, the last 502 were left in Chroma's log and inserted in a new order by every process that read them.
VECTORS = 2_550
INDEXER_BATCH = 256
NAMESPACE = "gg-repeatable"
REPOSITORY = Path(__file__).resolve().parents[2]  # where the reader process imports tests.given_vectors from

# A reader in a process of its own: the index's top 100 keys, in rank order, for each query in queries.npy.
READ_NEAREST = """
import json, sys
from pathlib import Path
import numpy as np
from tests.given_vectors import given_store
store = given_store(Path(sys.argv[1]), sys.argv[2])
print(json.dumps([list(store.query("card", query, 100)) for query in np.load(sys.argv[3])]))
store.client.close()
"""


def queries() -> list[np.ndarray]:
    """Twenty query vectors, the same in every process."""
    return list(random_vectors(20, seed=1))


def keys(count: int) -> list[str]:
    return [f"key-{i}" for i in range(count)]


def nearest_in_new_processes(chroma_dir: Path, processes: int = 3) -> list[list[list[str]]]:
    """Each new process's top 100 keys, in rank order, for every query."""
    query_file = chroma_dir.parent / "queries.npy"
    np.save(query_file, np.stack(queries()))
    results = []
    for _ in range(processes):
        done = subprocess.run([sys.executable, "-c", READ_NEAREST, str(chroma_dir), NAMESPACE, str(query_file)],
                              capture_output=True, text=True, timeout=120, check=True, cwd=REPOSITORY)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return results


def test_every_process_reads_the_same_nearest_vectors(tmp_path: Path) -> None:
    chroma_dir = tmp_path / "chroma"
    store = given_store(chroma_dir, NAMESPACE)
    data, names = random_vectors(VECTORS, seed=0), keys(VECTORS)
    for start in range(0, VECTORS, INDEXER_BATCH):
        store.add("card", names[start:start + INDEXER_BATCH], data[start:start + INDEXER_BATCH])
    within = [list(store.query("card", query, 100)) for query in queries()]
    store.client.close()

    first, *others = nearest_in_new_processes(chroma_dir)
    assert all(other == first for other in others)
    # The saved graph is the one the writer searched: a new process finds what the indexer's process found.
    assert first == within


def test_a_collection_made_before_is_switched_and_read_alike(tmp_path: Path) -> None:
    chroma_dir = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(chroma_dir), settings=Settings(anonymized_telemetry=False))
    # What earlier versions made: the default threshold, and the tail of the last batches left in the log.
    legacy = client.get_or_create_collection(f"{NAMESPACE}-card", metadata={"hnsw:space": "cosine"},
                                             embedding_function=None)
    data, names = random_vectors(VECTORS, seed=0), keys(VECTORS)
    for start in range(0, VECTORS, INDEXER_BATCH):
        legacy.upsert(ids=names[start:start + INDEXER_BATCH], embeddings=data[start:start + INDEXER_BATCH])
    assert legacy.configuration["hnsw"]["sync_threshold"] == 1000  # Chroma's default: the last 502 stay unsaved

    store = given_store(chroma_dir, NAMESPACE)
    hnsw = store.collections["card"].configuration["hnsw"]
    store.client.close()
    assert hnsw["sync_threshold"] == HNSW_SAVE_AT_EVERY_WRITE["sync_threshold"]

    first, *others = nearest_in_new_processes(chroma_dir)
    assert all(other == first for other in others)


@pytest.mark.parametrize("count", [1, 2])
def test_small_writes_after_a_load_are_read_alike(tmp_path: Path, count: int) -> None:
    """A write of one vector stays in the log until the next; inserting one alone is the same in every process."""
    chroma_dir = tmp_path / "chroma"
    store = given_store(chroma_dir, NAMESPACE)
    data = random_vectors(VECTORS + count, seed=0)
    names = keys(VECTORS + count)
    store.add("card", names[:VECTORS], data[:VECTORS])
    store.client.close()
    store = given_store(chroma_dir, NAMESPACE)
    store.add("card", names[VECTORS:], data[VECTORS:])
    store.client.close()

    first, *others = nearest_in_new_processes(chroma_dir)
    assert all(other == first for other in others)
