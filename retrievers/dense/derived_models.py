"""Model files derived once per machine from the packaged MiniLM, kept in the user's cache.

- **Unguarded** (the default's file): the packaged graph without the NaN guards its exporter put after each
  attention softmax (``Where(IsNaN(p), 0, p)``). A row of attention weights is NaN only when every key of it
  is masked, and every text keeps its ``[CLS]``, so the guards never fire: the vectors are the same, and
  embedding takes ~4% less time.
- **Quantized** (``minilm-quantized``): the packaged model stores its weights as int8 but casts them back to
  float32 at run time, so every matrix product runs in float32. Folding those casts into float32 weights
  (onnxruntime's basic graph optimisation) and re-quantizing with per-channel dynamic int8 turns them into
  integer products: ~1.5x fewer CPU-seconds per text on 2 cores, vectors at cosine ~0.99 to the original.

A copy is named after a hash of its source and its recipe, written under a temporary name and renamed into
place, so two processes making it at once both end with the same complete file.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ..core.settings import user_cache_dir
from .model_files import sha256_of

log = logging.getLogger(__name__)

# Bump a recipe when what it does changes: the file name (and the quantized model's id) changes with it.
QUANTIZE_RECIPE = "dyn-s8-perchannel-v1"
UNGUARDED_RECIPE = "no-nan-guards-v1"


def models_cache_dir() -> Path:
    """Where derived model files live: ``$XDG_CACHE_HOME/grepgraph/models``."""
    return user_cache_dir() / "grepgraph" / "models"


def file_digest(path: Path) -> str:
    """A short content hash of a model file: its SHA-256's first 64 bits, the hash its verification computed."""
    return sha256_of(path)[:16]


def derived_path(source: Path, recipe: str, cache_dir: Path) -> Path:
    """The cache file the ``recipe`` copy of ``source`` is kept in."""
    return cache_dir / f"{source.stem}-{recipe}-{file_digest(source)}.onnx"


def quantized_path(source: Path, cache_dir: Path) -> Path:
    """The cache file the quantized copy of ``source`` is kept in."""
    return derived_path(source, QUANTIZE_RECIPE, cache_dir)


def derived_model(source: Path, recipe: str, make: Callable[[Path, Path], None],
                  cache_dir: Path | None = None) -> Path:
    """The ``recipe`` copy of ``source``, made by ``make(source, target)`` on first use and kept in ``cache_dir``.

    Raises:
        ImportError: A package the recipe needs (``onnx``) is missing.
        OSError: The cache directory is not writable.
    """
    target = derived_path(source, recipe, cache_dir or models_cache_dir())
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.onnx")
    try:
        make(source, scratch)
        os.replace(scratch, target)  # atomic: a racing process replaces it with an identical file
    finally:
        scratch.unlink(missing_ok=True)
    log.info("derived %s (%s) into %s", source, recipe, target)
    return target


def quantized_model(source: Path, cache_dir: Path | None = None) -> Path:
    """The dynamically quantized copy of ``source`` (~3 s to make); raises as :func:`derived_model`."""
    return derived_model(source, QUANTIZE_RECIPE, _quantized_copy, cache_dir)


def unguarded_model(source: Path, cache_dir: Path | None = None) -> Path:
    """``source`` without its softmax NaN guards (~0.2 s to make); raises as :func:`derived_model`."""
    return derived_model(source, UNGUARDED_RECIPE, _without_nan_guards, cache_dir)


def _without_nan_guards(source: Path, target: Path) -> None:
    """Write ``source`` with every ``Where(IsNaN(s), c, s)`` after a ``Softmax`` ``s`` replaced by ``s``."""
    import onnx

    model = onnx.load(str(source))
    nodes = list(model.graph.node)
    made_by = {output: position for position, node in enumerate(nodes) for output in node.output}
    readers = Counter(name for node in nodes for name in node.input)
    kept_names = {output.name for output in model.graph.output}
    dropped: set[int] = set()
    replaced: dict[str, str] = {}
    for position, node in enumerate(nodes):
        if node.op_type != "Where" or node.output[0] in kept_names:
            continue
        test, value = made_by.get(node.input[0]), made_by.get(node.input[2])
        if (test is not None and value is not None and nodes[test].op_type == "IsNaN"
                and nodes[value].op_type == "Softmax" and nodes[test].input[0] == node.input[2]):
            replaced[node.output[0]] = node.input[2]
            dropped.update((position, test) if readers[nodes[test].output[0]] == 1 else (position,))
    kept = [node for position, node in enumerate(nodes) if position not in dropped]
    for node in kept:
        for slot, name in enumerate(node.input):
            node.input[slot] = replaced.get(name, name)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    onnx.save(model, str(target))


def _quantized_copy(source: Path, target: Path) -> None:
    folded = target.with_suffix(".folded.onnx")
    try:
        _fold_weights(source, folded)
        _quantize(folded, target)
    finally:
        folded.unlink(missing_ok=True)


def _fold_weights(source: Path, folded: Path) -> None:
    """Write ``source`` with its int8->float32 weight casts folded into float32 constants."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.log_severity_level = 3
    onnxruntime.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])


def _quantize(folded: Path, quantized: Path) -> None:
    """Dynamic int8 quantization, one scale per output channel (per tensor lost ~6% cosine to the original)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    root.addFilter(_no_preprocessing_advice)
    try:
        quantize_dynamic(str(folded), str(quantized), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.removeFilter(_no_preprocessing_advice)


def _no_preprocessing_advice(record: logging.LogRecord) -> bool:
    """Drop the quantizer's advice to pre-process the model (it logs it on the root logger, every time)."""
    return "pre-processing before quantization" not in record.getMessage()
