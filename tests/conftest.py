"""Test-wide settings: keep the machine-wide embedding cache out of the tests' way."""

import os

# Tests measure what indexing really does; a vector cached by an earlier run would hide it.
os.environ.setdefault("GREPGRAPH_EMBEDDING_CACHE", "off")
