"""The sampled dense-dense product (SDDMM) on P processes (plan/sampled.py): C = (G Bᵀ) on M's
entries, M a sparse parameter (edge weights: its pattern read at planning) or the static graph.
Checked against a dense numpy oracle with GraphBLAS semantics (an entry exists only where M has
one, and only when some term has both operands present), against one process for P = 1..4,
its words against a count from the pattern and the partition (and against the SpMM M @ B under
p2p1d in the same run), and an edge-weight gradient against central differences through the
whole distributed path."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession

from harness import gather, run_dist

N, K = 40, 3


def _pattern(seed: int, n: int = N, density: float = 0.12) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    M = sp.random_array((n, n), density=density, random_state=rng, format="csr")
    M.data[:] = rng.uniform(0.5, 2.0, M.nnz)
    M.data[M.indptr[3]:M.indptr[4]] = 0         # an empty row: no entries, nothing to compute
    M.eliminate_zeros()
    return sp.csr_array(M)


def _oracle(G: np.ndarray, B: np.ndarray, M: sp.csr_array, Bpresent: np.ndarray | None = None):
    """(values, present) of (G Bᵀ)<M.S> by dense numpy: a term G[i,k] B[j,k] counts only where
    B[j,k] is present; an entry of C exists where M has one and some term exists."""
    Bp = np.ones(B.shape, bool) if Bpresent is None else Bpresent
    vals = G @ np.where(Bp, B, 0.0).T
    present = (M.toarray() != 0) & ((np.ones(G.shape) @ Bp.T.astype(float)) > 0)
    return np.where(present, vals, 0.0), present


def _sddmm_function(static_mask: bool, missing: bool = False):
    M = dp.sparse("M", ("n", "n")) if static_mask else dp.param("M", ("n", "n"), kind="sparse")
    G, B = dp.dense("G", ("n", K)), dp.dense("B", ("n", K))
    Bu = dp.select(B, ">", 0) if missing else B       # missing entries in B: GraphBLAS semantics
    return dp.function({"C": dp.mxm(G, Bu.T, mask=M, structure=True)})


@pytest.mark.parametrize("static_mask", [False, True], ids=["param-pattern", "static-graph"])
@pytest.mark.parametrize("missing", [False, True], ids=["full", "missing-entries"])
def test_sddmm_equals_the_oracle_and_one_process_for_every_P(static_mask, missing):
    rng = np.random.default_rng(1)
    M, G, B = _pattern(2), rng.normal(size=(N, K)), rng.normal(size=(N, K))
    f = _sddmm_function(static_mask, missing)
    inputs = {"M": M, "G": G, "B": B}
    want, present = _oracle(G, B, M, B > 0 if missing else None)
    one = f(**inputs)["C"]
    assert np.array_equal(one.present(), present)
    np.testing.assert_allclose(one.to_numpy(fill=0), want, rtol=1e-12, atol=1e-14)
    for P in (1, 2, 3, 4):
        got, stats = run_dist(f, inputs, P)
        assert np.array_equal(got["C"].present(), present), P
        np.testing.assert_allclose(got["C"].to_numpy(fill=0), one.to_numpy(fill=0), rtol=1e-13, atol=1e-15)
        if P > 1:
            assert [p["plan"] for p in stats["products"]] == ["p2p1d-sddmm"]


def _words_from_pattern(M: sp.csr_array, parts: np.ndarray, P: int, K: int) -> tuple[int, int]:
    """(words, messages) of exchanging B's rows: rank r receives B's row j once for every column
    j its rows of M name that another rank owns; one message per (owner, r) pair."""
    words = messages = 0
    C = sp.coo_array(M)
    for r in range(P):
        cols = np.unique(C.col[parts[C.row] == r])
        far = cols[parts[cols] != r]
        words += far.size * K
        messages += np.unique(parts[far]).size
    return words, messages


@pytest.mark.parametrize("P", [2, 3, 4])
def test_sddmm_moves_what_the_spmm_moves_and_what_was_predicted(P):
    """In one program: the SpMM A @ B under p2p1d and the SDDMM (G Bᵀ) on A's entries. Both move
    the same rows of B: equal words and messages, equal to the count from the pattern and the
    partition, and measured == predicted for the SDDMM."""
    rng = np.random.default_rng(4)
    A_ = _pattern(5, n=60)
    A, G, B = dp.sparse("A", ("n", "n")), dp.dense("G", ("n", K)), dp.dense("B", ("n", K))
    f = dp.function({"Y": A @ B, "C": dp.mxm(G, B.T, mask=A, structure=True)})
    inputs = {"A": A_, "G": rng.normal(size=(60, K)), "B": rng.normal(size=(60, K))}
    parts = f.plan(P, inputs, Options(plan="p2p1d")).plan.dims["n"].parts
    _, stats = run_dist(f, inputs, P, plan="p2p1d")
    by_plan = {p["plan"]: p for p in stats["products"]}
    spmm, sddmm = by_plan["p2p1d"], by_plan["p2p1d-sddmm"]
    words, messages = _words_from_pattern(A_, parts, P, K)
    assert words > 0
    assert sddmm["words_sent_total"] == spmm["words_sent_total"] == words
    assert sddmm["messages_sent_total"] == spmm["messages_sent_total"] == messages
    assert sddmm["predicted"]["words"] == sddmm["words_sent_total"]
    text = f.explain(P, options={"plan": "p2p1d"}, **inputs)
    assert "sddmm[plus_times](G, Bᵀ) on A's entries" in text and "p2p1d-sddmm" in text


def _gnn_loss_and_grad():
    """Two rounds of aggregation with learned edge weights: the edge-weight gradient is the sum of
    two sampled products, one with a non-trivial cotangent (through relu and log_softmax)."""
    Wg = dp.param("Wg", ("n", "n"), kind="sparse")
    X, Y = dp.dense("X", ("n", "f")), dp.dense("Y", ("n", K))
    W = dp.param("W", ("f", K))
    Z = Wg @ dp.relu(Wg @ (X @ W))
    loss = -dp.reduce_all(dp.log_softmax(Z) * Y) / 10.0
    return dp.function({"loss": loss, "dWg": dp.grad(loss, Wg)})


def test_edge_weight_gradient_by_finite_differences_on_p_processes():
    """dWg from the distributed plan (P = 3: sampled products with the p2p1d send sets) against
    central differences of the distributed loss; the perturbed calls keep the plan (same pattern),
    a new pattern makes a new one."""
    rng = np.random.default_rng(6)
    n, fdim = 24, 4
    Wg = _pattern(7, n=n, density=0.15)
    X, Y = rng.normal(size=(n, fdim)), np.eye(K)[rng.integers(0, K, n)]
    W = rng.normal(size=(fdim, K))
    f = _gnn_loss_and_grad()
    picks = rng.choice(Wg.nnz, size=6, replace=False)
    other = _pattern(8, n=n, density=0.15)     # another pattern: planned again, still right
    eps = 1e-6

    def body(comm):
        s = DistSession(f.compiled, comm, Options())
        root = comm.rank == 0

        def run(data):
            out = gather(s.run({"Wg": data, "X": X, "Y": Y, "W": W} if root else None))
            return out, s.last_stats

        out, stats = run(Wg)
        plans = [p["plan"] for p in stats["products"]] if root else None
        fd, replanned = [], []
        for e in picks:
            losses = []
            for sign in (1, -1):
                Wp = Wg.copy()
                Wp.data[e] += sign * eps
                o, st = run(Wp)
                losses.append(o["loss"].to_numpy()[0, 0])
                replanned.append(root and st["planning_s"] > 0)
            fd.append((losses[0] - losses[1]) / (2 * eps))
        o2, st2 = run(other)
        return out, plans, fd, replanned, o2, root and st2["planning_s"] > 0

    out, plans, fd, replanned, o2, replanned_other = run_simulated(3, body, timeout=120)[0]
    assert "p2p1d-sddmm" in plans
    assert not any(replanned) and replanned_other
    g = out["dWg"].to_numpy(fill=0)
    coo = sp.coo_array(Wg)
    assert np.array_equal(out["dWg"].present(), Wg.toarray() != 0)
    np.testing.assert_allclose(g[coo.row[picks], coo.col[picks]], fd, rtol=1e-6, atol=1e-8)
    ref = f(Wg=other, X=X, Y=Y, W=W)
    np.testing.assert_allclose(o2["dWg"].to_numpy(fill=0), ref["dWg"].to_numpy(fill=0), rtol=1e-12, atol=1e-14)


SCRIPT = """
import numpy as np, scipy.sparse as sp
import dspla as dp
from mpi4py import MPI
rng = np.random.default_rng(3)
M = sp.random_array((50, 50), density=0.1, random_state=rng, format="csr")
G, B = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
Mx = dp.param("M", ("n", "n"), kind="sparse")
f = dp.function({"C": dp.mxm(dp.dense("G", ("n", 3)), dp.dense("B", ("n", 3)).T, mask=Mx, structure=True)})
C = f(M=M, G=G, B=B)["C"].to_numpy(fill=0)
st = f.last_stats
if MPI.COMM_WORLD.rank == 0:
    want = (G @ B.T) * (M.toarray() != 0)
    p = st["products"][0]
    assert np.allclose(C, want, rtol=1e-12, atol=1e-14), abs(C - want).max()
    assert p["plan"] == "p2p1d-sddmm" and p["words_sent_total"] == p["predicted"]["words"] > 0, p
    print("OK", st["P"], p["words_sent_total"])
"""


@pytest.mark.mpi
def test_sddmm_under_mpiexec(tmp_path):
    (tmp_path / "s.py").write_text(SCRIPT)
    mpiexec = str(Path(sys.executable).parent / "mpiexec")
    r = subprocess.run([mpiexec, "-n", "2", sys.executable, str(tmp_path / "s.py")], capture_output=True, text=True,
                       timeout=180, env={**os.environ, "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    assert r.returncode == 0, r.stderr
    assert "OK 2" in r.stdout
