"""Planning-time transfers of matrices (runtime/wire.py): what arrives is the matrix sent, for
every shape of content: empty, one entry, iso-valued, valued, full, hypersparse, each dtype."""
import graphblas as gb
import numpy as np
import pytest

from dspla.runtime.wire import from_wire, to_wire


def cases():
    rng = np.random.default_rng(0)
    yield "empty", gb.Matrix(float, 7, 3)
    yield "one", gb.Matrix.from_coo([4], [2], [2.5], nrows=7, ncols=3)
    yield "iso", gb.Matrix.from_coo([0, 0, 5, 6], [0, 2, 1, 2], 1.0, nrows=7, ncols=3)
    r, c = np.nonzero(rng.random((40, 30)) < 0.2)
    yield "valued", gb.Matrix.from_coo(r, c, rng.random(r.size), nrows=40, ncols=30)
    yield "int", gb.Matrix.from_coo(r, c, rng.integers(-9, 9, r.size), nrows=40, ncols=30)
    yield "bool", gb.Matrix.from_coo(r, c, rng.random(r.size) < 0.5, nrows=40, ncols=30)
    yield "full", gb.Matrix.from_dense(rng.random((5, 4)))
    yield "hyper", gb.Matrix.from_coo([3, 900_000], [1, 7], [1.0, -2.0], nrows=1_000_000, ncols=10)
    col = gb.Matrix.from_coo([1, 8], [0, 0], [3, 4], nrows=10, ncols=1)
    col.ss.config["sparsity_control"] = ["bitmap"]
    yield "bitmap column", col


@pytest.mark.parametrize("name,M", list(cases()), ids=[c[0] for c in cases()])
def test_a_matrix_arrives_as_sent(name, M):
    before = M.dup()
    got = from_wire(to_wire(M))
    assert got.shape == M.shape and got.dtype == M.dtype
    assert got.isequal(M)
    assert M.isequal(before)   # the sender's matrix is left as it was
