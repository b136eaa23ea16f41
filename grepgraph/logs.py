"""Where the library's log records go when grepgraph runs as a command or a service.

The packages log through module loggers (``logging.getLogger(__name__)``) and attach no handler of
their own beyond a ``NullHandler``: an application embedding them decides. The command line
decides here: one-line errors and the trace's notes are what a user sees by default (no handler is
added); ``-v`` adds warnings, fallbacks and rebuilds (INFO), ``-vv`` everything (DEBUG);
``--log-file`` keeps them in a file too (a service's log), at INFO or finer.
"""

from __future__ import annotations

import logging
from pathlib import Path

PACKAGES = ("grepgraph",)  # its graphs and retrievers log as grepgraph.graphs.*, grepgraph.retrievers.*
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
CONSOLE_FORMAT = "grepgraph: %(levelname)s %(name)s: %(message)s"
# What a repository was not trusted with (a foreign index, untrusted settings): said at every verbosity.
TRUST_LOGGER = "grepgraph.trust"


def level_for(verbosity: int) -> int:
    """The console level for ``-v`` counted ``verbosity`` times (0: errors only, 1: INFO, 2+: DEBUG)."""
    return {0: logging.ERROR, 1: logging.INFO}.get(verbosity, logging.DEBUG)


def configure_logging(verbosity: int = 0, log_file: str | Path | None = None) -> None:
    """Send the packages' records to stderr at the chosen verbosity, and to ``log_file`` if given.

    Without either, only :data:`TRUST_LOGGER`'s one-line notices reach stderr (the library's errors reach
    the user as exceptions). Calling it again replaces the handlers it added before.
    """
    _show_trust_notices()
    if not verbosity and not log_file:
        return
    console_level = level_for(verbosity)
    handlers: list[logging.Handler] = []
    console = logging.StreamHandler()
    console.setLevel(console_level)
    console.setFormatter(logging.Formatter(CONSOLE_FORMAT))
    handlers.append(console)
    file_level = min(console_level, logging.INFO)
    if log_file:
        path = Path(log_file).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        to_file = logging.FileHandler(path, encoding="utf-8")
        to_file.setLevel(file_level)
        to_file.setFormatter(logging.Formatter(FORMAT))
        handlers.append(to_file)
        logging.getLogger(TRUST_LOGGER).addHandler(to_file)
    for name in PACKAGES:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if not isinstance(handler, logging.NullHandler):
                logger.removeHandler(handler)
                handler.close()
        for handler in handlers:
            logger.addHandler(handler)
        logger.setLevel(file_level if log_file else console_level)


def _show_trust_notices() -> None:
    notices = logging.getLogger(TRUST_LOGGER)
    if not any(getattr(handler, "trust_notices", False) for handler in notices.handlers):
        console = logging.StreamHandler()
        console.trust_notices = True  # type: ignore[attr-defined]
        console.setLevel(logging.WARNING)
        console.setFormatter(logging.Formatter("grepgraph: %(message)s"))
        notices.addHandler(console)
    notices.propagate = False  # said once on the console, whatever -v adds
