"""Call-graph evidence for issue reports: the resolved callers of what a report names rank with it."""

from pathlib import Path

import pytest
from grepgraph.retrievers.rank.evidence import call_anchors, symbol_matches

from tests.conftest import lexical_searcher

PARSER = '''
def split_fields(line):
    return line.split(":", 1)


def read_block(stream):
    fields = {}
    for line in stream:
        key, value = split_fields(line)
        fields[key] = value
    return fields


def describe_fields(spec):
    """Document each of the fields that a header line may hold."""
    return [item.strip() for item in spec]


def unrelated(courier):
    return courier.split_fields("x")
'''

# Longer than a question: the searcher reads it as an issue report.
REPORT = (
    "Crash on a line without a colon. When a block holds a line that has no colon at all, reading stops with "
    "an exception instead of skipping that line or reporting which line was wrong. I expected the parser to "
    "keep the other fields, or at least to say which line of the block could not be read, because a single "
    "bad line in a long block makes the whole block unreadable today and the message gives no hint.\n"
    "Traceback (most recent call last):\n"
    '  File "parser.py", line 3, in split_fields\n'
    "    return line.split(':', 1)\n"
    "ValueError: not enough values to unpack (expected 2, got 1)\n"
)


def test_a_resolved_caller_of_a_traceback_frame_gets_caller_evidence(tmp_path: Path):
    with lexical_searcher(tmp_path, {"parser.py": PARSER}) as searcher:
        hits, _ = searcher.search(REPORT, limit=10)
    calls = {hit.symbol: hit.components.get("calls", 0.0) for hit in hits}
    assert calls["read_block"] == 1.0  # calls split_fields, resolved in its own module
    assert calls.get("unrelated", 0.0) == 0.0  # a method of an unknown object of the same name: by name only
    assert calls.get("describe_fields", 0.0) == 0.0  # shares words, calls nothing named
    assert calls.get("split_fields", 0.0) == 0.0  # the anchor itself is no caller of itself


def test_anchors_are_frames_and_exact_names_only_while_few():
    frames = {1: 1.0}
    exact = {3: 1.0}
    assert call_anchors(exact, frames) == [1, 3]
    many = {chunk_id: 1.0 for chunk_id in range(10, 30)}
    assert call_anchors(many, frames) == [1]  # a name defined everywhere anchors nothing; the frame still does
    assert call_anchors(many, {}) == []


STORES = '''
class Store:
    def persist(self, item):
        return item


class Archive:
    def persist(self, item):
        return item

    def persist_all(self, items):
        return [self.persist(item) for item in items]
'''


def test_a_qualified_name_is_matched_exactly_and_its_namesakes_only_by_name(tmp_path: Path):
    with lexical_searcher(tmp_path, {"stores.py": STORES}) as searcher, searcher.reading() as snapshot:
        symbols = dict(snapshot.connection.execute("SELECT id, symbol FROM chunks"))
        named, exact = symbol_matches(snapshot, "why does Store.persist drop the item")
        bare_named, bare_exact = symbol_matches(snapshot, "who calls persist_all")
    # A name spelled whole counts 1.0, a name it begins by the share it spells ("persist" of "persist_all": 7/11).
    assert {symbols[chunk_id]: value for chunk_id, value in named.items()} == pytest.approx(
        {"Store.persist": 1.0, "Archive.persist": 1.0, "Archive.persist_all": 7 / 11})
    assert {symbols[chunk_id] for chunk_id in exact} == {"Store.persist"}
    assert set(exact.values()) == {1.0}  # what each is worth is the blend's to learn
    assert {symbols[chunk_id] for chunk_id in bare_exact} == {"Archive.persist_all"} == {
        symbols[chunk_id] for chunk_id in bare_named}
