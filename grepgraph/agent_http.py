"""The LangGraph Agent Server's HTTP app (``langgraph.json`` ``http.app``): the ``Host`` / ``Origin`` guard.

The Agent Server adds its own routes to this app and keeps its middleware in front of all of them,
so ``langgraph dev`` answers only requests that name it by a loopback name with its port, from no
browser page, a loopback one or LangGraph Studio (:mod:`grepgraph.http_guard`). More names and
origins: ``GREPGRAPH_ALLOWED_HOSTS`` / ``GREPGRAPH_ALLOWED_ORIGINS``. What a run may search and call
is checked inside the graph (:func:`graphs.catalog.admit_served_run`).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware

from grepgraph.http_guard import HostGuard, HostPolicy

# Studio runs in the browser at this origin and calls the local server (``langgraph dev`` opens it).
STUDIO_ORIGIN = "https://smith.langchain.com"

app = Starlette(middleware=[Middleware(HostGuard, policy=HostPolicy.from_environment(origins=[STUDIO_ORIGIN]))])
