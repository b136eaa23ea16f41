"""Pasted program output finds the format string that printed it, though the values differ."""

from pathlib import Path

from grepgraph.retrievers.messages import inside_literal, message_fragments, output_lines

from tests.conftest import lexical_searcher

INVENTORY = '''
LABELS = {"shelf": "{name}, stocked from {source}"}


class Shelf:
    def __init__(self, name, boxes):
        self.name = name
        self.boxes = boxes

    def __repr__(self):
        return "{}, stocked from {!r} \\n{} boxes on hand.".format(type(self).__name__, self.name, len(self.boxes))

    def restock(self, boxes):
        # stocked from the loading dock, boxes on hand are counted after
        self.boxes.extend(boxes)


def count_crates(boxes):
    return f"a crate holds {len(boxes)} boxes of {boxes[0]}"
'''

GUIDE = "# Shelves\n\nPrinting a shelf shows `Shelf, stocked from 'dock' 2 boxes on hand.`\n"

# Longer than a question: the searcher reads it as an issue report.
REPORT = (
    "Extra space at the end of a shelf's first line. When I print a shelf in the console, the first line of what "
    "it shows ends with a space, which our formatter flags in every docstring that quotes it, and our doctests "
    "then fail when we remove the space from the expected output, so we can keep neither the check nor the tests "
    "as they are today without changing one of them.\n"
    "```pycon\n"
    ">>> shelf = Shelf('north', [1, 2])\n"
    ">>> shelf\n"
    "ColdShelf, stocked from 'north' \n"
    "2 boxes on hand.\n"
    "```\n"
)


def test_fragments_are_the_words_between_the_printed_values():
    assert output_lines(REPORT) == ["ColdShelf, stocked from 'north' ", "2 boxes on hand."]
    assert message_fragments(REPORT) == ["boxes on hand", "stocked from"]  # longest first


def test_prompts_frames_code_and_traceback_sources_are_not_output():
    text = ("```\n>>> run('x')\nTraceback (most recent call last):\n"
            '  File "tool.py", line 3, in run\n    # check the input first\n'
            "    value = parse(x)\nKeyError: no entry named 'x' in the table\n```\n")
    assert output_lines(text) == ["no entry named 'x' in the table"]
    assert message_fragments(text) == ["no entry named", "in the table"]


def test_a_position_is_inside_a_literal_after_an_odd_number_of_quotes():
    line = 'raise KeyError(f"no entry named {name!r}")  # no entry named'
    assert inside_literal(line, line.find("no entry"))
    assert not inside_literal(line, line.rfind("no entry"))


def test_the_definition_printing_the_message_ranks_first(tmp_path: Path):
    with lexical_searcher(tmp_path, {"inventory.py": INVENTORY, "GUIDE.md": GUIDE}) as searcher:
        hits, _ = searcher.search(REPORT, limit=10)
    printed = {hit.symbol: hit.components.get("message", 0.0) for hit in hits}
    assert hits[0].symbol == "Shelf.__repr__"
    assert printed["Shelf.__repr__"] == 1.0  # both runs, inside its format string
    assert not printed.get("Shelf.restock")  # the same words in a comment print nothing
    assert "inventory" in printed and not printed["inventory"]  # a module-level table names, not prints, it
    assert not any(value for symbol, value in printed.items() if symbol != "Shelf.__repr__")


def test_short_queries_get_no_message_evidence(tmp_path: Path):
    with lexical_searcher(tmp_path, {"inventory.py": INVENTORY}) as searcher:
        hits, _ = searcher.search("where is the text 'stocked from' made", limit=10)
    assert hits and all(not hit.components.get("message") for hit in hits)
