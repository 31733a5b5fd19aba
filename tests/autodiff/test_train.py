"""Training forward-only programs: the generated step trains like the hand-written one (same
losses, same accuracy), on one process, simulated ranks and under mpiexec; the GraphSAGE example's
gradients against central differences."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.frontend.parser import parse_file
from dspla.models import TrainConfig, Trainer, load_node_data, set_dropout
from dspla.models.program import differentiate
from dspla.runtime.comm.sim import run_simulated

from conftest import dataset
from harness import central_differences

ROOT = Path(__file__).resolve().parents[2]
DSPLA = str(Path(sys.executable).parent / "dspla")
GCN, GCN_AUTO, SAGE = (str(ROOT / "examples" / f) for f in ("gcn.dspla", "gcn_auto.dspla", "sage_auto.dspla"))


@pytest.fixture(scope="module")
def cora():
    return load_node_data("cora", data_dir=str(dataset("planetoid")))


def _fit(path, data, cfg, P):
    prog = parse_file(path)
    if P == 1:
        return Trainer(prog, data, cfg).fit()
    return run_simulated(P, lambda comm: Trainer(prog, data if comm.rank == 0 else None, cfg, comm).fit(),
                         timeout=300)[0]


@pytest.mark.parametrize("P", [1, 2])
def test_forward_only_gcn_trains_like_the_hand_written_one(cora, P):
    cfg = TrainConfig(epochs=4, seed=1, progress=False)
    hand, auto = _fit(GCN, cora, cfg, P), _fit(GCN_AUTO, cora, cfg, P)
    np.testing.assert_allclose([e["loss"] for e in auto["epochs"]], [e["loss"] for e in hand["epochs"]],
                               rtol=0, atol=1e-12)
    assert auto["test_accuracy"] == hand["test_accuracy"]
    assert auto["comm"]["words_sent_total"] == hand["comm"]["words_sent_total"]


def test_sage_gradients_against_finite_differences():
    rng = np.random.default_rng(2)
    n, f, h, c = 14, 5, 3, 3
    A = sp.random_array((n, n), density=0.2, random_state=rng, format="csr")
    A.data[:] = 1.0
    keep = np.ones(n)
    keep[3] = 0                              # a node without neighbours
    A = sp.csr_array(sp.diags_array(keep) @ A)
    A.eliminate_zeros()
    Y = np.eye(c)[rng.integers(0, c, n)]
    Y[:4] = 0                                # unlabelled rows
    T = np.where(Y.any(1), 1.0 / Y.any(1).sum(), 0.0)[:, None]
    data = {"A": sp.csr_array(A), "X": sp.csr_array(rng.normal(size=(n, f)) * (rng.random((n, f)) < 0.6)),
            "Y": Y, "T": T, "seed": np.array([[3]])}
    params = {"S1": rng.normal(size=(f, h)), "N1": rng.normal(size=(f, h)), "S2": rng.normal(size=(h, c)),
              "N2": rng.normal(size=(h, c))}
    prog = differentiate(set_dropout(parse_file(SAGE), 0.3))   # dropout on: the seed fixes the masks
    fn = dp.Function(prog)
    got = fn(**data, **params)

    def loss(**w):
        return fn(**data, **{**params, **w})["loss"].to_numpy()[0, 0]

    for name, W in params.items():
        num = central_differences(lambda V, name=name: loss(**{name: V}), W)
        np.testing.assert_allclose(got["d" + name].to_numpy(), num, rtol=1e-6, atol=1e-9, err_msg=name)


def test_sage_trains_on_cora(cora):
    r = _fit(SAGE, cora, TrainConfig(epochs=30, seed=0, progress=False, weight_decay_on="all"), 1)
    assert r["epochs"][-1]["loss"] < r["epochs"][0]["loss"] - 0.5 and r["test_accuracy"] > 0.6


@pytest.mark.mpi
def test_forward_only_gcn_under_mpiexec(tmp_path, cora):
    out = {}
    data = ["--dataset", "cora", "--data-dir", str(dataset("planetoid"))]
    for name, prog in (("hand", GCN), ("auto", GCN_AUTO)):
        path = tmp_path / f"{name}.json"
        p = subprocess.run([DSPLA, "train", prog, *data, "--epochs", "3", "-q", "--np", "2", "--json", str(path)],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        out[name] = json.loads(path.read_text())
    hand, auto = out["hand"], out["auto"]
    assert auto["P"] == 2 and auto["comm"]["words_sent_total"] == hand["comm"]["words_sent_total"] > 0
    np.testing.assert_allclose([e["loss"] for e in auto["epochs"]], [e["loss"] for e in hand["epochs"]], atol=1e-12)
    assert auto["test_accuracy"] == hand["test_accuracy"]


def test_dspla_train_differentiates_a_forward_only_file(tmp_path):
    from dspla.cli.main import main
    out = tmp_path / "r.json"
    sbm = ["--dataset", "sbm", "--nodes", "2000", "--feature-dim", "16"]
    assert main(["train", GCN_AUTO, *sbm, "--epochs", "3", "--json", str(out), "-q"]) == 0
    r = json.loads(out.read_text())
    assert len(r["epochs"]) == 3 and np.isfinite(r["final_loss"])


def test_a_program_with_some_gradients_is_not_completed():
    src = Path(GCN).read_text().replace("output loss, logits, dW1, dW2", "output loss, logits, dW1")
    from dspla.frontend.parser import parse
    from dspla.models.program import StepProgramError, check_step
    prog = parse(src)
    assert differentiate(prog) is prog
    with pytest.raises(StepProgramError, match="no output 'dW2'"):
        check_step(differentiate(prog))
