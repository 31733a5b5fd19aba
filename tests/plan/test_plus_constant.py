"""ewise_add(A ⊕.⊗ x, s) for a column x and a 1 x 1 s, lowered on one process as C = s everywhere,
then C ⊕= A ⊕.⊗ x where SuiteSparse accumulates in place anyway (ops/mxm.py, _plus_constant):
the values of the two steps against dense numpy
with GraphBLAS semantics (a missing entry is not a zero; a missing s broadcasts to nothing), the
same as the unfused plan (equal to rounding: the sums meet s in another order), and the plan
shows the fold only where it applies."""
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla import instr as ir
from dspla.ops import mxm as mxm_rules
from dspla.plan.options import Options

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from pagerank import pagerank_function  # noqa: E402


def _instrs(instrs):
    for i in instrs:
        yield i
        if isinstance(i, ir.Loop):
            yield from _instrs(i.cond)
            yield from _instrs(i.body)


def _folded(f, inputs) -> bool:
    prog = f.plan(1, inputs, Options()).plan.programs[0]
    found = list(_instrs(prog.instrs + prog.setup))
    fills = {i.out for i in found if isinstance(i, ir.Fill) and i.value is not None}
    return any(isinstance(i, ir.MxM) and i.accumulate and i.out in fills for i in found)


def _data(seed, n=30):
    rng = np.random.default_rng(seed)
    Ap = rng.random((n, n)) < 0.12
    Ap[3, :] = False                       # rows with no entries: the product misses them
    Ap[17, :] = False
    Av = np.ones((n, n))                   # ones: plus.times reads the pattern (plus.second), in place at K = 1
    xp = rng.random((n, 1)) < 0.7
    xv = rng.random((n, 1)) + 0.5
    return sp.csr_array(np.where(Ap, Av, 0.0)), Av, Ap, xv, xp


def _product(Av, Ap, xv, xp):
    """(values, present) of A plus.times x, numpy: missing where no term exists."""
    terms = Ap & xp[None, :, 0]
    return np.where(terms, Av * xv[None, :, 0], 0.0).sum(axis=1, keepdims=True), terms.any(axis=1, keepdims=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_product_plus_a_scalar_equals_numpy(seed):
    A, Av, Ap, xv, xp = _data(seed)
    x = sp.csr_array(np.where(xp, xv, 0.0))
    As, xs = dp.sparse("A", ("n", "n")), dp.sparse("x", ("n", 1))
    s = dp.reduce_all(xs) * 0.25
    f = dp.function({"y": dp.mxm(As, xs) + s})
    assert _folded(f, {"A": A, "x": x})
    got = f(A=A, x=x)["y"]
    prod, pp = _product(Av, Ap, xv, xp)
    sv = 0.25 * xv[xp].sum()
    np.testing.assert_array_equal(got.present(), np.ones_like(pp))   # s reaches every entry
    np.testing.assert_allclose(got.to_numpy(), np.where(pp, prod + sv, sv), rtol=1e-14)


def test_a_missing_scalar_leaves_the_product():
    A, Av, Ap, xv, xp = _data(3)
    x = sp.csr_array(np.where(xp, xv, 0.0))
    As, xs, zs = dp.sparse("A", ("n", "n")), dp.sparse("x", ("n", 1)), dp.sparse("z", ("n", 1))
    f = dp.function({"y": dp.mxm(As, xs) + dp.reduce_all(zs)})
    z = sp.csr_array((30, 1))
    assert _folded(f, {"A": A, "x": x, "z": z})
    got = f(A=A, x=x, z=z)["y"]
    prod, pp = _product(Av, Ap, xv, xp)
    np.testing.assert_array_equal(got.present(), pp)
    np.testing.assert_allclose(got.to_numpy(fill=0.0), np.where(pp, prod, 0.0), rtol=1e-14)


def test_not_folded_where_it_does_not_apply():
    A, Av, Ap, xv, xp = _data(4)
    X3 = np.arange(90, dtype=float).reshape(30, 3)
    x = np.ones((30, 1))
    As, Xs, xs = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 3)), dp.dense("x", ("n", 1))
    s = dp.reduce_all(xs)
    cases = {
        "several columns": (dp.function({"y": dp.mxm(As, Xs) + s}), {"A": A, "X": X3, "x": x}),
        "the product used again": (dp.function({"y": dp.mxm(As, xs) + s, "p": dp.mxm(As, xs)}), {"A": A, "x": x}),
        "another operator": (dp.function({"y": dp.ewise_add(dp.mxm(As, xs), s, "max")}), {"A": A, "x": x}),
        "another semiring's monoid": (dp.function({"y": dp.mxm(As, xs, "min_plus") + s}), {"A": A, "x": x}),
        "in place slower (valued A, one column)": (dp.function({"y": dp.mxm(As, xs) + s}),
                                                   {"A": A * np.arange(1, 31)[:, None], "x": x}),
    }
    for why, (f, ins) in cases.items():
        assert not _folded(f, ins), why
    got = cases["several columns"][0](A=A, X=X3, x=x)["y"].to_numpy(fill=np.nan)
    ApX = Ap.any(axis=1, keepdims=True)
    np.testing.assert_allclose(got, np.where(ApX, np.where(Ap, Av, 0) @ X3, 0) + 30.0, rtol=1e-14)


def test_pagerank_folds_its_teleport_and_matches_the_unfolded_plan(monkeypatch):
    rng = np.random.default_rng(5)
    A = sp.random_array((400, 400), density=0.02, format="csr", random_state=6)
    A = sp.csr_array(A + A.T)
    A.data[:] = 1.0
    keep = np.ones(400)
    keep[::37] = 0.0                                       # dangling nodes: no out-edges
    A = sp.csr_array(sp.diags_array(keep) @ A)
    A.eliminate_zeros()
    r0 = rng.random((400, 1)) + 0.1
    on = pagerank_function()
    assert _folded(on, {"A": A, "r0": r0})
    got_on = on(A=A, r0=r0)
    monkeypatch.setattr(mxm_rules, "_plus_constant", lambda pl, n, layout: False)
    off = pagerank_function()
    assert not _folded(off, {"A": A, "r0": r0})
    got_off = off(A=A, r0=r0)
    np.testing.assert_allclose(got_on["r"].to_numpy(), got_off["r"].to_numpy(), rtol=1e-13, atol=1e-16)
    assert got_on["iterations"].to_numpy()[0, 0] == got_off["iterations"].to_numpy()[0, 0]
