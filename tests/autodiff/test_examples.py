"""The autodiff examples: the gradient of a shortest-path distance is the indicator of the path's
edges (networkx), on 1, 2 and 4 processes; the forward-only GCN's gradients equal the hand-written
step's on Cora at P = 1, 2, 4 with the same products and words per step."""
from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.frontend.parser import parse_file
from dspla.ir import Op
from dspla.models import load_node_data
from dspla.models.program import differentiate
from dspla.models.trainer import glorot

from conftest import dataset
from harness import run_dist

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

from sssp_grad import path_gradient, sssp_grad_function, unit  # noqa: E402


def _graph(n=40, seed=0):
    rng = np.random.default_rng(seed)
    W = sp.random_array((n, n), density=3.0 / n, random_state=rng, format="csr")
    W.data[:] = rng.uniform(0.5, 2.0, W.nnz)      # continuous lengths: shortest paths are unique
    W.setdiag(0)
    W.eliminate_zeros()
    return sp.csr_array(W)


def _pattern(M):
    c = sp.coo_array(M)        # stored entries, explicit zeros included
    return sorted(zip(c.row.tolist(), c.col.tolist()))


def test_shortest_path_gradient_is_the_path_indicator():
    W = _graph()
    G = nx.from_scipy_sparse_array(W, create_using=nx.DiGraph)
    lengths = nx.single_source_dijkstra_path_length(G, 0)
    rounds = 12     # relaxations: enough for every path here (checked below)
    f = sssp_grad_function(rounds)
    checked = 0
    for target in range(1, 24):
        dist, dW = path_gradient(W, 0, target, f=f)
        assert _pattern(dW) == _pattern(W)            # a gradient on every edge, and only there
        if target not in lengths:
            assert not np.isfinite(dist) and not dW.toarray().any()
            continue
        path = nx.dijkstra_path(G, 0, target)
        assert len(path) - 1 <= rounds
        want = np.zeros(W.shape)
        for u, v in zip(path[:-1], path[1:]):
            want[u, v] = 1.0
        assert dist == pytest.approx(lengths[target], rel=1e-12)
        np.testing.assert_array_equal(dW.toarray(), want)
        checked += 1
    assert checked >= 10


def test_shortest_path_gradient_on_every_process_count():
    W = _graph(n=30, seed=3)
    f = sssp_grad_function(12)
    inputs = {"W": W, "s": unit(30, 0), "t": unit(30, 7)}
    one = f(**inputs)
    for P in (2, 4):
        got, _ = run_dist(f, inputs, P)
        np.testing.assert_array_equal(got["dW"].to_numpy(fill=-1), one["dW"].to_numpy(fill=-1))


def test_max_aggregation_gradients_on_every_process_count():
    """max_plus aggregation over a graph (winners computed per rank's rows, B gathered; the
    cotangent of B summed over ranks): the same gradients at P = 1, 2, 4."""
    rng = np.random.default_rng(5)
    n, f, h = 60, 6, 4
    A = dp.sparse("A", ("n", "n"))
    X, Y = dp.dense("X", ("n", "f")), dp.dense("Y", ("n", h))
    W = dp.param("W", ("f", h))
    Z = dp.mxm(A, X @ W, "max_plus")
    loss = dp.reduce_all(dp.log_softmax(Z) * Y)
    f_ = dp.function({"loss": loss, "dW": dp.grad(loss, W)})
    a = sp.random_array((n, n), density=0.08, random_state=rng, format="csr")
    a.data[:] = rng.uniform(0.1, 1.0, a.nnz)
    inputs = {"A": sp.csr_array(a), "X": rng.normal(size=(n, f)), "Y": rng.uniform(size=(n, h)),
              "W": rng.normal(size=(f, h))}
    one = f_(**inputs)
    for P in (2, 4):
        got, _ = run_dist(f_, inputs, P)
        np.testing.assert_allclose(got["dW"].to_numpy(), one["dW"].to_numpy(), rtol=1e-12, atol=1e-14)


