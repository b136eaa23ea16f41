"""What the LLM is shown (prompt inputs) and how replies are judged (provider helpers): pure functions."""

from __future__ import annotations

from grepgraph.graphs.llm_providers import same_model
from grepgraph.graphs.prompt_inputs import candidate_card, query_digest, rerank_messages, rewrite_messages

REPORT = "\n".join([
    "Widget cache returns stale entries after reload",
    "When the registry reloads, WidgetCache.lookup keeps answering with the old entry.",
    *["Some long explanation of what the user was doing at the time, with many words." for _ in range(40)],
    'File "app/cache.py", line 88, in lookup',
    "KeyError: 'widget-7' while calling refresh_registry()",
])


def test_a_short_query_is_shown_whole():
    assert query_digest("how is the cache invalidated?", 600) == "how is the cache invalidated?"


def test_a_long_report_keeps_its_opening_error_lines_and_code_names():
    digest = query_digest(REPORT, 600)
    assert len(digest) <= 600 < len(REPORT)
    assert digest.startswith("Widget cache returns stale entries after reload")
    assert "KeyError: 'widget-7'" in digest
    assert "WidgetCache.lookup" in digest and "refresh_registry" in digest
    assert "Some long explanation" not in digest


def test_the_instructions_come_first_and_never_change():
    first = rewrite_messages("how is the cache invalidated?", "", [("WidgetCache", "app/cache.py")], 600)
    second = rewrite_messages(REPORT, "debugging", [], 600)
    assert first[0] == second[0] and first[0][0] == "system"
    assert "WidgetCache" in first[1][1] and "debugging" in second[1][1]


def test_the_variable_part_holds_only_what_the_model_uses():
    symbols = [("WidgetCache", "app/cache.py"), ("WidgetCache", "app/other.py"),
               *[(f"name_{n}", "app/x.py") for n in range(10)]]
    human = rewrite_messages("how is the cache invalidated?", "", symbols, 600)[1][1]
    assert human == ("how is the cache invalidated?\n"
                     "Symbols: WidgetCache, name_0, name_1, name_2, name_3, name_4\n")
    assert "Background" not in rerank_messages("q", "", [], 160, 600)[1][1]
    assert "Background: debugging" in rerank_messages("q", "debugging", [], 160, 600)[1][1]


def test_a_candidate_card_has_signature_and_summary_not_the_body():
    hit = {"symbol": "WidgetCache.lookup", "path": "app/cache.py", "kind": "method",
           "text": '@cached\ndef lookup(self, key: str) -> Widget:\n    """Return the widget stored under key."""\n'
                   "    secret_body_line = 1\n"}
    card = candidate_card(2, hit, 160)
    assert card.startswith("[2] method WidgetCache.lookup (app/cache.py)")
    assert "def lookup(self, key: str) -> Widget: — Return the widget stored under key." in card
    assert "secret_body_line" not in card and "@cached" not in card
    assert "Candidates, numbered" in rerank_messages("q", "", [hit], 160, 600)[1][1]


def test_servers_may_add_to_a_model_name_but_not_change_it():
    assert same_model("qwen2.5-coder:1.5b", "qwen2.5-coder-1.5b-instruct")
    assert same_model("gpt-4o-mini", "gpt-4o-mini-2024-07-18")
    assert same_model("qwen2.5:3b", "qwen2.5:3b") and same_model("m", "")
    assert same_model("qwen2.5-coder-1.5b", "/models/Qwen2.5-Coder-1.5B-Instruct.gguf")
    assert not same_model("qwen2.5:3b", "llama3.2:1b")
