"""Integers narrower than int64 (and uint64) combine partial reductions with their own identity:
a rank without an entry contributes 255 to a uint8 min and -128 to an int8 max (it had
contributed int64's identity cut to 1 and 0, which won against the entries present). Against
dense numpy with GraphBLAS semantics (tests/ops/gbsem.py)."""
import numpy as np
import pytest

import dspla as dp
from tests.ops.gbsem import check, rand, rng_for, run, to_sparse

DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "uint64"]


def _reduced(x, ufunc, axis):
    vals, pres = x
    has = pres.any(axis=axis)
    info = np.iinfo(vals.dtype)
    fill = info.max if ufunc is np.minimum else info.min
    out = ufunc.reduce(np.where(pres, vals, fill), axis=axis)
    return np.where(has, out, 0).astype(vals.dtype).reshape(1, -1), has.reshape(1, -1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("P", [2, 4])
def test_min_and_max_over_columns_split_by_rows(dtype, P):
    rng = rng_for("narrow", dtype, P)
    a = rand(rng, (13, 6), dtype, density=0.35)
    A = dp.sparse("A", ("n", 6), dtype)
    X = dp.select(A, "offdiag")   # dynamic: each rank's partial combined at run time
    got = run(dp.function({"lo": dp.reduce_cols(X, "min"), "hi": dp.reduce_cols(X, "max")}), {"A": to_sparse(a)}, P)
    x = (a[0], a[1] & ~np.eye(13, 6, dtype=bool))
    check(got["lo"], _reduced(x, np.minimum, 0))
    check(got["hi"], _reduced(x, np.maximum, 0))


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_min_plus_and_max_times_products_start_from_the_identity(dtype):
    rng = rng_for("narrow-mxm", dtype)
    a, x = rand(rng, (7, 5), dtype, density=0.5), rand(rng, (5, 3), dtype, full=True)
    A, X = dp.sparse("A", (7, 5), dtype), dp.dense("X", (5, 3), dtype)
    got = run(dp.function({"mp": dp.mxm(A, X, "min_plus"), "mt": dp.mxm(A, X, "max_first")}),
              {"A": to_sparse(a), "X": x[0]}, 1)
    av, ap = a
    with np.errstate(over="ignore"):
        terms = np.where(ap[:, :, None], av[:, :, None] + x[0][None, :, :], np.iinfo(dtype).max).astype(dtype)
    has = np.repeat(ap.any(axis=1)[:, None], 3, axis=1)
    check(got["mp"], (np.where(has, terms.min(axis=1), 0).astype(dtype), has))
    first = np.where(ap[:, :, None], av[:, :, None] + np.zeros((1, 1, 3), dtype), np.iinfo(dtype).min).astype(dtype)
    check(got["mt"], (np.where(has, first.max(axis=1), 0).astype(dtype), has))
