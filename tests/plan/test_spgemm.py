"""Sparse x sparse products (A @ A, a triangle count's masked L·L) distributed: every plan that
runs them equals scipy's product (an independent oracle) exactly, on integers, at every P."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.frontend.parser import parse

from harness import run_dist


def _graph(n: int, density: float, seed: int) -> sp.csr_array:
    A = sp.random_array((n, n), density=density, format="csr", random_state=seed)
    A.data = np.random.default_rng(seed).integers(1, 5, A.nnz).astype(np.float64)
    return A


def _entries(M) -> tuple:
    C = sp.csr_array(M)
    C.sum_duplicates()
    C.sort_indices()
    return C.indptr.tolist(), C.indices.tolist(), C.data.tolist()


def _square():
    A = dp.sparse("A", ("n", "n"))
    return dp.function({"C": A @ A}, inputs=[A])


def _masked():
    A = dp.sparse("A", ("n", "n"), dtype="int64")
    L = dp.select(A, "tril", -1)
    return dp.function({"T": dp.mxm(L, L, "plus_times", mask=L, structure=True)}, inputs=[A])


CASES = [("p2p1d", 2), ("p2p1d", 3), ("p2p1d", 4), ("summa2d_sparse", 4), ("summa2d_sparse", 6),
         ("spgemm3d", 2), ("spgemm3d", 4), ("spgemm3d", 6)]


@pytest.mark.parametrize("plan,P", CASES)
def test_a_times_a_equals_scipy(plan, P):
    A = _graph(90, 0.05, P)
    got, stats = run_dist(_square(), {"A": A}, P, plan=plan)
    want = A @ A
    assert _entries(got["C"].to_scipy()) == _entries(want)
    assert stats["products"][0]["plan"] == plan


@pytest.mark.parametrize("plan,P", [c for c in CASES if c[1] in (2, 4, 6)])
def test_masked_product_equals_scipy(plan, P):
    A = _graph(80, 0.08, 10 + P)
    A = (A + A.T).astype(np.int64)
    got, _ = run_dist(_masked(), {"A": A}, P, plan=plan)
    L = sp.tril(A, -1, format="csr")
    want = (L @ L).multiply(L != 0)   # the product inside L's pattern (no entry outside it)
    want = sp.csr_array(want)
    want.eliminate_zeros()
    g = sp.csr_array(got["T"].to_scipy())
    assert _entries(g) == _entries(want)


@pytest.mark.parametrize("spmd", [True, False])
def test_p2p1d_words_measured_equal_predicted(spmd):
    """A static sparse B: every message's entries are known at planning (under SPMD planning by
    one exchange of counts), so the words predicted are the words moved."""
    A = _graph(120, 0.04, 7)
    _, stats = run_dist(_square(), {"A": A}, 4, plan="p2p1d", spmd=spmd)
    p = stats["products"][0]
    assert p["predicted"]["words"] == p["words_sent_total"] > 0


def test_summa2d_sparse_grid_and_skips():
    from dspla.plan.plans.spgemm2d import grid
    assert [grid(P) for P in (4, 6, 8, 9, 12)] == [(2, 2), (2, 3), (2, 4), (3, 3), (3, 4)]
    f = _square()
    text = f.explain(np=2, A=_graph(40, 0.1, 1))
    assert "summa2d_sparse skipped: no grid of at least 2 x 2 for P=2" in text


@pytest.mark.parametrize("plan,P", [("summa2d_sparse", 4), ("spgemm3d", 4), ("spgemm3d", 2)])
def test_rank0_planning_and_min_plus(plan, P):
    """The layers' partial products combine by the semiring's monoid (min here); planned on rank 0
    too. Oracle: dense numpy over the present pairs only (a missing entry is not a zero)."""
    A = _graph(50, 0.08, 3)
    X = dp.sparse("A", ("n", "n"))
    f = dp.function({"C": dp.mxm(X, X, "min_plus")}, inputs=[X])
    got, _ = run_dist(f, {"A": A}, P, plan=plan, spmd=False)
    D = A.toarray()
    pres = D != 0
    pairs = pres[:, :, None] & pres[None, :, :]
    vals = np.where(pairs, D[:, :, None] + D[None, :, :], np.inf).min(axis=1)
    G = got["C"].to_numpy(fill=np.nan)
    assert np.array_equal(~np.isnan(G), pairs.any(axis=1))
    assert np.array_equal(G[pairs.any(axis=1)], vals[pairs.any(axis=1)])


CLOSURE = """
input A : sparse[n, n]
R = cast(A, bool)
C = R
grew = reduce_all(C, lor)
while grew max n {
  new = ewise_add(C, mxm(C, R, lor_land), lor)
  grew = reduce_all(cast(new, int64)) > reduce_all(cast(C, int64))
  C = new
}
output C
"""


@pytest.mark.parametrize("P", [2, 4])
def test_transitive_closure_fetches_rows_never_gathers_the_graph(P):
    """C = C lor (C lor.land R) in a loop: C is carried, R fixed; R's rows are fetched by need, one
    owner at a time, so no rank holds R whole. Oracle: scipy's reachability (csgraph)."""
    from scipy.sparse.csgraph import breadth_first_order
    A = sp.random_array((60, 60), density=0.03, format="csr", random_state=5)
    f = dp.Function(parse(CLOSURE))
    got, stats = run_dist(f, {"A": A}, P)
    want = np.zeros((60, 60), dtype=bool)
    for s in range(60):   # paths of length >= 1
        for t in A.indices[A.indptr[s]:A.indptr[s + 1]]:
            want[s, breadth_first_order(A, t, return_predecessors=False)] = True
    assert np.array_equal(got["C"].present(), want)
    # R's rows fetched every iteration, at most the entries the other ranks hold (gathered whole,
    # once, R would have cost (P - 1) x its entries and every rank its whole size)
    loop = stats["loops"][0]
    assert loop["loop_words_predicted"] == "at most"
    assert 0 < max(loop["words_per_iteration"]) <= loop["words_predicted_per_iteration"]
    assert "one owner at a time (FetchMxM); it is never gathered whole" in f.explain(np=P, A=A)
    assert (P - 1) * A.nnz <= loop["words_predicted_per_iteration"] <= (P - 1) * A.nnz + 16 * P   # (+ the condition's)


