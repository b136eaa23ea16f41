"""The contrastive batches of train.py: seeded draws, one or several hard negatives a query (needs .venv-train)."""

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embedding"))

import train  # noqa: E402


def mined_pairs(count: int) -> list[dict]:
    """Training lines as pairs.py writes them: a card and a code view, three hard negatives of each."""
    return [{"query": f"query {n}", "card": f"card {n}", "code": f"code {n}",
             "negative_cards": [f"card negative {n}.{k}" for k in range(3)],
             "negative_codes": [f"code negative {n}.{k}" for k in range(3)]} for n in range(count)]


def test_one_negative_a_query_by_default_drawn_from_the_positive_view():
    """The first run's draw: each query's positive view and one mined negative of that view."""
    batches = train.epoch_batches(mined_pairs(10), epoch=0, size=4)
    assert [len(batch) for batch in batches] == [4, 4]  # the last short batch is dropped
    for query, positive, negatives, view in (row for batch in batches for row in batch):
        number = query.split()[1]
        assert positive == f"{view} {number}"
        assert len(negatives) == 1 and negatives[0].startswith(f"{view} negative {number}.")


def test_several_negatives_are_distinct_and_the_draw_is_seeded():
    """``--negatives 3``: three different mined negatives of the drawn view; the same epoch draws the same."""
    first = train.epoch_batches(mined_pairs(8), epoch=1, size=4, negatives=3)
    assert first == train.epoch_batches(mined_pairs(8), epoch=1, size=4, negatives=3)
    assert first != train.epoch_batches(mined_pairs(8), epoch=2, size=4, negatives=3)
    for _, _, negatives, view in (row for batch in first for row in batch):
        assert len(set(negatives)) == 3 and all(text.startswith(f"{view} negative") for text in negatives)


def test_the_loss_scores_each_query_against_every_positive_and_negative():
    """A query's own positive is its target; a copy of it among the others is masked, not counted against it."""

    class Fixed:
        """Each text's vector points along its number; a query's is short, so it scores its positive 1 / 1."""

        def vectors(self, texts: list[str], max_tokens: int) -> torch.Tensor:
            rows = []
            for text in texts:
                vector = torch.zeros(8)
                vector[int(text.split()[-1].split(".")[0]) + (4 if "negative" in text else 0)] = 1.0
                rows.append(vector * train.TEMPERATURE if text.startswith("query") else vector)
            return torch.stack(rows)

    batch = [(f"query {n}", f"card {n}", [f"card negative {n}.0", f"card negative {n}.1"], "card") for n in range(3)]
    batch[1] = (*batch[1][:2], ["card 0", "card negative 1.1"], "card")  # query 0's positive again, as a negative
    loss = train.contrastive_loss(Fixed(), batch)
    # 9 texts: the target scores 1, the rest 0; query 0's copy of its positive is masked, leaving it 7 others.
    expected = (np.log1p(7 / np.e) + 2 * np.log1p(8 / np.e)) / 3
    assert loss.item() == pytest.approx(expected, rel=1e-5)
