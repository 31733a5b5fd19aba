"""A scipy n x 1 input is held by column, as SuiteSparse holds a vector and dspla's n x 1
values are: held by row, every product with it would transpose it first. Its entries are the
same either way."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import dspla as dp
from dspla.values.conversion import to_matrix


def _decl(name, shape, dtype="float64"):
    return dp.sparse(name, shape, dtype).node


def test_a_sparse_column_is_held_by_column_and_a_row_by_row():
    col = sp.csr_array(([2.0, 5.0], ([3, 7], [0, 0])), shape=(10, 1))
    got = to_matrix(col, _decl("s", ("n", 1)))
    assert got.ss.format in ("csc", "hypercsc", "bitmapc")
    np.testing.assert_array_equal(got.to_dense(fill_value=0), col.toarray())
    row = sp.csr_array(([1.5], ([0], [4])), shape=(1, 10))
    got = to_matrix(row, _decl("r", (1, "n")))
    assert got.ss.format in ("csr", "hypercsr", "bitmapr")
    np.testing.assert_array_equal(got.to_dense(fill_value=0), row.toarray())


def test_bfs_from_a_scipy_column_equals_csgraph():
    from scipy.sparse.csgraph import shortest_path
    rng = np.random.default_rng(3)
    A = sp.random_array((300, 300), density=0.01, random_state=rng, format="csr")
    A.data[:] = 1.0
    A = sp.csr_array(A + A.T)
    s_ = dp.sparse("s", ("n", 1), "bool")
    A_ = dp.sparse("A", ("n", "n"))
    f = dp.function({"r": dp.mxm(dp.cast(A_.T, "bool"), s_, "any_pair")}, inputs=[A_, s_])
    s = sp.csr_array(([True], ([7], [0])), shape=(300, 1))
    got = f(A=A, s=s)["r"].to_numpy(fill=False)[:, 0]
    want = shortest_path(A, unweighted=True, indices=7) == 1
    np.testing.assert_array_equal(got, want)
