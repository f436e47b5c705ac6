"""examples/explore.ipynb runs top to bottom in a real Jupyter kernel against the sample index."""
from __future__ import annotations

import pytest

from conftest import REPO

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")


def test_example_notebook_runs(sample_db, monkeypatch):
    monkeypatch.setenv("OPINDEX_DB", str(sample_db))
    nb = nbformat.read(REPO / "examples" / "explore.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = {i: c.outputs for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    assert all(not any(o.output_type == "error" for o in outs) for outs in outputs.values())
    trace_cell = nb.cells[3].outputs[0]
    assert "text/markdown" in trace_cell.data
    assert "opindex trace `nn.LSTM`" in trace_cell.data["text/markdown"]
    assert "flowchart TD" in nb.cells[6].outputs[0].text
    assert "text/html" in nb.cells[8].outputs[0].data  # a pandas DataFrame
    assert "('CPU', 'relu')" in nb.cells[11].outputs[0].data["text/plain"]
