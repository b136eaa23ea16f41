"""The files to change, derived from the ranked definitions: a file ranks where its best definition does."""

from grepgraph.retrievers.core.results import code_result, rank_files


def test_files_rank_by_their_best_definition_and_list_their_symbols_once():
    results = [code_result("store.py", 10, 40, "Store.save", "method", 0.9),
               code_result("cli.py", 1, 5, "main", "function", 0.8),
               code_result("store.py", 50, 90, "Store.save", "method", 0.7),  # a second window of one function
               code_result("store.py", 95, 99, "Store.load", "method", 0.6),
               code_result("README.md", 1, 30, "", "text", 0.5)]
    assert rank_files(results) == [
        {"path": "store.py", "score": 0.9, "symbols": ["Store.save", "Store.load"]},
        {"path": "cli.py", "score": 0.8, "symbols": ["main"]},
        {"path": "README.md", "score": 0.5, "symbols": []},
    ]


def test_no_results_rank_no_files():
    assert rank_files([]) == []
