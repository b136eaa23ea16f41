"""The notebooks run top to bottom, from ``notebooks/``, on this interpreter, and show what they promise.

Each indexes its own copy of the sample repository (a temporary directory), so they take a few
seconds of embedding each. The kernel is this interpreter: a ``python3`` kernelspec written to a
temporary ``JUPYTER_PATH`` (searched before the user's and the system's kernelspecs), so a
``python3`` kernel installed elsewhere for another Python can't be picked up.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CELL_TIMEOUT_S = 300


@pytest.fixture
def this_python_kernel(tmp_path, monkeypatch) -> str:
    """Kernel name ``python3``, resolved to ``sys.executable`` whatever else is installed."""
    spec_dir = tmp_path / "jupyter" / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (this interpreter)", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    from jupyter_client.kernelspec import KernelSpecManager

    assert KernelSpecManager().get_kernel_spec("python3").argv[0] == sys.executable
    return "python3"


def execute(name: str, kernel: str):
    """Run ``notebooks/<name>.ipynb`` with the working directory set to ``notebooks/``."""
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    client = nbclient.NotebookClient(notebook, kernel_name=kernel, timeout=CELL_TIMEOUT_S,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    return notebook


def outputs(notebook, mime: str) -> list[str]:
    """Every output of one kind (``stream`` for printed text, else a MIME type), in order."""
    found = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if mime == "stream" and output.output_type == "stream" and output.name == "stdout":
                found.append(output.text)
            elif mime in output.get("data", {}):
                found.append(output["data"][mime])
    return found


@pytest.mark.parametrize("name", ["quickstart", "evaluation"])
def test_notebooks_are_committed_without_outputs(name):
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def test_quickstart_indexes_searches_traces_and_draws_the_graph(this_python_kernel):
    notebook = execute("quickstart", this_python_kernel)
    printed = "".join(outputs(notebook, "stream"))
    assert f"repository root: {NOTEBOOKS.parent}" in printed
    assert "indexed 1" in printed and "chunks" in printed
    tables = outputs(notebook, "text/markdown")
    results, trace, callers, graph_trace = tables[:4]
    first_result = results.splitlines()[2]
    assert first_result.startswith("| graphstore/store.py |"), results
    assert "GraphStore._insert_edges" in results or "GraphStore.store_parse_result" in results
    for node in ("classify_intent", "should_rewrite", "retrieve", "merge", "finalize"):
        assert f"| {node} |" in trace
    assert "| graphstore/parser.py |" in callers and "| parse_file |" in callers
    assert "lookup_symbol_graph" in graph_trace
    assert "graph TD;" in printed and "classify_intent -.-> lookup_symbol_graph;" in printed


def test_evaluation_scores_every_method_and_plots(this_python_kernel):
    notebook = execute("evaluation", this_python_kernel)
    summary = next(table for table in outputs(notebook, "text/markdown") if "MRR@10" in table)
    rows = {line.split("|")[1].strip(): line.split("|")[2:-1] for line in summary.splitlines()[2:]}
    assert set(rows) == {"bm25 only", "vectors only", "grepgraph default", "graph (no LLM)"}
    for method, (mrr, hits_at_1, p50) in rows.items():
        assert 0.0 <= float(mrr) <= 1.0 and 0.0 <= float(hits_at_1) <= 1.0 and float(p50) > 0, method
    assert float(rows["grepgraph default"][0]) >= 0.5  # the eight questions are easy ones
    assert len(outputs(notebook, "image/png")) == 1
