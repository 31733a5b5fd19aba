"""ewise_add(X, A ⊕.⊗ B, ⊕) lowered as C ⊕= A ⊕.⊗ B on a copy of X: the same values as the two
steps, against dense numpy with GraphBLAS semantics (a missing entry is not a zero), and the
plan shows the fusion only where it applies."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla import instr as ir
from dspla.plan.options import Options

INF = np.inf


def _minplus(A, Ap, x, xp):
    """(values, present) of A min.+ x, numpy, missing where no term exists."""
    terms = np.where(Ap & xp[None, :, 0], A + x[None, :, 0], INF)
    return terms.min(axis=1, keepdims=True), (Ap & xp[None, :, 0]).any(axis=1, keepdims=True)


def _data(seed, n=25):
    rng = np.random.default_rng(seed)
    Ap = rng.random((n, n)) < 0.15
    Av = rng.integers(1, 9, (n, n)).astype(float)
    xp = rng.random((n, 1)) < 0.6
    xv = rng.integers(0, 20, (n, 1)).astype(float)
    A = sp.csr_array(np.where(Ap, Av, 0.0))
    x = sp.csr_array(np.where(xp, xv, 0.0))
    return A, x, Av, Ap, xv, xp


def _plan_has_accumulate(f, inputs):
    c = f.plan(1, inputs, Options())
    instrs = c.plan.programs[0].instrs + c.plan.programs[0].setup
    return any(isinstance(i, ir.MxM) and i.accumulate for i in instrs)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_min_plus_relaxation_equals_numpy(seed):
    A, x, Av, Ap, xv, xp = _data(seed)
    # x holds 0 where present-and-zero would be lost by scipy: keep values >= 1
    xv = np.where(xp, xv + 1, 0.0)
    x = sp.csr_array(xv)
    As, xs = dp.sparse("A", ("n", "n")), dp.sparse("x", ("n", 1))
    f = dp.function({"d": dp.ewise_add(xs, dp.mxm(As, xs, "min_plus"), "min")})
    assert _plan_has_accumulate(f, {"A": A, "x": x})
    got = f(A=A, x=x)["d"]
    relax, rp = _minplus(Av, Ap, xv, xp)
    want_p = xp | rp
    want = np.where(xp & rp, np.minimum(xv, relax), np.where(xp, xv, relax))
    np.testing.assert_array_equal(got.present(), want_p)
    np.testing.assert_array_equal(got.to_numpy(fill=INF)[want_p], want[want_p])


def test_plus_times_with_the_product_on_the_left():
    A, x, Av, Ap, xv, xp = _data(4)
    As, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 1))
    xd = np.arange(25, dtype=float).reshape(-1, 1)
    f = dp.function({"y": dp.mxm(As, X) + X})              # plus is commutative: fused either side
    assert _plan_has_accumulate(f, {"A": A, "X": xd})
    got = f(A=A, X=xd)["y"]
    prod_p = Ap.any(axis=1, keepdims=True)
    np.testing.assert_array_equal(got.to_numpy(), np.where(prod_p, np.where(Ap, Av, 0) @ xd, 0) + xd)


def test_no_fusion_when_the_product_is_used_again_or_the_op_differs():
    A, x, Av, Ap, xv, xp = _data(5)
    As, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 1))
    xd = np.ones((25, 1))
    T = dp.mxm(As, X, "min_plus")
    f = dp.function({"y": dp.ewise_add(X, T, "min"), "t": T})
    assert not _plan_has_accumulate(f, {"A": A, "X": xd})
    g = dp.function({"y": dp.ewise_add(X, dp.mxm(As, X, "min_plus"), "max")})
    assert not _plan_has_accumulate(g, {"A": A, "X": xd})
    out = g(A=A, X=xd)["y"]
    relax, rp = _minplus(Av, Ap, xd, np.ones((25, 1), bool))
    np.testing.assert_array_equal(out.to_numpy(), np.where(rp, np.maximum(xd, relax), xd))
    np.testing.assert_array_equal(f(A=A, X=xd)["t"].present(), rp)
