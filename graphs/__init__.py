"""The LangGraph layer: state, run settings, nodes and the compiled code-search graph."""
