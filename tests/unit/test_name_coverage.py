"""Name coverage: the share of a definition's name words a query uses, run-together names included."""

from pathlib import Path

import pytest
from grepgraph.retrievers.rank.search import Searcher

from tests.conftest import lexical_searcher

SOCKET = '''
class Channel:
    def getsendbuffer(self):
        return list(self.pending)

    def send(self, data):
        self.pending.append(data)

    def flush_buffer(self):
        self.pending.clear()

    def sendmail(self, to):
        return to

    def get_peer(self):
        return self.peer
'''


@pytest.fixture()
def searcher(tmp_path: Path):
    with lexical_searcher(tmp_path, {"channel.py": SOCKET}) as searcher:
        yield searcher


def coverage(searcher: Searcher, query_words: list[str]) -> dict[str, float]:
    with searcher.index.connect() as connection:
        ids = {chunk_id: symbol for chunk_id, symbol in connection.execute("SELECT id, symbol FROM chunks")}
    return {ids[chunk_id]: share for chunk_id, share in searcher.name_coverage(query_words, set(ids)).items()}


def test_a_run_together_name_is_covered_by_the_words_it_is_made_of(searcher):
    shares = coverage(searcher, ["copi", "send", "buffer", "list"])
    assert shares["Channel.getsendbuffer"] == pytest.approx(2 / 3)  # get | send | buffer
    assert shares["Channel.send"] == 1.0
    assert shares["Channel.flush_buffer"] == pytest.approx(1 / 2)
    # "mail" occurs nowhere in the repository, so "sendmail" is not read as send + mail.
    assert "Channel.sendmail" not in shares


def test_a_search_weighs_the_run_together_name_by_the_words_it_shares(searcher):
    # The query's "buffer" also brings its abbreviation "buf", which starts at the same letter: the longer
    # word is the one that spells the name.
    hits, _ = searcher.search("Returns a copy of the send buffer list.", 5)
    evidence = {hit.symbol: hit.components.get("name") for hit in hits}
    assert evidence["Channel.getsendbuffer"] == pytest.approx(2 / 3, abs=1e-3)  # components are rounded
