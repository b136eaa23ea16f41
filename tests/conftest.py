"""Test-wide settings: keep the machine-wide embedding cache out of the tests' way."""

import os
import shutil
from pathlib import Path

SAMPLE_REPO = Path(__file__).resolve().parent / "fixtures" / "sample_repo"

# Tests measure what indexing really does; a vector cached by an earlier run would hide it.
os.environ.setdefault("GREPGRAPH_EMBEDDING_CACHE", "off")


def indexed_sample_repo(tmp_path_factory) -> dict[str, str]:
    """The fixture repository copied and indexed once per session (real MiniLM vectors, embedded Chroma).

    Returns the graph context that points at it: ``{"repo": ..., "index_dir": ...}``.
    """
    from retrievers.index import CodeIndex

    root = tmp_path_factory.getbasetemp() / "indexed_sample_repo"
    repo, index_dir = root / "repo", root / "index"
    if not (root / "ready").exists():
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(SAMPLE_REPO, repo)
        CodeIndex(repo, index_dir).update()
        (root / "ready").touch()
    return {"repo": str(repo), "index_dir": str(index_dir)}
