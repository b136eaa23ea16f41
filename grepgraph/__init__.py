"""grepgraph: code search as a LangGraph retrieval graph (entry points: CLI, servers)."""

from grepgraph.retrievers import __version__

__all__ = ["__version__"]
