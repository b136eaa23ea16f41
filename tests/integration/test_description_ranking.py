"""How a one-sentence description finds its definition: verbs ask for functions, noun phrases for types.

A real index (MiniLM, BM25, Chroma) of a small Rust crate whose factory functions are undocumented,
the common case: they are described by the documented type they return.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

WINDOWS_RS = """\
/// An iterator over overlapping windows of a slice, each one element further along.
pub struct Windows<'a, T> {
    slice: &'a [T],
    size: usize,
}

impl<'a, T> Iterator for Windows<'a, T> {
    type Item = &'a [T];

    fn next(&mut self) -> Option<Self::Item> {
        if self.slice.len() < self.size {
            return None;
        }
        let window = &self.slice[..self.size];
        self.slice = &self.slice[1..];
        Some(window)
    }
}
"""

LIB_RS = """\
mod windows;
use crate::windows::Windows;

pub fn windows<T>(slice: &[T], size: usize) -> Windows<'_, T> {
    Windows { slice, size }
}

/// Sum of the squares of a slice's values.
pub fn sum_of_squares(values: &[i64]) -> i64 {
    values.iter().map(|v| v * v).sum()
}
"""


@pytest.fixture(scope="module")
def crate(tmp_path_factory) -> tuple[Path, Searcher]:
    root = tmp_path_factory.mktemp("crate")
    (root / "src").mkdir()
    (root / "src" / "windows.rs").write_text(WINDOWS_RS)
    (root / "src" / "lib.rs").write_text(LIB_RS)
    index = CodeIndex(root, root / ".grepgraph")
    index.update()
    searcher = Searcher(index)
    yield root, searcher
    searcher.close()


def card_of(root: Path, symbol: str) -> str:
    with sqlite3.connect(root / ".grepgraph" / "index.sqlite") as connection:
        return connection.execute("SELECT card FROM chunks WHERE symbol = ?", (symbol,)).fetchone()[0]


def test_an_undocumented_factory_is_described_by_the_type_it_returns(crate):
    root, _ = crate
    assert "returns Windows: An iterator over overlapping windows of a slice" in card_of(root, "windows")
    # documented functions keep their own words only
    assert "returns" not in card_of(root, "sum_of_squares")


def test_a_trait_impls_associated_type_is_no_chunk_of_its_own(crate):
    root, _ = crate
    with sqlite3.connect(root / ".grepgraph" / "index.sqlite") as connection:
        symbols = {symbol for (symbol,) in connection.execute("SELECT symbol FROM chunks")}
    assert "Windows.Item" not in symbols
    assert "Iterator for Windows" in symbols  # the impl's chunk still holds the binding's line


def test_a_verb_led_description_finds_the_function(crate):
    _, searcher = crate
    query = "Return an iterator over overlapping windows of a slice."
    # Among the type's code (the hand-set kind priors, gone since 2026-11-29, put it first).
    assert "windows" in [hit.symbol for hit in searcher.search(query, limit=3)[0]]


def test_a_noun_phrase_description_finds_the_type(crate):
    _, searcher = crate
    hits, _ = searcher.search("An iterator over overlapping windows of a slice.", limit=3)
    assert hits[0].symbol == "Windows"  # the type's impl may come next: it holds the type's code


def test_the_search_reads_what_a_query_is_into_the_blends_columns(crate):
    """A report of a problem and a description get the columns the blend's per-kind weights are crossed with."""
    _, searcher = crate
    _, report = searcher.candidate_table("Fix overflow when the sum of squares is taken over large values")
    _, description = searcher.candidate_table("Sum of the squares of a slice's values.")
    assert report["is_report"].min() > 0.5 > report["is_description"].max()
    assert description["is_description"].min() > 0.5 > description["is_report"].max()
    _, name = searcher.candidate_table("sum_of_squares")
    assert name["is_report"].max() < 0.5 and name["is_description"].max() < 0.5


def test_a_pasted_block_and_a_text_of_several_lines_are_read_at_any_length(crate):
    """Two lines pasted from the code are a pasted block of several lines; a sentence of any length is neither."""
    _, searcher = crate
    _, pasted = searcher.candidate_table("let window = &self.slice[..self.size];\nself.slice = &self.slice[1..];")
    assert pasted["pasted_block"].min() == 1.0 and pasted["multiline"].min() == 1.0
    _, sentence = searcher.candidate_table("An iterator over overlapping windows of a slice " * 12)
    assert sentence["pasted_block"].max() == 0.0 and sentence["multiline"].max() == 0.0