def test_rows_split_by_work_for_sparse_products():
    """A @ A's rows are split so that each process holds about as much of the output: a graph
    whose first rows are its hubs gets fewer of them on the first process than equal rows would."""
    from dspla.plan.partitioning import block_by_work
    rng = np.random.default_rng(0)
    n = 400
    deg = np.maximum(1, (200 / (1 + np.arange(n))).astype(int))   # row i links to deg[i] random nodes
    rows = np.repeat(np.arange(n), deg)
    A = sp.csr_array((np.ones(rows.size), (rows, rng.integers(0, n, rows.size))), shape=(n, n))
    A = sp.csr_array(((A + A.T) != 0).astype(float))
    parts, info = block_by_work(A, 4)
    assert np.all(np.diff(parts) >= 0) and set(parts) == {0, 1, 2, 3}   # consecutive blocks
    out = np.diff(sp.csr_array(A @ A).indptr)   # the exact output entries per row
    by_work = np.bincount(parts, weights=out, minlength=4)
    by_rows = np.bincount(np.arange(n) * 4 // n, weights=out, minlength=4)
    assert by_work.max() / by_work.mean() < by_rows.max() / by_rows.mean()
    assert by_work.max() / by_work.mean() < 1.35


def test_a_product_of_empty_sparse_values_is_split_by_work_on_every_P():
    """A @ A over a dim of size 0 (found by the held-out program campaign): the split by work has
    no rows to cut, and every P gives the empty result."""
    from dspla.plan.partitioning import block_by_work
    parts, info = block_by_work(sp.csr_array((0, 0)), 4)
    assert parts.shape == (0,) and info["method"] == "block-by-work"
    a = dp.sparse("A", ("n", "n"))
    f = dp.function({"C": a @ a})
    for P in (2, 3):
        got, _ = run_dist(f, {"A": sp.csr_array((0, 0))}, P)
        assert got["C"].shape == (0, 0) and got["C"].nvals == 0
