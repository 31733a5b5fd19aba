"""What a loop's steps are made of at run time, against dense numpy: an update written into a
value of its own block (no copy), a vector times a matrix by GraphBLAS's vxm (no transposes),
int64 checks that reuse the bounds earlier checks proved (and still catch a wrap), and the
selection by position moved before a cast (cast(select(A + Aᵀ, offdiag))). P = 1 is the one-
process call, P > 1 simulated ranks: the same bits."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.instr import Local, MxM, walk
from dspla.kernels.overflow import IntegerOverflow
from dspla.passes import simplify

from harness import run_dist


def _graph(n: int, seed: int, symmetric: bool = True) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    a = (rng.random((n, n)) < 0.25).astype(np.float64)
    a[n - 1, :] = a[:, n - 1] = 0   # an isolated node
    return sp.csr_array(np.maximum(a, a.T) if symmetric else a)


def _run(f, inputs: dict, P: int) -> dict:
    return f(**inputs) if P == 1 else run_dist(f, inputs, P)[0]


def _instrs(f):
    rt = f.session().runtime
    return list(walk(rt.program.setup)) + list(walk(rt.program.instrs)), rt


def _peeling():
    """examples/kcore's inner step on int64 degrees: deg<deg> -= vxm(peel, S) on deg masked."""
    A = dp.sparse("A", ("n", "n"))
    S = dp.cast(dp.select(dp.ewise_add(A, A.T, "pair"), "offdiag"), "int64")
    deg = S.reduce_rowwise()

    def peel(deg, p):
        deg = dp.mask(deg, p, complement=True, structure=True)
        deg = dp.update(deg, dp.vxm(p, S, "plus_pair"), accum="minus", mask=deg, structure=True)
        return deg, dp.select(deg, "<=", 7)
    deg, _ = dp.while_loop(lambda d, p: dp.nvals(p) > 0, peel, (deg, dp.select(deg, "<=", 7)), "n")
    return dp.function({"deg": deg}, inputs=[A])


def _peeling_numpy(a: np.ndarray) -> dict:
    s = (np.maximum(a, a.T) != 0).astype(np.int64)
    np.fill_diagonal(s, 0)
    deg = s.sum(1)
    alive = deg > 0
    while True:
        p = alive & (deg <= 7)
        if not p.any():
            return {i: int(deg[i]) for i in np.flatnonzero(alive)}
        alive &= ~p
        deg = np.where(alive, deg - s[p].sum(0), deg)


@pytest.mark.parametrize("P", [1, 2, 4])
def test_an_update_writes_into_its_temporary_and_vxm_runs_on_the_vector(P):
    a = _graph(30, 1).toarray()
    f = _peeling()
    out = _run(f, {"A": sp.csr_array(a)}, P)["deg"]
    r, _, v = out.to_coo()
    assert dict(zip(r.tolist(), v.tolist())) == _peeling_numpy(a)
    if P == 1:
        instrs, rt = _instrs(f)
        assert any(type(i) is Local and i.temporary and i.in_place for i in instrs)
        assert any(type(i) is MxM and i.vxm for i in instrs) and rt.routes["vxm"] > 0
        assert not any(type(i) is Local and i.node.op.value == "transpose" for i in instrs)


def test_a_value_read_twice_is_not_written_into():
    """C is the update's and an output: the update copies it (C itself stays as it was); an
    update's own temporary is written into."""
    x = dp.vector("x", "n", "int64")   # (a value of the run: an update of the graph alone is planned)
    c = dp.mask(x, x, structure=True)
    f = dp.function({"u": dp.update(c, x, accum="plus", mask=c, structure=True), "c": c})
    g = dp.function({"u": dp.update(dp.mask(x, x, structure=True), x, accum="plus", mask=x, structure=True)})
    xs = np.array([3, 4], dtype=np.int64)
    out = f(x=xs)
    assert out["u"].to_numpy().tolist() == [6, 8] and out["c"].to_numpy().tolist() == [3, 4]
    assert g(x=xs)["u"].to_numpy().tolist() == [6, 8] and xs.tolist() == [3, 4]
    assert not any(type(i) is Local and i.temporary for i in _instrs(f)[0])
    assert any(type(i) is Local and i.temporary for i in _instrs(g)[0])


