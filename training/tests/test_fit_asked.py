"""The softmax fit of what a query is: reports, descriptions and the rest, told apart on projects it never saw."""

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fit_asked import CLASSES, chances, class_of, cross_validated_loss, examples, fit  # noqa: E402

NOUNS = ["widget", "buffer", "parser", "record", "socket", "reader", "store", "queue"]


def queries(project: str, salt: int) -> list[tuple[str, str, str, str]]:
    """A project's made-up queries of three kinds: a fix's message, a docstring's sentence, a pasted line."""
    rows = []
    for i, noun in enumerate(NOUNS):
        other = NOUNS[(i + salt) % len(NOUNS)]
        rows.append((project, "python", f"Fix crash when the {noun} is empty", "commit_message"))
        rows.append((project, "python", f"Return the {other} of a {noun}.", "docstring"))
        rows.append((project, "python", f"{noun}.close({other})", "code_line"))
    return rows


def test_the_three_kinds_are_learned_and_new_words_behind_them_placed_right():
    """Openings seen in training carry the weight, so a new noun behind them is placed right."""
    data = [row for salt, project in enumerate("abcdef") for row in queries(project, salt)]
    model = fit([row[2] for row in data], np.array([class_of(row[3]) for row in data]), penalty=1.0)
    assert set(model) == set(CLASSES)
    found = chances(["Fix crash when the gadget is empty", "Return the gadget of a lock.", "gadget.close(lock)"],
                    model)
    assert np.allclose(found.sum(axis=1), 1.0)
    assert list(found.argmax(axis=1)) == [0, 1, 2]


def test_held_out_projects_score_better_than_the_prior():
    """Cross-validation by project beats a uniform guess over the three kinds."""
    data = [row for salt, project in enumerate("abcdefghij") for row in queries(project, salt)]
    assert cross_validated_loss(data, penalty=1.0) < np.log(len(CLASSES))


def test_the_examples_are_every_query_of_a_splits_tables(tmp_path):
    """Each table of the split gives its queries with its project, language and kind."""
    for name, split in (("one", "train"), ("two", "validation")):
        np.savez(tmp_path / f"{name}.npz", split=split, project=name, language="go",
                 kind=np.array(["commit_message", "docstring"]),
                 queries_json=json.dumps([{"query": f"Fix {name}", "kind": "commit_message"},
                                          {"query": f"Return {name}.", "kind": "docstring"}]))
    assert examples(tmp_path, "train") == [("one", "go", "Fix one", "commit_message"),
                                           ("one", "go", "Return one.", "docstring")]
    assert [class_of(row[3]) for row in examples(tmp_path, "validation")] == [0, 1]


def test_the_examples_read_a_query_as_the_search_does(tmp_path):
    """A pasted environment listing is dropped before the words are read, as ``Searcher.search`` drops it."""
    listing = "\n".join(f"package{i}==1.{i}.0" for i in range(6))
    np.savez(tmp_path / "one.npz", split="train", project="one", language="python", kind=np.array(["commit_message"]),
             queries_json=json.dumps([{"query": f"Fix the reader\n{listing}", "kind": "commit_message"}]))
    assert examples(tmp_path, "train") == [("one", "python", "Fix the reader", "commit_message")]
