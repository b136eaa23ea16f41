"""The card of a chunk: what it embeds, and the return-type summary an undocumented function borrows."""

from __future__ import annotations

import pytest
from grepgraph.retrievers.core.model import Chunk
from grepgraph.retrievers.parse.cards import (
    card_text,
    code_text,
    lexical_tokens,
    return_type_text,
    returned_summary,
    type_summaries,
    without_docstring,
)


def chunk(symbol: str, signature: str, *, kind: str = "function", docstring: str = "", parent: str = "",
          language: str = "rust") -> Chunk:
    return Chunk(path="src/lib.rs", language=language, kind=kind, symbol=symbol, start_line=1, end_line=3,
                 signature=signature, docstring=docstring, parent=parent, is_test=False, text=signature)


@pytest.mark.parametrize(("signature", "name", "returned"), [
    ("fn pairs<J>(self, other: J) -> Pairs<Self, J::IntoIter> where J: IntoIterator", "pairs",
     "Pairs<Self, J::IntoIter>"),
    ("def load(self, data: dict) -> Schema:", "load", "Schema:"),
    ("setIsOnline(isOnline: OnlineValue): Manager", "setIsOnline", "Manager"),
    ("func (c *Command) Find(args []string) (*Command, []string, error)", "Find", "(*Command, []string, error)"),
    # Java writes the type before the name (with the modifiers, which match no type)
    ("public static <T> Future<T> submit(Callable<T> task) throws Exception", "submit",
     "public static <T> Future<T>"),
])
def test_return_type_text_in_each_spelling(signature, name, returned):
    assert return_type_text(signature, name).strip() == returned


def test_parameter_types_are_not_the_return_type():
    assert "Config" not in return_type_text("fn reset(&mut self, config: Config)", "reset")
    assert "Config" not in return_type_text("def apply(config: Config) -> None:", "apply")


def test_an_undocumented_function_borrows_its_returned_types_summary():
    summaries = type_summaries([("Pairs", "An iterator over adjacent pairs.\n\nMore detail."), ("Other", "")])
    factory = chunk("pairs", "pub fn pairs<I>(iter: I) -> Pairs<I>")
    assert returned_summary(factory, summaries) == "Pairs: An iterator over adjacent pairs."
    assert "returns Pairs: An iterator over adjacent pairs." in card_text(factory, returns=returned_summary(
        factory, summaries))


def test_documented_functions_and_own_types_borrow_nothing():
    summaries = type_summaries([("Pairs", "An iterator over adjacent pairs.")])
    documented = chunk("pairs", "pub fn pairs<I>(iter: I) -> Pairs<I>", docstring="Pairs of an iterator.")
    builder = chunk("Pairs.skip", "fn skip(self) -> Pairs<I>", kind="method", parent="Pairs")
    assert returned_summary(documented, summaries) == ""
    assert returned_summary(builder, summaries) == ""  # a type's own builder methods say nothing new


def test_a_name_two_types_document_differently_is_left_out():
    summaries = type_summaries([("Node", "A node of the parse tree."), ("Node", "A node of the network."),
                                ("Edge", "An edge."), ("Edge", "An edge.")])
    assert summaries == {"Edge": "An edge."}


PYTHON_METHOD = '''    @cached(size=2)
    def resolve(self, name,
                default=None):
        """Look the endpoint up in the routing table.

        Falls back to the default route.
        """
        return self.table.get(name, default)
'''
GO_FUNCTION = '''// Resolve looks the endpoint up in the routing table.
func Resolve(name string) Endpoint {
	return table[name]
}
'''


@pytest.mark.parametrize(("language", "text", "docstring"), [
    ("python", PYTHON_METHOD, "Look the endpoint up in the routing table.\n\nFalls back to the default route."),
    ("go", GO_FUNCTION, "Resolve looks the endpoint up in the routing table."),
])
def test_a_doc_comment_reaches_the_indexes_once_through_the_card(language, text, docstring):
    """Written above the code or as a Python docstring, its words are the card's, not the code view's or BM25's.

    A described query should meet a neighbour's documentation in one view, whichever language it is written in.
    """
    documented = Chunk(path="pkg/routes.py", language=language, kind="function", symbol="resolve", start_line=1,
                       end_line=text.count("\n"), signature="resolve(name)", docstring=docstring, text=text)
    assert "routing table" in card_text(documented)
    assert "routing" not in code_text(documented)
    assert "routing" not in lexical_tokens(documented)
    assert "table" in code_text(documented)  # the code itself stays


def test_without_docstring_keeps_decorators_signature_and_body():
    assert without_docstring(PYTHON_METHOD) == (
        "    @cached(size=2)\n    def resolve(self, name,\n                default=None):\n"
        "        return self.table.get(name, default)\n")
    assert without_docstring('"""Routes."""\nimport os\n') == "import os\n"
    assert without_docstring("class Route:\n    'A route.'\n    name = ''\n") == "class Route:\n    name = ''\n"


def test_without_docstring_leaves_what_does_not_parse_or_has_none():
    window = "    def resolve(self, name):\n        \"\"\"Look the endpoint up"  # cut inside the docstring
    assert without_docstring(window) == window
    assert without_docstring("def f():\n    return '''not a docstring'''\n") == \
        "def f():\n    return '''not a docstring'''\n"