@pytest.mark.parametrize("semiring", ["plus_first", "min_second", "max_first", "min_plus"])
@pytest.mark.parametrize("mask", [None, "structure", "value", "complement"])
@pytest.mark.parametrize("P", [1, 3])
def test_vxm_of_a_vector_matches_numpy(semiring, mask, P):
    """u ⊕.⊗ A with ⊗ not commutative (u's entry first), inside a vector mask."""
    n = 12
    rng = np.random.default_rng(7)
    a = np.where(rng.random((n, n)) < 0.3, rng.integers(-4, 5, (n, n)), 0).astype(np.float64)
    u_pres, m_pres, mval = rng.random(n) < 0.5, rng.random(n) < 0.6, rng.random(n) < 0.5
    u = rng.integers(1, 6, n).astype(np.float64)
    A = dp.sparse("A", ("n", "n"))
    U, M = dp.vector("u", "n", kind="sparse"), dp.vector("m", "n", "bool", kind="sparse")
    kw = {} if mask is None else {"mask": M, "structure": mask != "value", "complement": mask == "complement"}
    f = dp.function({"w": dp.vxm(U * 1.0, A, semiring, **kw)}, inputs=[A, U, M])

    def col(v, p):
        return sp.csr_array((v[p], (np.flatnonzero(p), np.zeros(p.sum(), int))), shape=(n, 1))
    got = _run(f, {"A": sp.csr_array(a), "u": col(u, u_pres), "m": col(mval, m_pres)}, P)["w"]
    monoid, mult = semiring.split("_")
    f_mult = {"first": lambda x, y: x, "second": lambda x, y: y, "plus": np.add, "times": np.multiply}[mult]
    f_mon = {"plus": np.add, "min": np.minimum, "max": np.maximum}[monoid]
    want = {}
    for j in range(n):
        terms = [f_mult(u[i], a[i, j]) for i in range(n) if u_pres[i] and a[i, j] != 0]
        if terms:
            want[j] = float(f_mon.reduce(np.array(terms)))
    if mask is not None:
        holds = m_pres if mask != "value" else m_pres & mval
        want = {j: v for j, v in want.items() if bool(holds[j]) != (mask == "complement")}
    r, v = got.to_coo()[0], got.to_coo()[-1]
    assert dict(zip(np.asarray(r).tolist(), np.asarray(v).tolist())) == want


def _doubling(iterations: int, halve: bool = False):
    """x <- x + x (or x - x: zeros, while the bounds carried from check to check double) on int64."""
    A = dp.sparse("A", ("n", "n"), "int64")
    x0 = A.reduce_rowwise()

    def body(x, i):
        c = dp.mask(x, x, structure=True)
        return dp.update(c, x * 1, accum="minus" if halve else "plus", mask=c, structure=True), i + 1
    x, _ = dp.while_loop(lambda x, i: i < iterations, body, (x0, dp.nvals(x0) * 0), 200)
    return dp.function({"x": x})


def test_a_check_with_known_bounds_still_catches_a_wrap():
    a = sp.csr_array(np.array([[1, 0], [0, 3]], dtype=np.int64))
    out = _doubling(61)(A=a)["x"].to_numpy().ravel()
    assert out.tolist() == [2**61, 3 * 2**61]
    with pytest.raises(IntegerOverflow):
        _doubling(62)(A=a)   # 3 * 2^62 leaves int64


def test_bounds_too_loose_fall_back_to_the_exact_magnitudes():
    """x - x is 0 at once; the bound carried doubles every step, past 2^63 by step 64: the exact
    magnitudes clear it then (no error, no float64 copy)."""
    a = sp.csr_array(np.array([[5, 0], [0, 7]], dtype=np.int64))
    f = _doubling(80, halve=True)
    assert f(A=a)["x"].to_numpy().ravel().tolist() == [0, 0]


@pytest.mark.parametrize("P", [1, 2])
def test_a_cast_after_a_selection_by_position_is_made_first(P):
    A = dp.sparse("A", ("n", "n"))
    S = dp.cast(dp.select(dp.ewise_add(A, A.T, "pair"), "offdiag"), "int64")
    f = dp.function({"S": S, "d": S.reduce_rowwise()})
    a = _graph(9, 3, symmetric=False).toarray()
    a[2, 2] = a[4, 4] = 1.0   # self-loops, dropped
    out = _run(f, {"A": sp.csr_array(a)}, P)
    s = ((a + a.T) != 0).astype(np.int64)
    np.fill_diagonal(s, 0)
    got = out["S"].to_scipy()
    assert got.dtype == np.int64 and np.array_equal(got.toarray(), s) and got.nnz == s.sum()
    d = out["d"].to_numpy(fill=0).ravel()
    assert np.array_equal(d, s.sum(1))
    top = simplify(f.program).outputs[0][1]
    assert top.op.value == "select" and top.args[0].op.value == "cast" and top.type.dtype.value == "int64"


