"""The local LLM, used selectively and never allowed to break or stall search.

Every call goes through :class:`LLMGateway`, which

- speaks Ollama's protocol or an OpenAI-compatible server's (``llm_provider``; the clients are built in
  :mod:`graphs.llm_providers`) and asks for JSON constrained by each stage's schema;
- checks the server's reachability once (a TCP connect) and remembers the answer for
  ``llm_retry_after_s``, so a machine without an LLM server pays no per-query timeout;
- bounds each call by ``llm_timeout_s`` of wall time (streamed replies included), or by less when
  the run's deadline comes sooner, and then cancels the call: the request runs as a task on one
  event-loop thread, so cancelling it closes its HTTP connection and no thread stays behind;
- turns every failure — refused, timed out, HTTP error (401/404/429/5xx), reset, garbage, wrong shape —
  into ``None`` plus an outcome string for the trace (an API key never appears in it, nor in the log);
- uses a reply whose server names another model than ``llm_model`` (llama.cpp's server names it after the
  model file): the trace records the name given, and the log says so once, as a warning;
- caches rewrites by (query, intent, model).

Tests inject any LangChain chat model (``chat_model=``); production builds ``ChatOllama`` or ``ChatOpenAI``
pointed at ``llm_base_url``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from .deadline import time_left
from .heuristics import parse_json_object
from .llm_providers import (
    JsonSchema,
    build_chat_model,
    client_missing,
    constrained,
    reply_model,
    same_model,
    token_counts,
)

log = logging.getLogger(__name__)

CONNECT_PROBE_TIMEOUT_S = 0.25
REWRITE_CACHE_SIZE = 512
MODEL_NAME_CHARS = 120  # of a model name a server sent, kept in the trace and the log

_health: dict[tuple[str, str], tuple[bool, float]] = {}
_health_lock = threading.Lock()
_rewrite_cache: OrderedDict[tuple, dict] = OrderedDict()
_rewrite_lock = threading.Lock()  # graph runs in parallel threads read and write it
_other_names_noted: set[tuple[str, str, str, str]] = set()  # (provider, url, llm_model, name the server gave)
# One client per (provider, base_url, model, timeout, key): building one loads the CA bundle twice (~80 ms of CPU),
# which every call paid while the gateway was rebuilt per node run. The client is thread-safe.
_chat_models: dict[tuple, Any] = {}
_chat_models_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


@dataclass
class LLMReply:
    """A parsed JSON reply, or ``None`` with the reason in ``outcome``."""

    value: dict | None
    outcome: str
    milliseconds: float
    tokens: dict[str, int] | None = None  # prompt / output (/ cached) tokens, as the server reported them
    answered_by: str = ""  # the model the server named, when it is not the llm_model setting

    def trace_fields(self) -> dict:
        """What a node's trace records of the call besides its outcome: time, tokens, another model's name."""
        fields: dict = {"llm_ms": self.milliseconds}
        if self.tokens:
            fields["llm_tokens"] = self.tokens
        if self.answered_by:
            fields["llm_answered_by"] = self.answered_by
        return fields


def reset_llm_state() -> None:
    """Forget reachability, cached rewrites and clients (tests, or after starting an LLM server)."""
    with _health_lock:
        _health.clear()
        _other_names_noted.clear()
    with _rewrite_lock:
        _rewrite_cache.clear()
    with _chat_models_lock:
        _chat_models.clear()


def _call_loop() -> asyncio.AbstractEventLoop:
    """The event loop every LLM call runs on, in one daemon thread started on first use.

    A call is a task there rather than a blocking call in a worker thread, so giving up on it
    cancels the task, which closes its HTTP connection at once.
    """
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="grepgraph-llm-calls", daemon=True).start()
            _loop = loop
        return _loop


def start_call(model: Any, messages: list[tuple[str, str]]) -> Future:
    """Send ``messages`` to ``model`` on the call loop; cancelling the future cancels the HTTP request."""
    return asyncio.run_coroutine_threadsafe(model.ainvoke(messages), _call_loop())


def _probe(base_url: str) -> bool:
    parsed = urlparse(base_url)
    host = parsed.hostname or "localhost"
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=CONNECT_PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


def _is_connection_failure(error: BaseException) -> bool:
    name = type(error).__name__
    # httpx's names (Ollama's client) and the openai library's, which wraps them.
    return isinstance(error, (ConnectionError, OSError)) or name in (
        "ConnectError", "ConnectTimeout", "APIConnectionError", "APITimeoutError") or name.endswith("Timeout")


class LLMGateway:
    """Guarded JSON calls to a chat model."""

    def __init__(self, base_url: str, model: str, timeout_s: float, retry_after_s: float,
                 chat_model: Any | None = None, provider: str = "ollama", api_key: str = "") -> None:
        """Configure the gateway; with ``chat_model`` given, reachability checks are skipped."""
        self.provider = provider
        self.base_url = base_url
        self.model = model
        self.timeout_s = timeout_s
        self.retry_after_s = retry_after_s
        self._api_key = api_key  # never logged, traced or shown: see _redacted
        self._chat_model = chat_model
        self._injected = chat_model is not None

    def __repr__(self) -> str:
        return f"LLMGateway({self.provider}, {self.base_url!r}, {self.model!r})"

    def _model(self) -> Any:
        if self._chat_model is None:
            key = (self.provider, self.base_url, self.model, self.timeout_s, hash(self._api_key))
            with _chat_models_lock:
                if key not in _chat_models:
                    _chat_models[key] = build_chat_model(self.provider, self.base_url, self.model, self.timeout_s,
                                                         self._api_key)
                self._chat_model = _chat_models[key]
        return self._chat_model

    def _redacted(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def available(self) -> tuple[bool, str]:
        """Whether to try the LLM now; cached for ``retry_after_s``."""
        if self._injected:
            return True, "injected model"
        missing = client_missing(self.provider)
        if missing:
            return False, missing
        where = (self.provider, self.base_url)
        with _health_lock:
            now = time.monotonic()  # read under the lock, so never before a mark another thread just made
            cached = _health.get(where)
            if cached and now - cached[1] < self.retry_after_s:
                return cached[0], "reachable (cached)" if cached[0] else "unreachable (cached)"
        reachable = _probe(self.base_url)
        with _health_lock:
            _health[where] = (reachable, now)
        if not reachable:
            log.info("no LLM server answers at %s: searching without it for %gs", self.base_url, self.retry_after_s)
        return reachable, "reachable" if reachable else f"unreachable ({self.base_url})"

    def _mark_down(self) -> None:
        if not self._injected:
            with _health_lock:
                _health[(self.provider, self.base_url)] = (False, time.monotonic())

    def _failed(self, outcome: str, milliseconds: float, level: int = logging.WARNING) -> LLMReply:
        """The reply of a call that gave nothing usable, logged (the node's trace names it too)."""
        log.log(level, "LLM %s at %s: %s after %.0f ms; going on without it", self.model, self.base_url, outcome,
                milliseconds)
        return LLMReply(None, outcome, milliseconds)

    def call_json(self, messages: list[tuple[str, str]], deadline: float | None = None,
                  schema: JsonSchema | None = None) -> LLMReply:
        """Send messages, expect one JSON object back; never raises.

        Args:
            messages: ``(role, text)`` pairs.
            deadline: The run's deadline (``time.time()`` seconds); the call is cut short to end by then.
            schema: The object asked for; the server constrains its output to it (JSON mode without one).
        """
        started = time.perf_counter()
        def elapsed() -> float:
            return round((time.perf_counter() - started) * 1000, 1)
        left = time_left(deadline)
        if left is not None and left <= 0:
            return LLMReply(None, "skipped: the run's deadline has passed", elapsed())
        ok, why = self.available()
        if not ok:
            return LLMReply(None, f"skipped: {why}", elapsed())
        model = self._model()
        if not self._injected:
            model = constrained(model, self.provider, schema)
        # One wall-clock budget for the whole call: building the client (first use imports it) counts too.
        remaining = self.timeout_s - (time.perf_counter() - started)
        left = time_left(deadline)
        cut_by_deadline = left is not None and left < remaining
        budget = left if cut_by_deadline and left is not None else remaining
        future = start_call(model, messages)
        try:
            message = future.result(timeout=max(budget, 0.0))
        except FutureTimeout:
            future.cancel()  # closes the HTTP connection: no thread or request outlives the call
            if cut_by_deadline:  # the run ran out of time, not the model: it is not marked down
                return self._failed("timeout: the run's deadline came first", elapsed(), logging.INFO)
            self._mark_down()
            return self._failed(f"timeout after {self.timeout_s:g}s", elapsed())
        except Exception as error:  # noqa: BLE001 - any client failure means "search without the LLM"
            if _is_connection_failure(error) or "status" in str(error).lower() or hasattr(error, "status_code"):
                self._mark_down()
            return self._failed(f"error: {type(error).__name__}: {self._redacted(str(error))[:120]}", elapsed())
        answered = reply_model(message)
        other_name = "" if self._injected or same_model(self.model, answered) else answered[:MODEL_NAME_CHARS]
        if other_name:
            self._note_other_name(other_name)
        content = getattr(message, "content", message)
        if not isinstance(content, str):
            return self._failed("error: non-text reply", elapsed())
        value = parse_json_object(content)
        if value is None:
            return self._failed("invalid reply: no JSON object", elapsed())
        return LLMReply(value, "ok", elapsed(), token_counts(message), other_name)

    def _note_other_name(self, answered: str) -> None:
        """Say once per server and names that the server calls its model otherwise than ``llm_model``.

        llama.cpp's server names its replies after the model file unless started with an alias, LM Studio
        and proxies after their own catalogue: the reply is still the configured server's, so it is used.
        """
        key = (self.provider, self.base_url, self.model, answered)
        with _health_lock:
            if key in _other_names_noted:
                return
            _other_names_noted.add(key)
        log.warning("the LLM server at %s names its model %r, not %r as the llm_model setting says; its replies are"
                    " used (set llm_model = %r, or give the server that alias, to silence this)",
                    self.base_url, answered, self.model, answered)

    # ------------------------------------------------------------------ cache
    def cached_rewrite(self, key: tuple) -> dict | None:
        """A previous rewrite for (query, intent, model)."""
        with _rewrite_lock:
            value = _rewrite_cache.get(key)
            if value is not None:
                _rewrite_cache.move_to_end(key)
            return value

    def remember_rewrite(self, key: tuple, value: dict) -> None:
        """Keep a rewrite for reuse (bounded LRU)."""
        with _rewrite_lock:
            _rewrite_cache[key] = value
            while len(_rewrite_cache) > REWRITE_CACHE_SIZE:
                _rewrite_cache.popitem(last=False)
