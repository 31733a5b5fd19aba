"""dspla scaling: the commands docs/planner.md shows run as written; its table, JSON and plot;
errors named before anything is counted."""
from __future__ import annotations

import json
import re
import shlex

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.cli.main import main

from conftest import ROOT


def _lines():
    text = (ROOT / "docs" / "planner.md").read_text()
    return [ln for b in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M) for ln in b.splitlines()
            if ln.startswith("dspla scaling")]


def test_planner_md_scaling_commands_run(tmp_path, monkeypatch, capsys):
    A = sp.random_array((300, 300), density=0.03, rng=np.random.default_rng(0), format="coo")
    scipy.io.mmwrite(tmp_path / "g.mtx", A)
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    lines = _lines()
    assert len(lines) == 2
    for line in lines:
        assert main(shlex.split(line.replace("$G", str(tmp_path / "g.mtx")))[1:]) == 0
    out = capsys.readouterr().out
    assert "chosen" in out and "CAGNET 1d" in out and "15d_sparse c=2" in out and "vertexcut spac" in out
    doc = json.loads((tmp_path / "out" / "scaling.json").read_text())
    assert [r["P"] for r in doc["rows"]] == [16, 64] and doc["cluster"] == "Perlmutter"
    for r in doc["rows"]:
        best = min(r["candidates"], key=lambda c: c["predicted_s"])
        assert r["chosen"] == best["plan"] and 0 < r["ratio"] <= 1
        assert {c["count"] for c in r["candidates"]} >= {"formula", "exact"}
    assert (tmp_path / "out" / "scaling.png").stat().st_size > 1000


@pytest.mark.parametrize("args, msg", [
    (["reddit", "--np", "16,x"], "--np takes comma-separated integers"),
    (["reddit", "--cluster", "nowhere.toml"], "summit, perlmutter"),
    (["rmat:10"], "rmat:N:NNZ"),
    (["reddit", "--f", "16"], "at least two widths"),
    (["reddit", "--edge-partition", "spac"], "needs a graph file"),
])
def test_errors_are_named(args, msg, capsys):
    assert main(["scaling", *args]) != 0
    assert msg in capsys.readouterr().err


def test_explain_on_a_cluster_counts_every_candidate_without_lowering(tmp_path, monkeypatch, capsys):
    A = sp.random_array((300, 300), density=0.03, rng=np.random.default_rng(1), format="coo")
    scipy.io.mmwrite(tmp_path / "g.mtx", A)
    monkeypatch.chdir(ROOT)
    args = ["explain", "examples/gcn_layer.dspla", "--np", "1024", "--cluster", "summit", "--dim", "f=16"]
    assert main([*args, "-i", f"A={tmp_path / 'g.mtx'}", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["P"] == 1024 and out["cluster"] == "Summit" and out["products"]
    for prod in out["products"]:
        names = [c["plan"] for c in prod["candidates"]]
        assert prod["chosen"] == names[0] and "CAGNET 1d" in names and "p2p1d" in names
        times = [c["predicted_s"] for c in prod["candidates"]]
        assert times == sorted(times)
    assert main(args) != 0
    assert "explain --cluster counts on the graph: give it with -i" in capsys.readouterr().err