def test_edge_weight_gradient_sddmm_on_every_process_count():
    """The gradient with respect to a sparse parameter (edge weights) is the sampled product
    (G Hᵀ) on its pattern: a masked product; the same at P = 1, 2, 4, and equal to numpy."""
    rng = np.random.default_rng(8)
    n, f, h = 50, 5, 3
    Wg = dp.param("Wg", ("n", "n"), kind="sparse")
    X, Y = dp.dense("X", ("n", "f")), dp.dense("Y", ("n", h))
    W = dp.param("W", ("f", h))
    H = X @ W
    loss = dp.reduce_all((Wg @ H) * Y)
    dWg, dW = dp.grad(loss, Wg, W)
    f_ = dp.function({"dWg": dWg, "dW": dW})
    a = sp.random_array((n, n), density=0.1, random_state=rng, format="csr")
    inputs = {"Wg": sp.csr_array(a), "X": rng.normal(size=(n, f)), "Y": rng.normal(size=(n, h)),
              "W": rng.normal(size=(f, h))}
    one = f_(**inputs)
    Hn = inputs["X"] @ inputs["W"]
    want = (inputs["Y"] @ Hn.T) * (a.toarray() != 0)           # G Hᵀ on Wg's pattern (G = Y)
    np.testing.assert_allclose(one["dWg"].to_numpy(fill=0), want, rtol=1e-12, atol=1e-12)
    assert one["dWg"].nvals == a.nnz
    for P in (2, 4):
        got, _ = run_dist(f_, inputs, P)
        for k in ("dWg", "dW"):
            np.testing.assert_allclose(got[k].to_numpy(fill=0), one[k].to_numpy(fill=0), rtol=1e-12, atol=1e-13)


# ------------------------------------------------------------------------------ the GCN
@pytest.fixture(scope="module")
def cora_case():
    d = load_node_data("cora", data_dir=str(dataset("planetoid")))
    rng = np.random.default_rng(0)
    f, h, c = d.features.shape[1], 16, d.n_classes
    return {"A": d.adjacency, "X": d.features, "Y": d.one_hot(), "T": d.weights(d.train_idx),
            "seed": np.array([[4]]), "W1": glorot((f, h), rng), "W2": glorot((h, c), rng)}


HAND = parse_file(str(ROOT / "examples" / "gcn.dspla"))
AUTO = differentiate(parse_file(str(ROOT / "examples" / "gcn_auto.dspla")))


def test_forward_only_program_gets_its_gradients():
    assert [k for k, _ in AUTO.outputs] == ["loss", "logits", "dW1", "dW2"]
    assert differentiate(HAND) is HAND            # hand-written gradients are kept


@pytest.mark.parametrize("P", [1, 2, 4])
def test_generated_gcn_gradients_equal_the_hand_written_ones(cora_case, P):
    hand, auto = dp.Function(HAND), dp.Function(AUTO)
    if P == 1:
        a, b = hand(**cora_case), auto(**cora_case)
        sa = sb = None
    else:
        (a, sa), (b, sb) = run_dist(hand, cora_case, P), run_dist(auto, cora_case, P)
    for k in ("loss", "logits", "dW1", "dW2"):
        x, y = a[k].to_numpy(fill=0.0), b[k].to_numpy(fill=0.0)
        assert np.abs(x - y).max() <= 1e-12, k
    assert b["dW1"].is_full and b["dW2"].is_full
    # after the passes: no more products than the hand-written step, and no more words per step
    count = lambda f: sum(n.op is Op.MXM for n in f.program.toposort())   # noqa: E731
    assert count(auto) == count(hand) == 9
    if P > 1:
        assert len(sb["products"]) == len(sa["products"]) == 4
        assert sb["words_sent_total"] == sa["words_sent_total"] > 0
        assert sb["messages_sent_total"] == sa["messages_sent_total"]


@pytest.mark.mpi
def test_sssp_grad_script_under_mpiexec_prints_what_one_process_prints():
    import os
    import subprocess
    script = [sys.executable, str(ROOT / "examples" / "sssp_grad.py"), "--scale", "6"]
    env = {**os.environ, "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"}
    one = subprocess.run(script, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT / "examples")
    two = subprocess.run([str(Path(sys.executable).parent / "mpiexec"), "-n", "2", *script], capture_output=True,
                         text=True, timeout=300, env=env, cwd=ROOT / "examples")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    assert "d(distance)/d(weight) is 1 on" in one.stdout and two.stdout == one.stdout
