"""A 1 x 1 value in an element-wise union over a matrix with missing entries (GraphBLAS
semantics: every position gets the scalar, present ones op(x, s)), against a dense numpy oracle;
commutative operators take the one-pass route, the others the general broadcast."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp

OPS = {"plus": np.add, "times": np.multiply, "min": np.fmin, "max": np.fmax, "minus": np.subtract,
       "div": np.divide}


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("scalar_left", [False, True])
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_union_with_a_scalar_matches_the_oracle(op, scalar_left, density):
    rng = np.random.default_rng(5)
    n, k = 13, 3
    xv = rng.random((n, k)) + 0.5
    present = rng.random((n, k)) < density
    x = sp.csr_array(np.where(present, xv, 0.0))
    X = dp.sparse("X", ("n", "k"))
    s = dp.dense("s", (1, 1))
    expr = dp.ewise_add(s, X, op) if scalar_left else dp.ewise_add(X, s, op)
    got = dp.function({"y": expr})(X=x, s=np.array([[2.0]]))["y"]
    f = OPS[op]
    want = np.where(present, f(2.0, xv) if scalar_left else f(xv, 2.0), 2.0)
    assert got.present().all()
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-14)


def test_union_with_a_missing_scalar_leaves_x():
    x = sp.csr_array(np.array([[1.0, 0.0], [0.0, 3.0]]))
    X, s = dp.sparse("X", ("n", "k")), dp.sparse("s", (1, 1))
    got = dp.function({"y": dp.ewise_add(X, s, "plus")})(X=x, s=sp.csr_array((1, 1)))["y"]
    np.testing.assert_array_equal(got.present(), [[True, False], [False, True]])
    np.testing.assert_array_equal(got.to_numpy(fill=0.0), [[1.0, 0.0], [0.0, 3.0]])
