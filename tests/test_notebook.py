"""examples/notebook.ipynb runs top to bottom (nbclient, a fresh kernel), and its outputs are
the rich ones: HTML tables for the result and the stats, a figure of the stats."""
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def test_the_example_notebook_runs(tmp_path):
    nb = nbformat.read(ROOT / "examples" / "notebook.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not any(o.output_type == "error" for o in c.outputs) for c in code)
    kinds = [set(o.get("data", {})) for c in code for o in c.outputs if o.output_type == "execute_result"]
    explain, result, stats, fig = kinds[-4:]
    assert "text/markdown" in explain and "text/html" in result and "text/html" in stats
    assert "image/png" in fig
    html = next(o["data"]["text/html"] for o in code[-3].outputs if o.output_type == "execute_result")
    assert "D: 2000x1 float64" in html
