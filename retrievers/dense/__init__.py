"""Vectors: embedding models, derived model files, the embedding cache, the Chroma store and its sync.

The models are the bundled MiniLM and Ollama's; leases keep a vector store open while a search reads it.

May import: ``core``, ``source``, ``lexical``, ``parse``.
"""
