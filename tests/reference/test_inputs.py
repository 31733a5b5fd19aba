"""Run-time input checking and result conversion."""
import re

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import InputError


@pytest.fixture
def f():
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", 3), dtype="int64")
    return dp.function(outputs={"Y": dp.mxm(A, X, "plus_times")})


def _a(n=4):
    return sp.csr_array(np.eye(n))


def test_missing_extra_inputs(f):
    with pytest.raises(InputError, match=r"missing input 'X'; the program takes A: sparse\[n, n\] float64"):
        f(A=_a())
    with pytest.raises(InputError, match="unexpected input 'Z'"):
        f(A=_a(), X=np.ones((4, 3), int), Z=1)


def test_wrong_kind(f):
    with pytest.raises(InputError, match="'A' is declared sparse.*numpy array.*csr_array"):
        f(A=np.eye(4), X=np.ones((4, 3), int))
    with pytest.raises(InputError, match="'X' is declared dense.*scipy sparse.*toarray"):
        f(A=_a(), X=sp.csr_array(np.ones((4, 3))))
    holes = gb.Matrix.from_coo([0], [0], [1], nrows=4, ncols=3, dtype="INT64")
    with pytest.raises(InputError, match="11 of its 4x3 entries are missing"):
        f(A=_a(), X=holes)


def test_wrong_shape_and_inconsistent_dims(f):
    with pytest.raises(InputError, match=r"'X' is declared dense\[n, 3\] int64 but has 5 columns"):
        f(A=_a(), X=np.ones((4, 5), int))
    with pytest.raises(InputError, match="dimension 'n' is 4 from the rows of 'A' but input 'X' has 6 rows"):
        f(A=_a(), X=np.ones((6, 3), int))


def test_dtype_conversion(f):
    # floats feed an int64 input when every value is a whole number (exactly: 2**53 + 1 is not a
    # float64, but 2**62 is); any other value is refused, naming its entry (floats were refused)
    x = np.ones((4, 3))
    x[2, 1] = 2.0**62
    got = f(A=_a(), X=x)["Y"].to_numpy()
    assert got.dtype == np.float64 and got[2, 1] == 2.0**62 and got[0, 0] == 1.0
    for bad, why in ((2.5, "2.5, not a whole number"), (np.nan, "nan, not a whole number"),
                     (2.0**63, "9.223372036854776e+18, a whole number too large for int64")):
        x = x.copy()   # (a new object: one changed in place is not noticed)
        x[2, 1] = bad
        with pytest.raises(InputError, match=re.escape(f"'X' is declared int64 but its entry (2, 1) is {why}")):
            f(A=_a(), X=x)
    with pytest.raises(InputError, match="declared bool but got float64 data, which does not convert safely"):
        dp.function({"Y": dp.dense("X", ("n", 1), dtype="bool") * 1})(X=np.ones((2, 1)))   # (whole floats: int64 only)
    out = f(A=_a(), X=np.ones((4, 3), dtype=np.int32))  # widening is fine
    assert out["Y"].dtype == np.float64  # float A times int X promotes


def test_array_refuses_to_invent_missing_values():
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", 2))
    out = dp.function(outputs={"Y": A @ X})(A=sp.csr_array(([1.0], ([0], [0])), shape=(2, 2)), X=np.ones((2, 2)))
    y = out["Y"]
    assert not y.is_full and y.nvals == 2
    with pytest.raises(ValueError, match="2 missing entries"):
        np.asarray(y)
    np.testing.assert_array_equal(y.to_numpy(fill=np.nan)[1], [np.nan, np.nan])
    np.testing.assert_array_equal(y.present(), [[True, True], [False, False]])


def test_graphblas_and_scipy_inputs_agree():
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", 2))
    f = dp.function(outputs={"Y": A @ X})
    a = sp.random_array((20, 20), density=0.2, random_state=0, format="csr")
    x = np.arange(40.0).reshape(20, 2)
    y1 = f(A=a, X=x)["Y"].to_numpy(fill=0)
    y2 = f(A=gb.io.from_scipy_sparse(a), X=gb.Matrix.from_dense(x))["Y"].to_numpy(fill=0)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_allclose(y1, a @ x)
