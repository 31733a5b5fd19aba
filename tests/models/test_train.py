"""Training: P = 1 and P = 2 (simulated ranks) give the same run on Cora, the loss decreases;
optimizers against hand computations; checkpoints are atomic and resuming continues the run."""
from __future__ import annotations

import os

import numpy as np
import pytest

from dspla.frontend.parser import parse_file
from dspla.models import SGD, Adam, TrainConfig, Trainer, load_node_data
from dspla.models import checkpoint as ckpt
from dspla.models.data import NodeData
from dspla.runtime.comm.sim import run_simulated

from . import oracle
from conftest import ROOT, dataset

GCN = parse_file(str(ROOT / "examples" / "gcn.dspla"))


def _fit(data, cfg, P):
    def body(comm):
        return Trainer(GCN, data if comm.rank == 0 else None, cfg, comm).fit()
    return run_simulated(P, body, timeout=300)[0]


@pytest.fixture(scope="module")
def cora():
    return load_node_data("cora", data_dir=str(dataset("planetoid")))


def test_cora_p1_equals_p2_and_loss_decreases(cora):
    cfg = TrainConfig(epochs=8, seed=3, progress=False, plan="p2p1d")
    r1, r2 = _fit(cora, cfg, 1), _fit(cora, cfg, 2)
    l1 = [e["loss"] for e in r1["epochs"]]
    l2 = [e["loss"] for e in r2["epochs"]]
    np.testing.assert_allclose(l2, l1, rtol=0, atol=1e-12)
    assert np.abs(r1["logits"] - r2["logits"]).max() <= 1e-10
    assert np.array_equal(r1["logits"].argmax(1), r2["logits"].argmax(1))
    assert l1[-1] < l1[0] - 0.05 and r1["val_loss"] < r1["epochs"][0]["val_loss"]
    assert r2["P"] == 2 and r2["comm"]["words_sent_total"] > 0 and r1["comm"]["words_sent_total"] == 0
    assert r1["test_accuracy"] > 0.35         # 8 epochs of Adam already beat chance (1/7) by far


def _tiny(seed=0, n=60):
    case = oracle.random_problem(n=n, f=8, h=4, c=3, seed=seed)
    import scipy.sparse as sp
    labels = case["Y"].argmax(1)
    idx = np.random.default_rng(seed).permutation(n)
    return NodeData(case["A"], sp.csr_array(case["X"]), labels, np.sort(idx[:20]), np.sort(idx[20:40]),
                    np.sort(idx[40:]), "tiny")


def test_adam_and_sgd_match_hand_computation():
    w = {"W": np.array([[1.0, -2.0]])}
    g = {"W": np.array([[0.5, 0.25]])}
    a = Adam(0.1, {"W": 0.01})
    a.step(w, g)
    gg = g["W"] + 0.01 * np.array([[1.0, -2.0]])
    m, v = 0.1 * gg, 0.001 * gg ** 2
    want = np.array([[1.0, -2.0]]) - 0.1 * (m / 0.1) / (np.sqrt(v / 0.001) + 1e-8)
    np.testing.assert_allclose(w["W"], want, rtol=1e-15)
    w2 = {"W": np.array([[1.0, -2.0]])}
    s = SGD(0.5, momentum=0.9)
    s.step(w2, g)
    s.step(w2, g)
    np.testing.assert_allclose(w2["W"], np.array([[1.0, -2.0]]) - 0.5 * g["W"] - 0.5 * (0.9 * g["W"] + g["W"]))


def test_checkpoint_resume_continues_the_same_run(tmp_path):
    data = _tiny()
    full = Trainer(GCN, data, TrainConfig(epochs=6, seed=1, progress=False)).fit()
    d = str(tmp_path / "ck")
    Trainer(GCN, data, TrainConfig(epochs=3, seed=1, progress=False, checkpoint=d)).fit()
    meta, arrays = ckpt.load(d)
    assert meta["epoch"] == 3 and "param.W1" in arrays and "opt.m.W1" in arrays
    resumed = Trainer(GCN, data, TrainConfig(epochs=6, seed=1, progress=False, checkpoint=d, resume=True)).fit()
    assert [e["epoch"] for e in resumed["epochs"]] == [1, 2, 3, 4, 5, 6]
    np.testing.assert_allclose([e["loss"] for e in resumed["epochs"]], [e["loss"] for e in full["epochs"]],
                               rtol=0, atol=1e-14)
    np.testing.assert_allclose(resumed["logits"], full["logits"], rtol=0, atol=1e-13)
    # a checkpoint of another configuration is refused with a clear message
    with pytest.raises(Exception, match="different run"):
        Trainer(GCN, data, TrainConfig(epochs=6, seed=2, progress=False, checkpoint=d, resume=True)).fit()


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    d = str(tmp_path)
    ckpt.save(d, {"epoch": 1}, {"w": np.ones(3)})

    def crash(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(np, "savez", crash)
    with pytest.raises(OSError):
        ckpt.save(d, {"epoch": 2}, {"w": np.zeros(3)})
    meta, arrays = ckpt.load(d)
    assert meta["epoch"] == 1 and np.array_equal(arrays["w"], np.ones(3))
    assert os.listdir(d) == ["checkpoint.npz"]      # no temporary file left behind


def test_early_stopping_stops_on_rising_val_loss():
    data = _tiny(seed=2)
    r = Trainer(GCN, data, TrainConfig(epochs=300, lr=0.2, seed=0, progress=False, early_stopping=3)).fit()
    vl = [e["val_loss"] for e in r["epochs"]]
    assert r["stopped_early"] and len(vl) < 300
    assert vl[-1] > np.mean(vl[-4:-1])


def test_minibatch_training_on_sampled_subgraphs():
    import scipy.sparse as sp

    from dspla.models.minibatch import MiniBatchTrainer, Sampler
    data = _tiny(seed=4, n=80)
    s = Sampler(8, "neighbor", (2, 2), pool=data.train_idx)
    rng = np.random.default_rng(0)
    targets = np.sort(rng.choice(data.train_idx, 8, replace=False))
    nodes, S = s.subgraph(data.adjacency, targets, rng)
    assert np.array_equal(nodes[:8], targets) and S.shape == (nodes.size, nodes.size)
    A = sp.csr_array(data.adjacency)
    sub = A[nodes][:, nodes].toarray()
    assert np.all(sub[S.toarray() > 0] > 0)                          # sampled edges are graph edges
    assert np.all((S.toarray() > 0).sum(axis=1)[:8] <= 2)            # fanout respected at the targets
    full = Sampler(8, "node", pool=data.train_idx)
    nodes2, S2 = full.subgraph(A, targets, np.random.default_rng(0))
    np.testing.assert_array_equal(S2.toarray()[:8], (A[nodes2][:, nodes2].toarray() > 0)[:8])  # every neighbour
    cfg = TrainConfig(epochs=4, seed=0, progress=False)
    r1 = MiniBatchTrainer(GCN, data, cfg, batch_size=8).fit()
    assert r1["minibatch"]["batches"] == 4 * 3 and r1["epochs"][-1]["loss"] < r1["epochs"][0]["loss"]

    def body(comm):
        return MiniBatchTrainer(GCN, data if comm.rank == 0 else None, cfg, comm, batch_size=8).fit()
    r2 = run_simulated(2, body, timeout=300)[0]
    np.testing.assert_allclose([e["loss"] for e in r2["epochs"]], [e["loss"] for e in r1["epochs"]], atol=1e-12)
    assert r2["minibatch"]["words_per_batch_avg"] > 0
