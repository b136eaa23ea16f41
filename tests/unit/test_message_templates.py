"""Pasted program output finds the format string that printed it, though the values differ."""

from pathlib import Path

from grepgraph.retrievers.rank.messages import message_fragments, output_lines
from grepgraph.retrievers.rank.printers import inside_literal

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
    line = b'raise KeyError(f"no entry named {name!r}")  # no entry named'
    assert inside_literal(line, line.find(b"no entry"))
    assert not inside_literal(line, line.rfind(b"no entry"))


def test_the_definition_printing_the_message_ranks_first(tmp_path: Path):
    with lexical_searcher(tmp_path, {"inventory.py": INVENTORY, "GUIDE.md": GUIDE}) as searcher:
        hits, _ = searcher.search(REPORT, limit=10)
    printed = {hit.symbol: hit.components.get("message", 0.0) for hit in hits}
    assert hits[0].symbol == "Shelf.__repr__"
    assert printed["Shelf.__repr__"] == 1.0  # both runs, inside its format string
    assert not printed.get("Shelf.restock")  # the same words in a comment print nothing
    assert "inventory" in printed and not printed["inventory"]  # a module-level table names, not prints, it
    assert not any(value for symbol, value in printed.items() if symbol != "Shelf.__repr__")


def test_a_question_in_words_gets_no_message_evidence(tmp_path: Path):
    with lexical_searcher(tmp_path, {"inventory.py": INVENTORY}) as searcher:
        hits, _ = searcher.search("where is the text stocked from the dock made", limit=10)
    assert hits and all(not hit.components.get("message") for hit in hits)


TOOL = '''
import argparse


def build_parser():
    parser = argparse.ArgumentParser(prog="shelf")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("restock", help="add boxes to a shelf")
    parser.add_argument("--dry-run", action="store_true")
    return parser


def restock_shelf(shelf, boxes, dry_run=False):
    """Put boxes on a shelf unless it is full."""
    if len(shelf) + len(boxes) > 10:
        raise ValueError(f"shelf {shelf!r} holds at most 10 boxes, not {len(shelf) + len(boxes)}")
    return shelf if dry_run else shelf + boxes


def describe(shelf):
    # restock the shelf before describing it
    return "shelf of %d boxes" % len(shelf)
'''


def test_a_pasted_error_line_with_other_values_finds_its_raise(tmp_path: Path):
    with lexical_searcher(tmp_path, {"tool.py": TOOL}) as searcher:
        hits, _ = searcher.search("ValueError: shelf 'north' holds at most 10 boxes, not 12", limit=10)
    assert hits[0].symbol == "restock_shelf" and hits[0].components["message"] > 0


PLUGINS_JS = '''
export function loadPlugin(name, known) {
  if (!known.includes(name)) {
    throw new Error(`Unknown plugin ${name}: expected one of ${known.join(", ")}`);
  }
  return known.indexOf(name);
}

export function listPlugins(known) {
  // expected one of the plugins below
  return known.slice();
}
'''

PLUGINS_GO = '''package plugins

import "fmt"

func Load(name string, known []string) (int, error) {
	for i, k := range known {
		if k == name {
			return i, nil
		}
	}
	return -1, fmt.Errorf("no plugin named %q among %d registered plugins", name, len(known))
}
'''


def test_templates_in_other_languages_are_found_too(tmp_path: Path):
    files = {"web/plugins.js": PLUGINS_JS, "plugins/plugins.go": PLUGINS_GO}
    with lexical_searcher(tmp_path, files) as searcher:
        js, _ = searcher.search("Error: Unknown plugin sparkle: expected one of zoom, pan", limit=5)
        go, _ = searcher.search('Error: no plugin named "sparkle" among 3 registered plugins', limit=5)
    assert js[0].symbol == "loadPlugin" and js[0].components["message"] > 0  # a template literal's backticks
    assert not any(hit.components.get("message") for hit in js if hit.symbol == "listPlugins")
    assert go[0].symbol == "Load" and go[0].components["message"] > 0
