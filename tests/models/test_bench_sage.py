"""`dspla bench gcn sage` without torch: the PyG rows are skipped with a message naming the
bench extra, and the dspla rows still train and are reported (a short run)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # bench/ of this checkout
from bench import gcn  # noqa: E402

from conftest import dataset  # noqa: E402


def test_sage_bench_skips_the_pyg_rows_when_torch_is_missing(tmp_path, monkeypatch, capsys):
    dataset("planetoid")
    monkeypatch.setitem(sys.modules, "torch", None)    # import torch raises ImportError
    out = tmp_path / "s.json"
    assert gcn.sage(["--seeds", "1", "--epochs", "3", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "PyG rows skipped: torch / torch_geometric are not importable" in text and "'.[bench]'" in text
    got = json.loads(out.read_text())
    assert "pyg" not in got and 0.0 < got["dspla"] <= 1.0 and got["dspla_ms"] > 0
    assert [sorted(r) for r in got["runs"]] == [["dspla", "dspla_ms", "seed"]]
