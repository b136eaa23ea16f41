"""The sets the LLM benchmark derives from a ruler at run time: joined requests and mistyped queries."""

from __future__ import annotations

from grepgraph.graphs.heuristics import decompose

from benchmarks.llm_stages import COMPOUND_JOIN, compound_queries, compound_scorer, mistyped


class ByPackage:
    """A ruler's two jobs the sets use: which corpus a query searches, and whether its gold was found."""

    def corpus(self, query: dict) -> str:
        return query["package"]

    def score_query(self, query: dict, results: list[dict]) -> dict[str, float]:
        ranks = [n for n, hit in enumerate(results, start=1) if hit["symbol"] == query["gold"]]
        rank = ranks[0] if ranks else 0
        return {"MRR@10": 1 / rank if rank and rank <= 10 else 0.0, "R@5": float(0 < rank <= 5),
                "R@10": float(0 < rank <= 10)}


def query(number: int, package: str, text: str) -> dict:
    return {"id": f"{package}-{number}", "package": package, "query": text, "gold": f"symbol_{number}"}


QUERIES = [query(1, "shop", "Return the cart total including taxes."),
           query(2, "shop", "Apply a discount code to the order."),
           query(3, "shop", "Send the invoice by email to the customer."),
           query(4, "shop", "Parse the URL of a product page."),
           query(5, "blog", "Render a post as HTML.")]


def test_compound_requests_join_two_queries_of_one_package():
    compounds = compound_queries(QUERIES, ByPackage())
    # shop has four queries: the first goes with the third, the second with the fourth; blog's one is left alone.
    assert [c["id"] for c in compounds] == ["shop-1+shop-3", "shop-2+shop-4"]
    assert compounds[0]["query"] == ("Return the cart total including taxes" + COMPOUND_JOIN
                                     + "send the invoice by email to the customer.")
    assert compounds[1]["query"].endswith("and also parse the URL of a product page.")
    assert [part["id"] for part in compounds[0]["parts"]] == ["shop-1", "shop-3"]


def test_a_joined_request_is_one_the_graph_splits():
    parts, mode = decompose(compound_queries(QUERIES, ByPackage())[0]["query"], 4)
    assert mode == "union"
    assert parts == ["Return the cart total including taxes", "send the invoice by email to the customer"]


def test_a_compound_counts_only_when_both_golds_are_found():
    compound = compound_queries(QUERIES, ByPackage())[0]
    score = compound_scorer(ByPackage())
    both = score(compound, [{"symbol": "symbol_3"}, {"symbol": "other"}, {"symbol": "symbol_1"}])
    assert both == {"both@10": 1.0, "MRR@10": (1 / 3 + 1) / 2, "R@5": 1.0, "R@10": 1.0}
    one = score(compound, [{"symbol": "symbol_1"}])
    assert one["both@10"] == 0.0 and one["R@10"] == 0.5 and one["MRR@10"] == 0.5


def test_mistyping_swaps_two_middle_letters_of_every_long_word():
    assert mistyped("Return the cart total") == "Reutrn the crat ttoal"
    assert mistyped("search parser settings") == "serach pasrer setitngs"
    assert mistyped("Keep a tree") == "eKep a tere"  # swapping "ee" changes nothing: the slip moves left
    assert mistyped("See x.y_z, do it") == "See x.y_z, do it"  # nothing of 4+ letters: unchanged
