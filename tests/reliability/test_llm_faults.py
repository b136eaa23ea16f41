"""More than a thousand searches through the real graph while the LLM misbehaves in every way we know of.

One real index of the sample repository; the real ``ChatOllama`` client against ``OllamaTestServer``, switched
from mode to mode between batches (plus a closed port and two scripted responders: rerank indices out of range
or repeated, and valid JSON of the wrong shape). Every batch mixes forced rewrite, forced rerank, both, and the
heuristic path, and runs on four threads. For every search a user would check that it did not raise, that it
returned results and that the trace says what the LLM did. The per-mode counts and latencies are printed
(``pytest -s``) and, with ``GREPGRAPH_RELIABILITY_REPORT`` set, written there as JSON; the latency targets are
``benchmarks/llm_paths.py``'s.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import threading
import time
import traceback
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from grepgraph.graphs.code_search import graph
from grepgraph.graphs.llm import reset_llm_state
from grepgraph.graphs.resources import forget_searchers
from grepgraph.retrievers.store.index import CodeIndex

from tests.conftest import isolated_settings
from tests.ollama_server import OllamaTestServer, closed_port

pytestmark = pytest.mark.slow

SAMPLE_REPO = Path(__file__).resolve().parents[1] / "fixtures" / "sample_repo"
REPORT_ENV = "GREPGRAPH_RELIABILITY_REPORT"
LLM_TIMEOUT_S = 0.3
# Zero: every call meets the fault itself instead of a "down" mark left by the call before it, so what the
# batch exercises doesn't depend on how the threads interleave. Skipping a server marked down is tested in
# tests/integration/test_graph_llm.py.
RETRY_AFTER_S = 0.0
SEARCHES_PER_MODE = 64
THREADS = 4

REWRITE_TERMS = ["store_parse_result", "insert edges", "executemany"]
QUESTIONS = [
    "how are call edges saved into the database",
    "where are parse results written to storage",
    "how does the symbol search rank its matches",
    "where is the configuration read from a file",
    "how does the web router match a path to a handler",
    "how does the server start and listen for requests",
    "which code turns source text into symbols and edges",
    "how does deleting a file remove what was stored for it",
]
NONSENSE = "qzxwv plorkt mnbvcx"
# (query, kind): what the heuristics decide on their own — code names, graph questions, prose, several parts.
HEURISTIC_QUERIES = [
    ("GraphStore.store_parse_result", "search"),
    ("who calls _insert_edges", "search"),
    ("what does store_parse_result call", "search"),
    ("where is load_config defined", "search"),
    ("how are edges inserted into the graph and how does search rank results", "search"),
    ("I want to understand where in this project the parsed results end up being persisted", "search"),
    ("callers_of", "search"),
    (NONSENSE, "nonsense"),
]
PATHS = ("rewrite", "rerank", "both", "heuristic")

# Valid JSON that is never usable: neither stage may take anything from it.
WRONG_SHAPES = [
    "[1, 2, 3]",
    '"store_parse_result"',
    "null",
    '{"terms": "store_parse_result", "ranking": "1, 2"}',
    '{"terms": {"a": 1}, "ranking": {"1": 2}}',
    '{"terms": [null, 1, {}, [], "", "   "], "ranking": [1.5, null, true, [1], "x", "1e3", "-1"]}',
    '{"terms": ["\\ud800", "\\u0000\\u0007", "' + "x" * 70 + '"], "ranking": ["\\u00b2", "\\u2155", 0, -3]}',
    '{"result": {"terms": ["store_parse_result"], "ranking": [1]}}',
]


def prompt_text(request: dict) -> str:
    return "\n".join(str(message.get("content", "")) for message in request.get("messages") or [])


def case_number(request: dict) -> int:
    """The ``(case N)`` a forced-path query carries; 0 for the heuristic queries."""
    text = prompt_text(request)
    marker = text.rfind("(case ")
    if marker == -1:
        return 0
    digits = text[marker + 6 : text.find(")", marker)]
    return int(digits) if digits.isdecimal() else 0


def is_rerank_request(request: dict) -> bool:
    return "Candidates, numbered" in prompt_text(request)


def good_reply(request: dict) -> str:
    if is_rerank_request(request):
        return json.dumps({"ranking": [3, 1, 2]})
    return json.dumps({"terms": REWRITE_TERMS, "focus": "implementation"})


def bad_indices_reply(request: dict) -> str:
    """Rerank indices out of range and repeated: even cases keep two valid ones, odd cases none."""
    if not is_rerank_request(request):
        return good_reply(request)
    if case_number(request) % 2 == 0:
        return json.dumps({"ranking": [0, 2, 2, 999, -1, 1, 2, 10**30, 1]})
    return json.dumps({"ranking": [0, -1, 999, 10**30, 0]})


def wrong_shape_reply(request: dict) -> str:
    return WRONG_SHAPES[case_number(request) % len(WRONG_SHAPES)]


RESPONDERS = {"good": good_reply, "bad_indices": bad_indices_reply, "wrong_shape_json": wrong_shape_reply}

# What a trace's ``llm`` outcome must start with, per mode, when the call really went to the server
# (rewrite, rerank). A call can also be skipped because an earlier failure marked the server down, or (on a
# loaded machine) time out: both are clean fallbacks, counted separately, and may not be the majority.
OK = ("ok", "cache hit")
PRIMARY = {
    "ok": (OK, ("ok",)),
    "think": (OK, ("ok",)),
    "wrong_model": (OK, ("ok",)),  # used: the server configured is the one that answered, whatever its name
    "slow": (("timeout after",), ("timeout after",)),
    "hang": (("timeout after", "error: ReadTimeout"),) * 2,
    "refuse": (("skipped: unreachable",),) * 2,
    "closed_port": (("skipped: unreachable",),) * 2,
    "http_500": (("error: ResponseError",),) * 2,
    "http_503": (("error: ResponseError",),) * 2,
    "garbage": (("invalid reply: no JSON object",),) * 2,
    "invalid_json_stream": (("error:",),) * 2,
    "wrong_shape": (("invalid reply: no usable terms",), ("invalid reply: no valid indices",)),
    "wrong_shape_stream": (("error:",),) * 2,
    "reset": (("error:",),) * 2,
    "bad_indices": (OK, ("ok", "invalid reply: no valid indices")),
    "wrong_shape_json": (("invalid reply: no usable terms", "invalid reply: no JSON object"),
                         ("invalid reply: no valid indices", "invalid reply: no JSON object")),
    # The same server met through the OpenAI-compatible provider (ChatOpenAI); its errors carry the status.
    "openai:ok": (OK, ("ok",)),
    "openai:hang": (("timeout after", "error: OpenAIAPITimeoutError", "error: APITimeoutError"),) * 2,
    "openai:http_401": (("error: OpenAIAuthenticationError",),) * 2,
    "openai:http_404": (("error: OpenAIModelNotFoundError",),) * 2,
    "openai:http_429": (("error: OpenAIRateLimitError",),) * 2,
    "openai:http_500": (("error: OpenAI",),) * 2,
    "openai:garbage": (("invalid reply: no JSON object",),) * 2,
    "openai:think": (OK, ("ok",)),
    "openai:reset": (("error:",),) * 2,
    "openai:wrong_model": (OK, ("ok",)),
}
FALLBACKS = ("skipped: unreachable", "timeout after", "error: ReadTimeout", "error: OpenAIAPITimeoutError")
# mode -> (server mode, responder); "closed_port" points the graph at a port nothing listens on.
SCENARIOS = {
    **{mode: (mode.removeprefix("openai:"), "good") for mode in PRIMARY
       if mode not in ("closed_port", "bad_indices", "wrong_shape_json")},
    "closed_port": ("ok", "good"),
    "bad_indices": ("ok", "bad_indices"),
    "wrong_shape_json": ("ok", "wrong_shape_json"),
}


@dataclass
class Outcome:
    """One search: how long it took, what the LLM nodes said, and anything a user would call a failure."""

    path: str
    seconds: float
    llm: dict = field(default_factory=dict)  # node -> outcome string
    problems: list = field(default_factory=list)


@dataclass
class Ledger:
    """Per-mode results of the whole module, reported at the end."""

    rows: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, mode: str, outcomes: list[Outcome]) -> dict:
        seconds = sorted(outcome.seconds for outcome in outcomes)
        calls = Counter()
        for outcome in outcomes:
            for node, text in outcome.llm.items():
                calls[f"{node}: {classify(text)}"] += 1
        row = {
            "searches": len(outcomes),
            "paths": dict(Counter(outcome.path for outcome in outcomes)),
            "llm_calls": sum(len(outcome.llm) for outcome in outcomes),
            "outcomes": dict(sorted(calls.items())),
            "p50_ms": round(1000 * statistics.median(seconds), 1),
            "p95_ms": round(1000 * seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))], 1),
            "max_ms": round(1000 * seconds[-1], 1),
            "failures": sum(bool(outcome.problems) for outcome in outcomes),
        }
        with self.lock:
            self.rows[mode] = row
        return row

    def table(self) -> str:
        lines = [f"{'mode':<20}{'searches':>9}{'llm calls':>10}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}"
                 f"{'failed':>8}  outcomes (node: outcome x count)"]
        for mode, row in self.rows.items():
            outcomes = ", ".join(f"{name} x{count}" for name, count in row["outcomes"].items())
            lines.append(f"{mode:<20}{row['searches']:>9}{row['llm_calls']:>10}{row['p50_ms']:>9.0f}"
                         f"{row['p95_ms']:>9.0f}{row['max_ms']:>9.0f}{row['failures']:>8}  {outcomes}")
        total = sum(row["searches"] for row in self.rows.values())
        lines.append(f"{'total':<20}{total:>9}{sum(row['llm_calls'] for row in self.rows.values()):>10}")
        return "\n".join(lines)


def classify(outcome: str) -> str:
    """A short, countable name for an ``llm`` outcome (the details after the first colon-part dropped)."""
    for prefix in ("timeout after", "skipped: unreachable (cached)", "skipped: unreachable",
                   "invalid reply: no JSON object", "invalid reply: no usable terms",
                   "invalid reply: no valid indices"):
        if outcome.startswith(prefix):
            return prefix
    if outcome.startswith("error:"):
        return outcome.split(":")[0] + ": " + outcome.split(":")[1].strip()
    return outcome


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def ledger():
    report_path = os.environ.get(REPORT_ENV)  # read before the isolation fixture clears GREPGRAPH_*
    book = Ledger()
    yield book
    table = book.table()
    title = f"LLM fault injection: {len(book.rows)} modes, llm_timeout_s={LLM_TIMEOUT_S}, {THREADS} threads"
    print(f"\n\n{title}\n{table}\n")  # noqa: T201 - the summary is the point of `pytest -s`
    if report_path:
        Path(report_path).write_text(json.dumps(
            {"llm_timeout_s": LLM_TIMEOUT_S, "threads": THREADS, "modes": book.rows},
            indent=2))


@pytest.fixture(scope="module")
def isolated_module(ledger, tmp_path_factory):
    """No outside settings or config file for the whole module; LLM state reset before and after."""
    with isolated_settings(tmp_path_factory):
        reset_llm_state()
        yield
        reset_llm_state()


@pytest.fixture(scope="module")
def sample_index(isolated_module, tmp_path_factory) -> dict:
    """The fixture repository copied and indexed for real (MiniLM vectors, embedded Chroma)."""
    root = tmp_path_factory.mktemp("faults")
    repo, index_dir = root / "repo", root / "index"
    shutil.copytree(SAMPLE_REPO, repo)
    CodeIndex(repo, index_dir).update()
    context = {"repo": str(repo), "index_dir": str(index_dir)}
    forget_searchers()
    # Open the searcher, load the query embedder and import the Ollama client before anything is timed.
    graph.invoke({"query": "warm up", "rewrite": False, "rerank": False}, context=context)
    import langchain_ollama  # noqa: F401
    import langchain_openai  # noqa: F401

    yield context
    forget_searchers()


class Switchboard:
    """The responder the module's server calls; each batch picks one."""

    def __init__(self) -> None:
        self.name = "good"

    def __call__(self, request: dict) -> str:
        return RESPONDERS[self.name](request)


