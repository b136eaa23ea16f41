"""Which repositories' ``grepgraph.toml`` may say where data goes.

A repository's own file may tune ranking and indexing, but the settings that decide where queries, code or keys
are sent, or which files are read as an index (:data:`REACHES_OUT`), count only once the user has trusted that
file with ``grepgraph trust`` — as direnv runs nothing before ``direnv allow``. Trust is recorded outside every
repository and tied to the file's content: a changed file needs trust again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path

log = logging.getLogger("grepgraph.trust")  # said at every verbosity (grepgraph/logs.py)

# Where data goes or comes from: servers, keys, providers, index and repository paths.
REACHES_OUT = frozenset({"repo", "index_dir", "chroma_url", "llm_provider", "llm_base_url", "llm_api_key",
                         "embedding_model"})
TRUST_FILE = "trusted-configs.json"
TRUST_COMMAND = "grepgraph trust"

_lock = threading.Lock()
_announced: set[tuple[str, str]] = set()


def _store(config_dir: Path) -> Path:
    return config_dir / "grepgraph" / TRUST_FILE


def content_digest(path: Path) -> str:
    """SHA-256 of the file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _trusted(config_dir: Path) -> dict[str, str]:
    try:
        records = json.loads(_store(config_dir).read_text())
    except (OSError, ValueError):
        return {}
    return records if isinstance(records, dict) else {}


def is_trusted(path: Path, config_dir: Path) -> bool:
    """Whether the user trusted this very content of ``path``."""
    try:
        return _trusted(config_dir).get(str(path.resolve())) == content_digest(path)
    except OSError:
        return False


def trust(path: Path, config_dir: Path, revoke: bool = False) -> str:
    """Record ``path``'s current content as trusted (or forget it, with ``revoke``); returns its digest."""
    digest = content_digest(path)
    store = _store(config_dir)
    with _lock:
        records = _trusted(config_dir)
        if revoke:
            records.pop(str(path.resolve()), None)
        else:
            records[str(path.resolve())] = digest
        store.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = store.with_name(f".{store.name}.{os.getpid()}")
        temporary.write_text(json.dumps(records, indent=1, sort_keys=True))
        os.replace(temporary, store)
    return digest


def without_untrusted(values: dict, path: Path, config_dir: Path) -> dict:
    """``values`` of a repository's file less the :data:`REACHES_OUT` ones, unless the file is trusted.

    What was left out is said once per file and content, in one line with the command that trusts it.
    """
    withheld = sorted(REACHES_OUT.intersection(values))
    if not withheld or is_trusted(path, config_dir):
        return values
    try:
        key = (str(path), content_digest(path))
    except OSError:
        key = (str(path), "")
    with _lock:
        first = key not in _announced
        _announced.add(key)
    if first:
        log.warning("%s: ignoring %s (a repository's file may not say where data goes until you trust it); "
                    "to use them, run: %s %s", path, ", ".join(withheld), TRUST_COMMAND, path.parent)
    return {name: value for name, value in values.items() if name not in REACHES_OUT}
