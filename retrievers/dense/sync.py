"""Keeping the vector store in step with the chunks: embed what is pending, record it, collect orphans.

The ``vectors`` table says which content-addressed vectors the store holds, per view. Vectors are
written batch by batch after the lexical index is committed; a ``vectors_unrecorded`` flag in the
meta table marks a pass in progress, so a killed run's stored-but-unrecorded vectors are swept later.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.model import Chunk, ProgressCallback
from ..parse.cards import code_text

log = logging.getLogger(__name__)

EMBED_BATCH = 256
# Word pieces of the code view that are embedded (cards get the embedder's own limit). A code view's cost
# grows with its length; its opening (path, name, signature, first lines) carries most of what it adds:
# 128 instead of 256 took half the CPU per text and ranked no lower (MRR@10 docstring 0.633 -> 0.636,
# multi-language 0.567 -> 0.575, no package down by more than 0.009).
CODE_VIEW_MAX_TOKENS = 128

# Returns the vector store (opened on first use: opening Chroma costs ~1 s on a large index).
StoreOpener = Callable[[], Any]
# Embeds texts of one view given with their content keys (so a cache can answer some of them).
KeyedEmbed = Callable[[list[str], list[str], str], np.ndarray]


def view_token_limit(view: str, embedder: Any) -> int | None:
    """Word pieces embedded for a view when shorter than the embedder's own limit (``None``: its own)."""
    own = getattr(embedder, "max_tokens", None)  # servers (Ollama) truncate on their side
    return CODE_VIEW_MAX_TOKENS if view == "code" and own and CODE_VIEW_MAX_TOKENS < own else None


def view_model_id(model_id: str, view: str, embedder: Any) -> str:
    """The model id in a view's vector keys: a shorter cut makes other vectors, so it is part of the id."""
    limit = view_token_limit(view, embedder)
    return f"{model_id}/{limit}" if limit else model_id


def bundled_model(setting: str) -> bool:
    """Whether an ``embedding_model`` setting names a MiniLM shipped with grepgraph (not a server's model)."""
    from .embeddings import BUNDLED  # the setting names live with the embedder they pick (loaded to embed anyway)

    return setting in BUNDLED


def vector_model_ids(setting: str, embedder: Any) -> tuple[str, str]:
    """The models named in the card and code views' vector keys for an ``embedding_model`` setting.

    A bundled MiniLM's id depends on which of its model files runs (quantized, code-trained or not), a server
    model's is the setting.
    """
    model_id = embedder.model_id if bundled_model(setting) else setting
    return model_id, view_model_id(model_id, "code", embedder)


def same_vector_models(connection: sqlite3.Connection, model_ids: tuple[str, str]) -> bool:
    """Whether the stored chunks' vector keys were made with these models (else every key must change)."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'versions'").fetchone()
    if row is None:
        return True
    stored = json.loads(row[0])
    card_model = stored.get("embedding")
    return (card_model, stored.get("embedding_code", card_model)) == model_ids


def prepare_model_in_background(setting: str, embedder: Any) -> None:
    """Find (or, once per machine, make) MiniLM's model file in a thread, so the lexical stage needn't wait.

    The vector keys written with the lexical index name the model; making the quantized copy takes ~3 s
    (longer on a busy machine), which scanning and parsing hide.
    """
    find = getattr(embedder, "model_path", None) if bundled_model(setting) else None
    if find is None:
        return

    def prepare() -> None:
        try:
            find()
        except Exception as error:  # noqa: BLE001 - embedding finds the model again and reports the error itself
            log.debug("preparing the embedding model failed: %s", error)

    threading.Thread(target=prepare, name="grepgraph-model", daemon=True).start()


def key_column(view: str) -> str:
    """The chunks column holding a view's vector key."""
    return "card_key" if view == "card" else "code_key"


def _pending_sql(view: str, with_tests: bool, select: str) -> str:
    column = key_column(view)
    tests = "" if with_tests else " AND c.is_test = 0"
    return (f"SELECT {select.format(column=column)} FROM chunks c LEFT JOIN vectors v"
            f" ON v.key = c.{column} AND v.view = ? WHERE v.key IS NULL{tests}")


def pending_vector_keys(connection: sqlite3.Connection, view: str, with_tests: bool = True) -> list[str]:
    """Vector keys referenced by chunks but not yet embedded, implementation code first."""
    sql = _pending_sql(view, with_tests, "c.{column}") + " ORDER BY c.is_test, c.id"
    return list(dict.fromkeys(row[0] for row in connection.execute(sql, (view,))))


def count_pending_vectors(connection: sqlite3.Connection, view: str, with_tests: bool = True) -> int:
    """How many vectors are still to be embedded for a view."""
    sql = _pending_sql(view, with_tests, "COUNT(DISTINCT c.{column})")
    return connection.execute(sql, (view,)).fetchone()[0]