@pytest.fixture(scope="module")
def server(sample_index):
    switchboard = Switchboard()
    with OllamaTestServer(responder=switchboard, delay_s=0.2, hang_s=LLM_TIMEOUT_S + 2.0) as running:
        running.switchboard = switchboard
        yield running


# --------------------------------------------------------------------------- one search
def request_for(number: int) -> tuple[str, dict, str]:
    """(path, graph input, kind) for the ``number``-th search of a batch: the four paths in turn."""
    path = PATHS[number % len(PATHS)]
    if path == "heuristic":
        query, kind = HEURISTIC_QUERIES[(number // len(PATHS)) % len(HEURISTIC_QUERIES)]
        return path, {"query": query}, kind
    # A different question each time, so the rewrite cache doesn't answer in the LLM's place.
    question = f"{QUESTIONS[number % len(QUESTIONS)]} (case {number})"
    if number % 17 == 5:
        question, kind = f"{NONSENSE} (case {number})", "nonsense"
    else:
        kind = "search"
    forced = {"rewrite": {"rewrite": True, "rerank": False}, "rerank": {"rewrite": False, "rerank": True},
              "both": {"rewrite": True, "rerank": True}}[path]
    return path, {"query": question, **forced}, kind


def check_llm_entry(mode: str, node: str, entry: dict) -> list[str]:
    """What is wrong with one rewrite / rerank trace entry (nothing, normally)."""
    outcome = entry.get("llm")
    if not isinstance(outcome, str) or not outcome:
        return [f"{node}: no llm outcome in {entry}"]
    problems = []
    primary = PRIMARY[mode][0 if node == "rewrite" else 1]
    if not outcome.startswith(primary + FALLBACKS):
        problems.append(f"{node}: unexpected llm outcome {outcome!r} in mode {mode}")
    succeeded = outcome in ("ok", "cache hit")
    expected_decisions = {
        "rewrite": ("rewritten", "cached") if succeeded else ("fallback: original query only",),
        "rerank": ("reranked",) if succeeded else ("fallback: fused order kept",),
    }[node]
    if entry.get("decision") not in expected_decisions:
        problems.append(f"{node}: decision {entry.get('decision')!r} does not match llm outcome {outcome!r}")
    if node == "rewrite" and succeeded and entry.get("terms") != REWRITE_TERMS:
        problems.append(f"rewrite: terms {entry.get('terms')!r}")
    if mode == "bad_indices" and node == "rerank" and succeeded and entry.get("invalid_indices_dropped", 0) < 1:
        problems.append(f"rerank: out-of-range / repeated indices were not reported dropped: {entry}")
    status = mode.removeprefix("openai:")
    if status.startswith("http_") and outcome.startswith("error:") and status.removeprefix("http_") not in outcome:
        problems.append(f"{node}: the HTTP status is missing from {outcome!r}")
    return problems


def one_search(mode: str, context: dict, number: int) -> Outcome:
    path, request, kind = request_for(number)
    started = time.perf_counter()
    try:
        output = graph.invoke(request, context=context)
    except Exception:  # noqa: BLE001 - the failure is what we report
        return Outcome(path, time.perf_counter() - started, problems=[f"raised:\n{traceback.format_exc()}"])
    outcome = Outcome(path, time.perf_counter() - started)
    label = f"#{number} {path} {request['query'][:60]!r}"
    results = output.get("results")
    if not isinstance(results, list) or (kind != "nonsense" and not results):
        outcome.problems.append(f"{label}: no results ({results!r})")
    trace = output.get("trace") or []
    ran = {entry["node"]: entry for entry in trace if entry["node"] in ("rewrite", "rerank")}
    if request.get("rewrite") and "rewrite" not in ran:
        outcome.problems.append(f"{label}: forced rewrite did not run")
    if request.get("rerank") and "rerank" not in ran and len(results or []) > 1:
        outcome.problems.append(f"{label}: forced rerank did not run")
    for node, entry in ran.items():
        outcome.llm[node] = entry.get("llm", "")
        outcome.problems += [f"{label}: {problem}" for problem in check_llm_entry(mode, node, entry)]
    return outcome


# --------------------------------------------------------------------------- the batches
@pytest.mark.parametrize("mode", list(SCENARIOS))
def test_search_survives_llm_fault(mode, sample_index, server, ledger):
    server_mode, responder = SCENARIOS[mode]
    server.mode = server_mode
    server.switchboard.name = responder
    reset_llm_state()  # each mode starts from "reachable, nothing cached"
    base_url = f"http://127.0.0.1:{closed_port()}" if mode == "closed_port" else server.base_url
    provider = "openai" if mode.startswith("openai:") else "ollama"
    context = {**sample_index, "llm_base_url": base_url + ("/v1" if provider == "openai" else ""),
               "llm_provider": provider, "llm_timeout_s": LLM_TIMEOUT_S, "llm_retry_after_s": RETRY_AFTER_S}
    try:
        with ThreadPoolExecutor(THREADS, thread_name_prefix=f"search-{mode}") as pool:
            outcomes = list(pool.map(lambda number: one_search(mode, context, number), range(SEARCHES_PER_MODE)))
    finally:
        # No drain after "hang" or "slow": a call the gateway gave up on was cancelled with its HTTP request.
        reset_llm_state()
    row = ledger.add(mode, outcomes)

    problems = [problem for outcome in outcomes for problem in outcome.problems]
    assert not problems, f"{len(problems)} problem(s) in mode {mode}:\n" + "\n".join(problems[:15])
    assert set(row["paths"]) == set(PATHS)
    # The mode was really exercised: the LLM calls met the server's fault (or its success), not only fallbacks.
    for index, node in enumerate(("rewrite", "rerank")):
        texts = [outcome.llm[node] for outcome in outcomes if node in outcome.llm]
        primary = [text for text in texts if text.startswith(PRIMARY[mode][index])]
        assert len(texts) >= SEARCHES_PER_MODE // 4, (node, row)
        assert len(primary) >= max(4, 0.5 * len(texts)), (mode, node, row["outcomes"])
    if mode == "bad_indices":
        assert {"rerank: ok", "rerank: invalid reply: no valid indices"} <= set(row["outcomes"]), row


def test_at_least_a_thousand_fault_injected_searches(ledger):
    assert set(ledger.rows) == set(SCENARIOS), "run the whole module to count every mode"
    assert sum(row["searches"] for row in ledger.rows.values()) >= 1000
