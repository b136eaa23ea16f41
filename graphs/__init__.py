"""The LangGraph layer: state, run settings, nodes and the compiled code-search graph."""

import logging

# A library attaches no output of its own: the application (grepgraph.logs for the CLI) decides where records go.
logging.getLogger(__name__).addHandler(logging.NullHandler())
