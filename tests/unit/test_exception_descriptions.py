"""A description worded like an exception's docstring ("Raised when ...") asks for the repository's exceptions."""

from pathlib import Path

import pytest
from grepgraph.retrievers.query.shape import describes_exception
from grepgraph.retrievers.store.hierarchy import exception_types

from tests.conftest import lexical_searcher

ERRORS = '''
class ShelfError(Exception):
    pass


class ShelfFull(ShelfError):
    pass


class NoRoom(ShelfFull):
    pass


class Shelf:
    """Holds books in slots, a label on each slot."""

    def add(self, book, label):
        if len(self.slots) >= self.size:
            raise NoRoom(label)
        self.slots[label] = book
'''


@pytest.mark.parametrize(("query", "expected"), [
    ("Raised when the shelf has no free slot.", True),
    ("Thrown if a slot has no label", True),
    ("An exception that the shelf raises when it is full", True),
    ("Error raised for a missing label", True),
    ("Formats the exception and its traceback into text.", False),
    ("A shelf that holds books in labelled slots", False),
    ("which exception is raised for a full shelf?", False),
])
def test_exception_descriptions(query, expected):
    assert describes_exception(query) is expected


@pytest.fixture()
def searcher(tmp_path: Path):
    with lexical_searcher(tmp_path, {"shelf.py": ERRORS}) as searcher:
        yield searcher


def test_exception_types_are_named_like_one_or_derive_from_one_at_any_depth(searcher):
    with searcher.index.connect() as connection:
        found = set(exception_types(connection).values())
    assert found == {"ShelfError", "ShelfFull", "NoRoom"}


def test_the_exceptions_join_the_candidates_even_without_a_word_in_common(searcher):
    description = "Raised when a book is added but every slot is taken."
    plain, _ = searcher.search(description, 10, kind_priors=False)
    assert not {"ShelfError", "ShelfFull", "NoRoom"} & {hit.symbol for hit in plain}
    hits, _ = searcher.search(description, 10)
    assert {"ShelfError", "ShelfFull", "NoRoom"} <= {hit.symbol for hit in hits}


def test_the_wording_weighs_for_the_exception_types(searcher):
    description = "Raised when a book is added to a shelf whose slots are all taken."
    lifted, signal = searcher.search(description, 10)
    plain, _ = searcher.search(description, 10, kind_priors=False)
    assert signal.ranking == "learned"
    # Scores are relative to the best hit (the method whose words the description shares, first either way).
    relative, without = ({hit.symbol: hit.score for hit in hits} for hits in (lifted, plain))
    for name in ("ShelfError", "ShelfFull", "NoRoom"):
        assert relative[name] > without.get(name, 0.0)
