"""The code view's word-piece cut: applied to MiniLM only, and part of the code view's vector keys."""

from grepgraph.retrievers.dense.minilm import MiniLMEmbedder
from grepgraph.retrievers.dense.ollama import OllamaEmbedder
from grepgraph.retrievers.dense.sync import CODE_VIEW_MAX_TOKENS, vector_model_ids, view_token_limit


def test_the_code_view_is_cut_shorter_than_cards():
    embedder = MiniLMEmbedder()
    assert CODE_VIEW_MAX_TOKENS < embedder.max_tokens
    assert view_token_limit("code", embedder) == CODE_VIEW_MAX_TOKENS
    assert view_token_limit("card", embedder) is None


def test_the_cut_names_its_own_model_in_the_keys():
    card_model, code_model = vector_model_ids("minilm", MiniLMEmbedder())
    assert code_model == f"{card_model}/{CODE_VIEW_MAX_TOKENS}"


def test_a_server_model_is_never_cut_here():
    server = OllamaEmbedder("nomic-embed-text", "http://127.0.0.1:9")
    assert view_token_limit("code", server) is None
    assert vector_model_ids("ollama:nomic-embed-text", server) == ("ollama:nomic-embed-text",) * 2


def test_an_embedder_that_cuts_longer_than_the_view_is_not_cut():
    assert view_token_limit("code", MiniLMEmbedder(max_tokens=CODE_VIEW_MAX_TOKENS)) is None
