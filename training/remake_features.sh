#!/usr/bin/env bash
# Every features table made again for one embedding model (after a change to the columns, the index or the
# model): the mined queries, the pasted ones, the commit histories, the failing tests and the kept-docs
# docstrings. ~11 minutes with warm indexes and embedding caches on 2 cores; more when vectors must be made.
#   training/remake_features.sh                 # the model in GREPGRAPH_EMBEDDING_MODEL (default minilm)
#   GREPGRAPH_EMBEDDING_MODEL=code-minilm training/remake_features.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python
$python training/features.py --again
$python training/features.py --pasted --again
$python training/features.py --commits --again
$python training/features.py --commits --failing --again
$python training/features.py --documented --again
