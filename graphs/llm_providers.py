"""The chat clients of the two protocols grepgraph speaks: Ollama's and OpenAI-compatible servers'.

``ollama`` builds ``langchain_ollama.ChatOllama`` (``POST /api/chat``); ``openai`` builds
``langchain_openai.ChatOpenAI`` (``POST <base_url>/chat/completions``), which serves llama.cpp's server, LM
Studio, vLLM and hosted endpoints alike. Both are asked for JSON constrained by a schema: Ollama's ``format``,
OpenAI's ``response_format`` of type ``json_schema`` (small local models wrap JSON in code fences or prose
without one). The gateway (:mod:`graphs.llm`) owns timeouts, fallbacks and the trace; this module only knows
how each protocol is spoken and how its replies name their model and token counts.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

PROVIDERS = ("ollama", "openai")
# A reply is a short JSON object; a model that rambles is cut here rather than by the timeout.
MAX_OUTPUT_TOKENS = 80
OPENAI_EXTRA = "pip install 'grepgraph[openai]'"
# Sent to OpenAI-compatible servers when no key is configured: local servers ignore it, and the client
# library would otherwise fall back to $OPENAI_API_KEY and hand a hosted key to whatever URL is configured.
NO_KEY = "not-needed"


@dataclass(frozen=True)
class JsonSchema:
    """The JSON object a stage asks for: a name (OpenAI wants one) and its JSON schema."""

    name: str
    schema: dict


@cache
def client_missing(provider: str) -> str | None:
    """Why ``provider``'s client library can't be used here (``None`` when it can)."""
    if provider == "openai" and importlib.util.find_spec("langchain_openai") is None:
        return f"langchain-openai is not installed ({OPENAI_EXTRA})"
    return None


def build_chat_model(provider: str, base_url: str, model: str, timeout_s: float, api_key: str = "") -> Any:
    """A chat client for ``provider`` at ``base_url``; ``timeout_s`` is the HTTP client's own backstop."""
    # The gateway's wall-clock bound cancels the request first; the client's timeout sits just above it.
    http_timeout = timeout_s + 1.0
    if provider == "openai":
        from langchain_openai import ChatOpenAI

        # max_retries=0: the client's own retries would multiply a timeout or a 429 behind the gateway's back.
        return ChatOpenAI(model=model, base_url=base_url, api_key=api_key or NO_KEY, temperature=0,  # type: ignore[arg-type]
                          max_tokens=MAX_OUTPUT_TOKENS, max_retries=0, timeout=http_timeout)  # type: ignore[call-arg]
    if provider != "ollama":
        raise ValueError(f"llm_provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")
    from langchain_ollama import ChatOllama

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else None  # an Ollama behind a proxy
    return ChatOllama(model=model, base_url=base_url, temperature=0, format="json", num_predict=MAX_OUTPUT_TOKENS,
                      client_kwargs={"timeout": http_timeout, **({"headers": headers} if headers else {})})


def constrained(client: Any, provider: str, schema: JsonSchema | None) -> Any:
    """``client`` bound to answer with an object of ``schema`` (JSON mode without one)."""
    if schema is None:
        return client
    if provider == "openai":
        return client.bind(response_format={"type": "json_schema", "json_schema": {
            "name": schema.name, "schema": schema.schema, "strict": True}})
    return client.bind(format=schema.schema)


def reply_model(message: Any) -> str:
    """The model a reply says answered it (empty when the server does not say)."""
    metadata = getattr(message, "response_metadata", None) or {}
    return str(metadata.get("model_name") or metadata.get("model") or "")


def _normalised(name: str) -> str:
    name = name.strip().lower().rsplit("/", 1)[-1].removesuffix(".gguf").removesuffix(":latest")
    return re.sub(r"[:_\s]+", "-", name)


def same_model(asked: str, answered: str) -> bool:
    """Whether ``answered`` is the model asked for, as servers spell it.

    Servers add to a name rather than change it: a dated version (``gpt-4o-mini`` answers
    ``gpt-4o-mini-2024-07-18``), an ``-instruct`` suffix, a file path or a ``:latest`` tag. A reply that names
    no model is taken as the one asked for.
    """
    if not asked or not answered:
        return True
    want, got = _normalised(asked), _normalised(answered)
    return got == want or got.startswith(want)


def token_counts(message: Any) -> dict[str, int]:
    """``{"prompt", "output", "cached"}`` tokens from a reply's usage metadata (what the server reported)."""
    usage = getattr(message, "usage_metadata", None) or {}
    counts = {"prompt": int(usage.get("input_tokens") or 0), "output": int(usage.get("output_tokens") or 0)}
    cached = (usage.get("input_token_details") or {}).get("cache_read")
    if cached:
        counts["cached"] = int(cached)
    return counts
