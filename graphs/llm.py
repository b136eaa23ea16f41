"""The local LLM, used selectively and never allowed to break or stall search.

Every call goes through :class:`LLMGateway`, which

- checks the Ollama server's reachability once (a TCP connect) and remembers the
  answer for ``llm_retry_after_s``, so a machine without Ollama pays no per-query timeout;
- bounds each call by ``llm_timeout_s`` of wall time (streamed replies included), or by less when
  the run's deadline comes sooner, and then cancels the call: the request runs as a task on one
  event-loop thread, so cancelling it closes its HTTP connection and no thread stays behind;
- turns every failure — refused, timed out, HTTP error, reset, garbage, wrong shape —
  into ``None`` plus an outcome string for the trace;
- caches rewrites by (query, intent, model).

Tests inject any LangChain chat model (``chat_model=``); production builds a
``langchain_ollama.ChatOllama`` pointed at ``llm_base_url``.
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

log = logging.getLogger(__name__)

CONNECT_PROBE_TIMEOUT_S = 0.25
REWRITE_CACHE_SIZE = 512

_health: dict[str, tuple[bool, float]] = {}
_health_lock = threading.Lock()
_rewrite_cache: OrderedDict[tuple, dict] = OrderedDict()
_rewrite_lock = threading.Lock()  # graph runs in parallel threads read and write it
# One ChatOllama per (base_url, model, timeout): building one loads the CA bundle twice (~80 ms of CPU),
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


def reset_llm_state() -> None:
    """Forget reachability, cached rewrites and clients (tests, or after starting Ollama)."""
    with _health_lock:
        _health.clear()
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
    return isinstance(error, (ConnectionError, OSError)) or name in ("ConnectError", "ConnectTimeout") or (
        name.endswith("Timeout"))


class LLMGateway:
    """Guarded JSON calls to a chat model."""

    def __init__(self, base_url: str, model: str, timeout_s: float, retry_after_s: float,
                 chat_model: Any | None = None) -> None:
        """Configure the gateway; with ``chat_model`` given, reachability checks are skipped."""
        self.base_url = base_url
        self.model = model
        self.timeout_s = timeout_s
        self.retry_after_s = retry_after_s
        self._chat_model = chat_model
        self._injected = chat_model is not None

    def _model(self) -> Any:
        if self._chat_model is None:
            key = (self.base_url, self.model, self.timeout_s)
            with _chat_models_lock:
                if key not in _chat_models:
                    from langchain_ollama import ChatOllama

                    _chat_models[key] = ChatOllama(
                        model=self.model, base_url=self.base_url, temperature=0, format="json",
                        # The wall-clock bound in call_json is the real limit (it cancels the request); the HTTP
                        # client's own timeout sits just above it, a backstop that is always reported as a timeout.
                        client_kwargs={"timeout": self.timeout_s + 1.0}, num_predict=400,
                    )
                self._chat_model = _chat_models[key]
        return self._chat_model

    def available(self) -> tuple[bool, str]:
        """Whether to try the LLM now; cached for ``retry_after_s``."""
        if self._injected:
            return True, "injected model"
        with _health_lock:
            now = time.monotonic()  # read under the lock, so never before a mark another thread just made
            cached = _health.get(self.base_url)
            if cached and now - cached[1] < self.retry_after_s:
                return cached[0], "reachable (cached)" if cached[0] else "unreachable (cached)"
        reachable = _probe(self.base_url)
        with _health_lock:
            _health[self.base_url] = (reachable, now)
        if not reachable:
            log.info("no LLM server answers at %s: searching without it for %gs", self.base_url, self.retry_after_s)
        return reachable, "reachable" if reachable else f"unreachable ({self.base_url})"

    def _mark_down(self) -> None:
        if not self._injected:
            with _health_lock:
                _health[self.base_url] = (False, time.monotonic())

    def _failed(self, outcome: str, milliseconds: float, level: int = logging.WARNING) -> LLMReply:
        """The reply of a call that gave nothing usable, logged (the node's trace names it too)."""
        log.log(level, "LLM %s at %s: %s after %.0f ms; going on without it", self.model, self.base_url, outcome,
                milliseconds)
        return LLMReply(None, outcome, milliseconds)

    def call_json(self, messages: list[tuple[str, str]], deadline: float | None = None) -> LLMReply:
        """Send messages, expect one JSON object back; never raises.

        Args:
            messages: ``(role, text)`` pairs.
            deadline: The run's deadline (``time.time()`` seconds); the call is cut short to end by then.
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
            return self._failed(f"error: {type(error).__name__}: {str(error)[:120]}", elapsed())
        content = getattr(message, "content", message)
        if not isinstance(content, str):
            return self._failed("error: non-text reply", elapsed())
        value = parse_json_object(content)
        if value is None:
            return self._failed("invalid reply: no JSON object", elapsed())
        return LLMReply(value, "ok", elapsed())

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
