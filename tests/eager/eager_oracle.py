"""Values and presence of a result, from dspla or from python-graphblas, for comparing the two
(a vector compared as 1-D whatever its layout). A missing entry is told from a present one by
filling twice: only a missing entry changes with the fill."""
from __future__ import annotations

import graphblas as gb
import numpy as np


def parts(x) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(x, (gb.Matrix, gb.Vector)):
        lo, hi = x.to_dense(fill_value=0), x.to_dense(fill_value=1)
    elif isinstance(x, gb.Scalar):
        lo = hi = np.array([x.value]) if x.value is not None else None
        if lo is None:
            lo, hi = np.array([0]), np.array([1])
    else:   # a dspla value
        lo, hi = np.asarray(x.to_numpy(fill=0)), np.asarray(x.to_numpy(fill=1))
    lo, hi = np.asarray(lo), np.asarray(hi)
    if lo.ndim == 0 or lo.ndim == 2 and 1 in lo.shape:   # (a scalar, a vector held as a column)
        lo, hi = lo.ravel(), hi.ravel()
    present = lo == hi
    return np.where(present, lo, 0), present


def assert_same(got, want, exact: bool = False) -> None:
    gv, gp = parts(got)
    wv, wp = parts(want)
    assert gv.shape == wv.shape, (gv.shape, wv.shape)
    assert np.array_equal(gp, wp), f"present entries differ: {np.argwhere(gp != wp)[:5].tolist()}"
    if exact or gv.dtype == bool or wv.dtype == bool:
        assert np.array_equal(gv, wv)
    else:
        np.testing.assert_allclose(gv, wv, rtol=1e-12, atol=0)
