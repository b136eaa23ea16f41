"""Vectors: embedding models, derived model files, the embedding cache, the Chroma store and its sync.

The models are the bundled MiniLM and Ollama's; leases keep a vector store open while a search reads it, and
after the store or the embedding server failed, the breaker lets searches go without vectors for a while.

May import: ``core``, ``source``, ``lexical``, ``parse``.
"""

import os

# onnxruntime reports usage to Microsoft (mobile.events.data.microsoft.com) from a thread it starts on import,
# unless this is set before it loads: indexing a repository sends nothing anywhere.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
