"""dspla train / dspla demo from the command line: JSON contents, clear errors for bad flags, and
a real mpiexec run (--np 2) that reproduces the single-process losses."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dspla.cli.main import main

from conftest import ROOT

GCN = str(ROOT / "examples" / "gcn.dspla")
DSPLA = str(Path(sys.executable).parent / "dspla")
SBM = ["--dataset", "sbm", "--nodes", "2000", "--feature-dim", "16"]


def test_train_writes_json_with_history_accuracy_plan_and_comm(tmp_path, capsys):
    out = tmp_path / "r.json"
    logits = tmp_path / "l.npy"
    assert main(["train", GCN, *SBM, "--epochs", "4", "--json", str(out), "--save-logits", str(logits),
                 "--optimizer", "sgd", "--lr", "0.5", "--momentum", "0.9"]) == 0
    r = json.loads(out.read_text())
    assert 0 <= r["test_accuracy"] <= 1 and set(r) >= {"train_accuracy", "val_accuracy", "plan", "partition",
                                                        "comm", "epochs", "P", "config"}
    assert [e["epoch"] for e in r["epochs"]] == [1, 2, 3, 4]
    assert set(r["epochs"][0]) >= {"loss", "train_acc", "val_acc", "test_acc", "val_loss", "time_s"}
    assert r["config"]["optimizer"] == "sgd" and r["dataset"]["nodes"] == 2000
    assert np.load(logits).shape == (2000, 7)
    err = capsys.readouterr().err
    assert "epoch 4/4" in err and "loss" in err


@pytest.mark.parametrize("args,msg", [
    (["--dataset", "cora"], "needs --data-dir"),
    (["--dataset", "sbm", "--dropout", "1.5"], "argument --dropout: must be a number at least 0 and below 1"),
    (["--dataset", "sbm", "--epochs", "0"], "argument --epochs: must be a whole number of at least 1, got 0"),
    (["--dataset", "sbm", "--plan", "nosuch"], "nosuch"),
    (["--dataset", "mnist"], "mnist"),
    (["--graph", "/nonexistent.mtx"], "graph file not found"),
    (["--dataset", "sbm", "--resume"], "--resume needs --checkpoint"),
])
def test_bad_flags_give_clear_errors(args, msg, capsys):
    assert main(["train", GCN, *args]) == 2
    assert msg in capsys.readouterr().err


def test_program_outside_the_convention_is_rejected(tmp_path, capsys):
    p = tmp_path / "layer.dspla"
    p.write_text((ROOT / "examples" / "gcn_layer.dspla").read_text())
    assert main(["train", str(p), *SBM]) == 2
    assert "training convention" in capsys.readouterr().err


def test_graph_file_with_features_and_labels(tmp_path):
    import scipy.io
    import scipy.sparse as sp
    rng = np.random.default_rng(0)
    A = sp.random_array((300, 300), density=0.03, random_state=rng, format="coo")
    scipy.io.mmwrite(tmp_path / "g.mtx", A)
    np.save(tmp_path / "x.npy", rng.random((300, 5)))
    np.save(tmp_path / "y.npy", rng.integers(0, 3, 300))
    out = tmp_path / "r.json"
    assert main(["train", GCN, "--graph", str(tmp_path / "g.mtx"), "--features", str(tmp_path / "x.npy"),
                 "--labels", str(tmp_path / "y.npy"), "--epochs", "2", "--json", str(out), "-q"]) == 0
    r = json.loads(out.read_text())
    assert r["dataset"]["features"] == 5 and r["dataset"]["classes"] == 3


@pytest.mark.mpi
def test_mpiexec_np2_reproduces_single_process(tmp_path):
    one, two = tmp_path / "1.json", tmp_path / "2.json"
    args = [DSPLA, "train", GCN, *SBM, "--epochs", "3", "-q", "--plan", "p2p1d"]
    subprocess.run(args + ["--json", str(one)], check=True, timeout=300)
    p = subprocess.run(args + ["--np", "2", "--json", str(two)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    r1, r2 = json.loads(one.read_text()), json.loads(two.read_text())
    assert r2["P"] == 2 and r2["plan"] == "p2p1d" and r2["comm"]["words_sent_max"] > 0
    np.testing.assert_allclose([e["loss"] for e in r2["epochs"]], [e["loss"] for e in r1["epochs"]], atol=1e-12)
    assert r2["test_accuracy"] == r1["test_accuracy"]
    assert "test accuracy" in p.stdout


@pytest.mark.mpi
def test_demo_runs_small(tmp_path):
    """By default the demo says what it trains on, then the epochs, then a summary: nothing of the
    program, the plan or the cost model's provenance before the first epoch; --explain adds them."""
    p = subprocess.run([DSPLA, "demo", "--nodes", "3000", "--epochs", "2"], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    before = p.stderr[:p.stderr.index("epoch 1/2")].splitlines()
    assert 1 <= len(before) <= 40 and before[0].startswith("dspla demo: the 2-layer GCN")
    assert "epoch 2/2" in p.stderr and "distributed plan" not in p.stderr and "program(" not in p.stderr
    for internal in ("sandbox", "commit", "shipped default", "cost model", "re-launching"):
        assert internal not in p.stdout + p.stderr, internal
    assert "final accuracy" in p.stdout and "words sent on average" in p.stdout and "by p2p1d" in p.stdout
    p = subprocess.run([DSPLA, "demo", "--nodes", "3000", "--epochs", "1", "--np", "1", "--explain"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "distributed plan for P = 1" in p.stderr and "program(" in p.stderr
    # the program dspla builds itself points at the dspla line that wrote each value (there is
    # no user frame: below dspla's are only the interpreter's own, runpy's)
    out = p.stdout + p.stderr
    assert "<frozen" not in out and "# dspla/models/gcn.py:" in out
