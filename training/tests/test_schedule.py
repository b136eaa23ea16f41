"""The training loop every embedding script runs (train.run_schedule): learning rate, log, best, checkpoints."""

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "embedding"))

import train  # noqa: E402


class Saved(torch.nn.Linear):
    """A module ``best/`` can hold: its weights as a file, as ``save_pretrained`` writes a folder."""

    def save_pretrained(self, folder: str) -> None:  # noqa: D102
        Path(folder).mkdir(parents=True, exist_ok=True)
        torch.save(self.state_dict(), Path(folder) / "weights.pt")


def run(work: Path, scores: dict[int, float], max_steps: int | None, resume: bool) -> tuple[Saved, list[float]]:
    """A 1-to-1 linear model fitted to y = 3x for 8 steps, evaluated every 3 with the given scores."""
    torch.manual_seed(0)
    model = Saved(1, 1)
    optimiser = torch.optim.AdamW(model.parameters(), lr=0.5)
    step, best = train.resumed(work / "checkpoints", model, optimiser) if resume else (0, -1.0)
    rates: list[float] = []

    def loss_at(at: int) -> torch.Tensor:
        rates.append(optimiser.param_groups[0]["lr"])
        x = torch.linspace(-1, 1, 16).unsqueeze(1)
        return ((model(x) - 3 * x) ** 2).mean()

    with open(work / "log.jsonl", "a", encoding="utf-8") as log:
        schedule = train.Schedule(model, model, optimiser, total=8, peak=0.5, work=work, log=log, eval_every=3,
                                  checkpoint_every=2, max_steps=max_steps)
        train.run_schedule(schedule, loss_at, lambda at: (scores[at], {"step": at, "score": scores[at]}), step, best)
    return model, rates


def test_a_run_logs_keeps_the_best_and_resumes_where_it_stopped(tmp_path):
    """Stopped at step 5 and resumed, the run ends as one run of 8 steps; best/ holds the best evaluation's model."""
    scores = {0: 0.1, 3: 0.5, 5: 0.2, 6: 0.4, 8: 0.3}
    first, early_rates = run(tmp_path, scores, max_steps=5, resume=False)
    assert json.loads((tmp_path / "best" / "step.json").read_text()) == {"step": 3, "score": 0.5}
    best_weights = (tmp_path / "best" / "weights.pt").read_bytes()
    resumed, late_rates = run(tmp_path, scores, max_steps=None, resume=True)
    (tmp_path / "whole").mkdir()
    whole, rates = run(tmp_path / "whole", scores, max_steps=None, resume=False)
    assert early_rates + late_rates == rates == [train.learning_rate(step, 8, 0.5) for step in range(8)]
    assert torch.allclose(resumed.weight, whole.weight) and torch.allclose(resumed.bias, whole.bias)
    torch.manual_seed(0)
    assert abs(float(whole.weight) - 3) < abs(float(Saved(1, 1).weight) - 3)  # the steps fitted the slope
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [record["step"] for record in log if "score" in record] == [0, 3, 5, 6, 8]  # no step 0 again on resume
    assert [record["step"] for record in log if "loss" in record] == []  # fewer than 10 steps: no loss line
    assert (tmp_path / "best" / "weights.pt").read_bytes() == best_weights  # 0.4 and 0.3 after resuming: not better
    assert sorted(path.name for path in (tmp_path / "checkpoints").iterdir()) == ["step_000006.pt", "step_000008.pt"]