@pytest.mark.parametrize("op,k", [("gt", 0), ("ge", 4), ("ne", 3), ("eq", 10), ("lt", 0.5), ("gt", 2.5)])
@pytest.mark.parametrize("P", [1, 2])
def test_a_count_condition_is_one_count_and_a_comparison(op, k, P):
    """while nvals(x) op k: the minimum dropped each iteration; the iterations and the result
    against a numpy loop. In one process the two steps of the test are one C count and a Python
    comparison (recognized); on two ranks they run through the interpreter."""
    vals = np.arange(1.0, 11.0)
    x0 = sp.csr_array((vals, (np.arange(10) * 2, np.zeros(10, int))), shape=(20, 1))
    X = dp.sparse("x", ("n", 1))

    def body(x):
        return (dp.select(x, ">", dp.reduce_all(x, "min")),)
    (out,), its = dp.while_loop(lambda x: dp.apply(dp.nvals(x), op, right=k), body, (X,), 50, count=True)
    f = dp.function({"out": out, "its": its}, inputs=[X])
    cmp = {"gt": np.greater, "ge": np.greater_equal, "ne": np.not_equal, "eq": np.equal, "lt": np.less}[op]
    left, want_its = list(vals), 0
    while cmp(len(left), k) and want_its < 50:
        left.remove(min(left))
        want_its += 1
    got = _run(f, {"x": x0}, P)
    assert int(got["its"].to_numpy()[0, 0]) == want_its
    r, _, v = got["out"].to_coo()
    assert sorted(v.tolist()) == left
    if P == 1:
        assert [t for t in f.session().runtime.count_tests.values() if t is not None]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("op,side", [("gt", "right"), ("ge", "right"), ("lt", "left"), ("ne", "right")])
def test_a_scalar_condition_is_compared_as_its_step_compares(dtype, op, side, monkeypatch):
    """``x cmp k`` on a loop's 1 x 1 value, in one process read and compared without the
    interpreter (loops.count_test), against a numpy loop in the step's compute type: x halves
    (exactly: it meets k, which in float32 is float32(0.1), not 0.1; int64 steps down by 7) until
    the test fails."""
    k = 0.1 if dtype != "int64" else 20   # (1000 - 7 * 140: met exactly, as 0.1 is by halving)
    X = dp.dense("x", (1, 1), dtype)
    two = 2.0

    def body(x):
        return (x / two if dtype != "int64" else x - 7,)
    test = (lambda x: dp.apply(x, op, right=k)) if side == "right" else (lambda x: dp.apply(x, op, left=k))
    (out,), its = dp.while_loop(test, body, (X,), 200, count=True)
    f = dp.function({"out": out, "its": its}, inputs=[X])
    t = np.dtype(dtype).type
    kk = t(k) if dtype == "float32" else k   # (the step's compute type: float32 x against k cast to float32)
    cmp = {"gt": np.greater, "ge": np.greater_equal, "lt": np.less, "ne": np.not_equal}[op]
    start = t(k) * t(128) if dtype != "int64" else 1000   # (x meets k exactly after 7 halvings)
    x, want = t(start), 0
    while (cmp(x, kk) if side == "right" else cmp(kk, x)) and want < 200:
        x = t(x / t(2)) if dtype != "int64" else t(x - 7)
        want += 1
    got = f(x=np.full((1, 1), start, dtype=dtype))
    assert int(got["its"].to_numpy()[0, 0]) == want
    assert got["out"].to_numpy()[0, 0] == x
    assert [t for t in f.session().runtime.count_tests.values() if t is not None]
    monkeypatch.setattr("dspla.runtime.interp.loops.count_test", lambda rt, i: None)
    g = dp.function({"out": out, "its": its}, inputs=[X])   # the interpreter's answer: the same
    again = g(x=np.full((1, 1), start, dtype=dtype))
    assert int(again["its"].to_numpy()[0, 0]) == want


def test_a_missing_scalar_condition_is_false():
    X = dp.sparse("x", (1, 1))
    (out,), its = dp.while_loop(lambda x: dp.apply(x, "gt", right=0.5), lambda x: (x * 0.5,), (X,), 20, count=True)
    f = dp.function({"out": out, "its": its}, inputs=[X])
    got = f(x=sp.csr_array((1, 1)))
    assert int(got["its"].to_numpy()[0, 0]) == 0
    assert [t for t in f.session().runtime.count_tests.values() if t is not None]
