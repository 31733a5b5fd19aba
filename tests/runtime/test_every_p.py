"""Programs valid on one process that failed or differed on more (each checked against a hand
computed answer, on 1 to 4 simulated ranks): an output that reads no sparse input while the
program declares one, empty graphs, rows of nothing, and pieces of no rows."""
from __future__ import annotations

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.kernels.buffers import take

from harness import run_dist


def both(f, inputs: dict, P: int, **options) -> dict:
    """The outputs on P simulated ranks (P = 1: the one-process call), as whole Arrays."""
    return f(**inputs) if P == 1 else run_dist(f, inputs, P, **options)[0]


@pytest.mark.parametrize("P", [1, 2, 4])
@pytest.mark.parametrize("spmd", [True, False])
def test_an_output_that_reads_no_sparse_input(P, spmd):
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    f = dp.function({"t1": X + X}, inputs=[A, X])
    x = np.arange(12.0).reshape(6, 2)
    out = both(f, {"A": sp.random_array((6, 6), density=0.3, random_state=1, format="csr"), "X": x}, P, spmd=spmd)
    assert np.array_equal(out["t1"].to_numpy(), 2 * x)


@pytest.mark.parametrize("P", [1, 2, 3])
@pytest.mark.parametrize("with_product", [False, True])
def test_softmax_of_an_empty_graph(P, with_product):
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    f = dp.function({"S": dp.softmax(A), **({"T": A @ X} if with_product else {})}, inputs=[A, X])
    out = both(f, {"A": sp.csr_array((0, 0)), "X": np.zeros((0, 3))}, P)
    assert out["S"].shape == (0, 0) and out["S"].nvals == 0
    assert not with_product or out["T"].shape == (0, 3) and out["T"].nvals == 0


@pytest.mark.parametrize("P", [1, 3])
def test_reductions_over_no_rows_and_products_over_no_columns(P):
    """B has 2 rows for 3 ranks (one holds none); Y has no columns: sum of nothing is missing,
    not 0, and a product through an empty inner dim has no entries."""
    B = dp.sparse("B", ("n", "m"), dtype="int64")
    Y = dp.dense("Y", ("m", "f"))
    f = dp.function({"c": dp.reduce(B, "plus", "cols"), "r": dp.reduce(Y, "min", "rows"),
                     "p": dp.mxm(B, dp.reduce(Y, "min", "rows"), "plus_first")})
    b = sp.csr_array((np.array([5]), (np.array([1]), np.array([2]))), shape=(2, 3))
    out = both(f, {"B": b, "Y": np.zeros((3, 0))}, P)
    rows, cols, vals = out["c"].to_coo()
    assert (rows.tolist(), cols.tolist(), vals.tolist()) == ([0], [2], [5])
    assert out["r"].shape == (3, 1) and out["r"].nvals == 0
    assert out["p"].shape == (2, 1) and out["p"].nvals == 0


def test_no_rows_of_a_uniform_matrix_is_empty():
    """SuiteSparse gives no rows of a matrix whose values are all one (iso) as a 'full' matrix of
    no entries, whose reductions then have entries: ``take`` makes such a piece new."""
    M = gb.Matrix.from_coo([0, 1], [2, 0], 5, nrows=2, ncols=3)
    for piece in (take(M, rows=np.zeros(0, np.int64)), take(M, cols=np.zeros(0, np.int64)),
                  take(M, cols=slice(3, None))):
        assert piece.nvals == 0
        assert piece.reduce_columnwise(gb.monoid.plus).new().nvals == 0
        assert piece.reduce_rowwise(gb.monoid.plus).new().nvals == 0
    assert take(M, rows=np.array([1])).to_coo()[1].tolist() == [0]


@pytest.mark.parametrize("n, P, plan", [(n, P, plan) for plan in ("15d", "shift1d", "2d")
                                         for n, P in ((1, 2), (1, 3), (2, 3), (3, 4), (1, 4))
                                         if plan != "2d" or P == 4])   # (2d runs on a square P only)
def test_fewer_rows_than_processes_in_the_block_plans(n, P, plan):
    """A rank owning no rows: its column block of A is empty, a product over an inner dim of 0
    that SuiteSparse refuses to accumulate (it adds nothing: it is skipped)."""
    A = dp.sparse("A", ("n", "n"))
    v = dp.dense("v", ("n", "k"))
    f = dp.function({"t": dp.mxm(A, v, "max_min")})
    a, x = sp.csr_array(np.arange(1.0, n * n + 1).reshape(n, n)), np.arange(1.0, n + 1).reshape(n, 1)
    want = np.minimum(a.toarray(), x.T).max(axis=1)   # max over k of min(A[i, k], v[k])
    assert np.array_equal(both(f, {"A": a, "v": x}, P, plan=plan, partition="block")["t"].to_numpy().ravel(), want)


@pytest.mark.parametrize("P", [1, 2, 3])
@pytest.mark.parametrize("axis", ["rows", "cols"])
def test_a_reduction_over_no_entries_of_an_iso_value_is_missing(P, axis):
    # B ⊙pair B is iso-valued (every entry 1). A rank of no rows reduces a 0 x 3 piece of it by
    # columns (P = 2, 3 with one row), and a 1 x 0 B reduces by rows over no columns: nothing to
    # reduce, so nothing present (SuiteSparse 9.4 gave such an iso matrix's reduction an entry
    # in every row or column). By hand: B = [. 1 .] reduces by columns to [. 1 .]; by rows, no entry.
    shape = (1, 3) if axis == "cols" else (1, 0)
    B = sp.csr_array(([True], ([0], [1])), shape=shape) if axis == "cols" else sp.csr_array(shape, dtype=bool)
    b = dp.sparse("B", ("n", shape[1]), dtype="bool")
    f = dp.function({m: dp.reduce(dp.ewise_mult(b, b, "pair"), m, axis) for m in ("min", "lor")}, inputs=[b])
    for m, r in both(f, {"B": B}, P, plan="p2p1d").items():
        want = {(0, 1): True} if axis == "cols" else {}
        got = r.to_coo()
        assert {(int(i), int(j)): bool(v) for i, j, v in zip(*got)} == want, (m, got)


@pytest.mark.parametrize("P", [2, 3])
def test_a_product_of_no_columns_moves_between_ranks(P):
    # A ⊕.⊗ X with X of n x 0 (f = 0) is n x 0, and a second product moves rows of it: a pack of
    # rows with no columns (it raised in numpy's take). By hand: nothing present, shape (3, 0)
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"), dtype="int64")
    t0 = dp.mxm(A, X, "plus_times")
    f = dp.function({"t": dp.mxm(A, t0, "max_times")}, inputs=[A, X])
    a = sp.csr_array(([-1.0, 0.0], ([2, 0], [0, 1])), shape=(3, 3))
    out = both(f, {"A": a, "X": np.zeros((3, 0), np.int64)}, P, plan="p2p1d")
    assert out["t"].shape == (3, 0) and out["t"].nvals == 0