def vectors_version(connection: sqlite3.Connection) -> str:
    """The mark of the last vector change (``""`` before any)."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'vectors_version'").fetchone()
    return row[0] if row else ""


def mark_vectors_changed(connection: sqlite3.Connection, writer: Any = None) -> None:
    """Tell running searchers to reopen Chroma, unless they read through ``writer``, the store that made the change.

    A searcher sharing its index with the writer (the resident service's watcher) then sees the new vectors
    without loading the database again (each reload left native memory behind).
    """
    previous, version = vectors_version(connection), str(time.time_ns())
    if writer is not None:
        writer.note_change(previous, version)
    connection.execute("INSERT OR REPLACE INTO meta VALUES ('vectors_version', ?)", (version,))


def embed_pending(connection: sqlite3.Connection, views: tuple[str, ...], with_tests: dict[str, bool],
                  progress: ProgressCallback, open_store: StoreOpener, embed: KeyedEmbed) -> int:
    """Embed and store every pending vector of ``views`` (test chunks' where ``with_tests[view]``), batch by batch.

    Returns how many were embedded.
    """
    embedded = 0
    for view in views:
        column = key_column(view)
        if not count_pending_vectors(connection, view, with_tests[view]):
            continue
        # Until this pass ends, Chroma may hold vectors the vectors table doesn't list yet.
        connection.execute("INSERT OR REPLACE INTO meta VALUES ('vectors_unrecorded', '1')")
        connection.commit()
        pending = pending_vector_keys(connection, view, with_tests[view])
        # Chroma is opened only when there is work for it (opening costs ~1 s on a large index).
        store = open_store()
        # Vectors an interrupted run already stored are recorded, not recomputed.
        missing = store.missing(view, pending)
        reused = [key for key in pending if key not in missing]
        connection.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", [(k, view) for k in reused])
        connection.commit()
        todo = [key for key in pending if key in missing]
        for start in range(0, len(todo), EMBED_BATCH):
            progress(f"embed {view}", start, len(todo))
            keys = todo[start : start + EMBED_BATCH]
            marks = ",".join("?" * len(keys))
            texts: dict[str, str] = {}
            for row in connection.execute(
                "SELECT path, language, kind, symbol, start_line, end_line, text, signature, docstring,"
                f" parent, is_test, card, {column} FROM chunks WHERE {column} IN ({marks})", keys  # noqa: S608
            ):
                texts.setdefault(row[12], row[11] if view == "card" else code_text(Chunk(*row[:11])))
            keys = [key for key in keys if key in texts]
            vectors = embed(keys, [texts[key] for key in keys], view)
            store.add(view, keys, vectors)
            connection.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", [(k, view) for k in keys])
            mark_vectors_changed(connection, store)
            connection.commit()
            embedded += len(keys)
        progress(f"embed {view}", len(todo), len(todo))
    return embedded


def embed_with_cache(embedder: Any, cache: Any, keys: list[str], texts: list[str],
                     max_tokens: int | None = None) -> np.ndarray:
    """Embed texts (cut at ``max_tokens``), taking what the machine-wide cache (``None``: no cache) already has."""
    cached: dict[str, np.ndarray] = cache.get_many(keys) if cache else {}
    missing = [i for i, key in enumerate(keys) if key not in cached]
    cut = {"max_tokens": max_tokens} if max_tokens else {}
    fresh = embedder.embed([texts[i] for i in missing], **cut) if missing else None
    # The dimension is known only after a first call for servers (Ollama) that pick it.
    dimension = fresh.shape[1] if fresh is not None else next(iter(cached.values())).shape[0]
    vectors = np.zeros((len(keys), dimension), dtype=np.float32)
    if fresh is not None:
        vectors[missing] = fresh
        if cache:
            cache.put_many([keys[i] for i in missing], fresh)
    for i, key in enumerate(keys):
        if key in cached:
            vectors[i] = cached[key]
    return vectors


def collect_garbage(connection: sqlite3.Connection, views: tuple[str, ...], open_store: StoreOpener,
                    sweep: bool = False) -> None:
    """Delete vectors no chunk references any more.

    With ``sweep`` (a previous run was killed between storing vectors and recording them),
    the store itself is listed, so vectors the ``vectors`` table never heard of go too.
    """
    for view in views:
        column = key_column(view)
        orphans = [row[0] for row in connection.execute(
            f"SELECT key FROM vectors WHERE view = ? AND key NOT IN (SELECT {column} FROM chunks)",  # noqa: S608
            (view,))]
        if sweep:
            referenced = {row[0] for row in connection.execute(
                f"SELECT DISTINCT {column} FROM chunks")}  # noqa: S608
            orphans = sorted(set(orphans) | (open_store().all_keys(view) - referenced))
        if orphans:
            store = open_store()
            store.delete(view, orphans)
            connection.executemany("DELETE FROM vectors WHERE key = ? AND view = ?", [(k, view) for k in orphans])
            mark_vectors_changed(connection, store)
            connection.commit()


def record_vector_namespace(connection: sqlite3.Connection, legacy_namespace: Callable[[], str]) -> None:
    """Mint the index's Chroma collection prefix on its first build (older indexes keep ``legacy_namespace()``)."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'vector_namespace'").fetchone()
    if row is None:
        has_vectors = connection.execute("SELECT 1 FROM vectors LIMIT 1").fetchone()
        namespace = legacy_namespace() if has_vectors else f"gg-{uuid.uuid4().hex[:12]}"
        connection.execute("INSERT INTO meta VALUES ('vector_namespace', ?)", (namespace,))
        connection.commit()


def record_vector_backend(connection: sqlite3.Connection, current: str) -> None:
    """Remember the Chroma server (or ``""``: embedded) this run stores vectors in.

    The ``vectors`` table says which vectors exist *in that store*: after a switch to another
    server (or between server and embedded) it is cleared, so the next embedding pass asks the
    new store what it already has and adds the rest. Searchers without an explicit URL use the
    recorded one (see :attr:`retrievers.store.index.CodeIndex.chroma_url`).
    """
    row = connection.execute("SELECT value FROM meta WHERE key = 'chroma_url'").fetchone()
    previous = row[0] if row else ""  # indexes from before this key used the embedded database
    if row is not None and previous == current:
        return
    if previous != current:
        connection.execute("DELETE FROM vectors")
        mark_vectors_changed(connection)
    connection.execute("INSERT OR REPLACE INTO meta VALUES ('chroma_url', ?)", (current,))
    connection.commit()
