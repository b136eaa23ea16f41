"""The blend's training tables embed a train package's queries with the document model, not the query tower."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from features import queries_for_the_fit  # noqa: E402
from grepgraph.retrievers.dense.minilm import MiniLMEmbedder  # noqa: E402


class Embedded:
    """Records what it was asked to embed as a document."""

    def __init__(self) -> None:  # noqa: D107
        self.documents: list[list[str]] = []

    def embed(self, texts: list[str]) -> list[str]:
        """A document vector's stand-in per text, each call recorded."""
        self.documents.append(texts)
        return [f"document vector of {text}" for text in texts]


def test_a_train_packages_queries_are_embedded_as_documents_and_the_tower_comes_back():
    """Inside, a query is embedded as a document; after, the tower's method is back."""
    tower = MiniLMEmbedder.embed_query
    embedder = Embedded()
    with queries_for_the_fit("train"):
        assert MiniLMEmbedder.embed_query(embedder, "parse a header") == "document vector of parse a header"
    assert embedder.documents == [["parse a header"]]
    assert MiniLMEmbedder.embed_query is tower


def test_a_validation_package_is_searched_through_the_tower():
    """A validation package's queries go through the tower, as a user's do."""
    tower = MiniLMEmbedder.embed_query
    with queries_for_the_fit("validation"):
        assert MiniLMEmbedder.embed_query is tower
