"""A cross-encoder's input (the query and one candidate read together, as word pieces) and the exported model's scores.

The reranker (``train_reranker.py``) reads ``[CLS] query [SEP] candidate [SEP]``, the query cut to
:data:`QUERY_TOKENS` word pieces and the whole pair to :data:`PAIR_TOKENS`, with the runtime's tokenizer. The
candidate is its path and symbol, then its code without comments: what a person scanning a result list reads
first. Training, export and evaluation build the pair here, and reorder a pool and score it (:func:`reordered`,
:func:`reciprocal_rank`) here. :class:`CrossEncoder` runs an exported file through onnxruntime, as a search would
(its graph adds the learned multiple of the ranking's log-score to the pair's logit).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grepgraph.retrievers.dense.model_files import tokenizer_file  # noqa: E402

QUERY_TOKENS = 64
PAIR_TOKENS = 160
CLS, SEP = "[CLS]", "[SEP]"
# The first results reordered: where the definition asked for is, when the ranking has it at all (91% of the
# validation queries; 95% in the first 20).
RERANKED = 10

# Comment-only lines and Python string statements (docstrings) are left out of what the reranker reads. A
# description query is mined from a definition's doc comment, which the corpus then blanks (as the rulers do), so
# among candidates that keep theirs the one without is the answer: a reranker shown comments learned that and not
# the query (training/README.md, "A cross-encoder reranker").
PYTHON_COMMENTS = re.compile(r"""^[ \t]*(?:#.*|[rRbBuU]{0,2}(\"\"\"|\'\'\')[\s\S]*?\1[ \t]*)$\n?""", re.MULTILINE)
C_COMMENTS = re.compile(r"^[ \t]*(?://.*|/\*[\s\S]*?\*/[ \t]*)$\n?", re.MULTILINE)
PYTHON_SUFFIXES = (".py", ".pyi")


def without_comments(code: str, path: str) -> str:
    """``code`` without its comment-only lines and doc strings (Python's ``#``, C-like ``//`` and ``/* */``)."""
    pattern = PYTHON_COMMENTS if path.endswith(PYTHON_SUFFIXES) else C_COMMENTS
    return pattern.sub("", code)


def candidate_text(path: str, symbol: str, code: str, keep_comments: bool = False) -> str:
    """What the reranker reads of a candidate: where it is, then its code without comments.

    ``keep_comments``: the code as it is, as the first reranker trained here read it (to measure what it learned).
    """
    return f"{path} {symbol}\n{code if keep_comments else without_comments(code, path)}"


def pool_text(candidate: dict, keep_comments: bool = False) -> str:
    """:func:`candidate_text` of a pool's candidate (``pools.py``'s dict)."""
    return candidate_text(candidate["path"], candidate["symbol"], candidate["text"], keep_comments)


def runtime_tokenizer() -> Any:
    """The tokenizer grepgraph ships, without truncation or padding (:func:`pair_ids` cuts)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_file()))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def pair_ids(tokenizer: Any, query: str, candidate: str) -> tuple[list[int], list[int]]:
    """Word-piece ids and token types of one (query, candidate) pair, within the budgets above."""
    query_ids = tokenizer.encode(query, add_special_tokens=False).ids[:QUERY_TOKENS]
    room = PAIR_TOKENS - len(query_ids) - 3
    candidate_ids = tokenizer.encode(candidate, add_special_tokens=False).ids[:room]
    cls, sep = tokenizer.token_to_id(CLS), tokenizer.token_to_id(SEP)
    ids = [cls, *query_ids, sep, *candidate_ids, sep]
    types = [0] * (len(query_ids) + 2) + [1] * (len(candidate_ids) + 1)
    return ids, types


def padded(pairs: list[tuple[list[int], list[int]]]) -> dict[str, np.ndarray]:
    """The model's three int64 inputs for a batch of pairs, padded to the longest."""
    width = max(len(ids) for ids, _ in pairs)
    input_ids = np.zeros((len(pairs), width), dtype=np.int64)
    token_types = np.zeros_like(input_ids)
    mask = np.zeros_like(input_ids)
    for row, (ids, types) in enumerate(pairs):
        input_ids[row, : len(ids)] = ids
        token_types[row, : len(types)] = types
        mask[row, : len(ids)] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": token_types}


class CrossEncoder:
    """An exported reranker's onnxruntime session: one score per (query, candidate text), higher first."""

    def __init__(self, model_path: Path, threads: int = 2) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(str(model_path), sess_options=options,
                                                    providers=["CPUExecutionProvider"])
        self.tokenizer = runtime_tokenizer()

    def scores(self, query: str, candidates: list[dict], keep_comments: bool = False) -> np.ndarray:
        """The pair's logit plus the learned multiple of the ranking's log-score, per pool candidate."""
        feeds = padded([pair_ids(self.tokenizer, query, pool_text(c, keep_comments)) for c in candidates])
        feeds["ranking_scores"] = np.asarray([c["score"] for c in candidates], dtype=np.float32)
        return self.session.run(None, feeds)[0]


def reordered(candidates: list[dict], score_head: Callable[[list[dict]], Sequence[float]],
              depth: int = RERANKED) -> list[dict]:
    """``candidates`` with the first ``depth`` in the order of ``score_head``'s scores of them, the rest after."""
    head, tail = candidates[:depth], candidates[depth:]
    if len(head) < 2:
        return candidates
    scores = np.asarray(score_head(head), dtype=np.float64)
    return [head[i] for i in np.argsort(-scores, kind="stable")] + tail


def reciprocal_rank(candidates: list[dict], label: str = "label") -> float:
    """1/rank of the first candidate ``label`` marks (the definition itself, or the rulers' rule) in the first ten."""
    for rank, candidate in enumerate(candidates[:10], start=1):
        if candidate[label]:
            return 1.0 / rank
    return 0.0
