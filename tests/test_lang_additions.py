"""What LAGraph's algorithms needed of the language: select with a 1 x 1 value as its thunk,
tril/triu, random(x, seed), inputs with defaults, and a masked product reading a transposed
operand through the descriptor — each against dense numpy with GraphBLAS semantics, in both front
ends, on P = 1..4 (simulated)."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import DsplaError, InputError
from dspla.frontend.parser import parse

from harness import run_dist


def _matrix(n=12, m=9, seed=0, dtype=np.int64):
    rng = np.random.default_rng(seed)
    M = sp.random_array((n, m), density=0.4, random_state=rng, format="csr")
    M.data[:] = rng.integers(-3, 6, M.nnz)
    return sp.csr_array(M, dtype=dtype)


def _dense(M):
    """(values, present) of a scipy matrix: a missing entry is not a zero."""
    present = np.zeros(M.shape, bool)
    C = sp.coo_array(M)
    present[C.row, C.col] = True
    return M.toarray(), present


def _got(arr):
    v = arr.to_numpy(fill=-99)
    return v.reshape(v.shape[0], -1) if v.ndim else v


# ------------------------------------------------------------------------ select's 1 x 1 thunk
@pytest.mark.parametrize("op,fn", [(">=", np.greater_equal), ("<", np.less), ("==", np.equal)])
def test_select_with_a_value_thunk_matches_numpy(op, fn):
    X = dp.sparse("X", ("n", "m"), "int64")
    k = dp.scalar("k", "int64")
    f = dp.function({"Y": dp.select(X, op, k - 1)}, inputs=[X, k])
    M = _matrix()
    vals, present = _dense(M)
    for kv in (-1, 1, 3):
        keep = present & fn(vals, kv - 1)
        want = np.where(keep, vals, -99)
        np.testing.assert_array_equal(_got(f(X=M, k=kv)["Y"]), want)
        for P in (2, 3, 4):
            got, _ = run_dist(f, {"X": M, "k": kv}, P, partition="random", seed=P)
            np.testing.assert_array_equal(_got(got["Y"]), want)


def test_select_by_position_with_a_value_thunk_and_tril_triu():
    X = dp.sparse("X", ("n", "n"), "int64")
    d = dp.scalar("d", "int64")
    f = dp.function({"L": dp.select(X, "tril", d), "T": dp.tril(X, -1), "U": dp.triu(X, 2)}, inputs=[X, d])
    M = _matrix(10, 10, 1)
    vals, present = _dense(M)
    i, j = np.indices(M.shape)
    want = {name: np.where(present & keep, vals, -99)
            for name, keep in (("L", j - i <= 1), ("T", j - i <= -1), ("U", j - i >= 2))}
    out = f(X=M, d=1)
    got, _ = run_dist(f, {"X": M, "d": 1}, 3, partition="random", seed=1)
    for name in want:
        np.testing.assert_array_equal(_got(out[name]), want[name], err_msg=name)
        np.testing.assert_array_equal(_got(got[name]), want[name], err_msg=name)


def test_select_thunk_in_files_and_its_errors():
    prog = parse("input X : sparse[n, n] int64\ninput k : scalar int64\nY = select(X, valuegt, k * 2)\n"
                 "L = tril(X, -1)\noutput Y, L\n")
    M = _matrix(8, 8, 2)
    vals, present = _dense(M)
    out = dp.Function(prog)(X=M, k=1)
    np.testing.assert_array_equal(_got(out["Y"]), np.where(present & (vals > 2), vals, -99))
    with pytest.raises(DsplaError, match="thunk is a number or a 1 x 1 value") as e:
        parse("input X : sparse[n, n]\nY = select(X, valuegt, X)\noutput Y\n")
    assert e.value.span.line == 2 and e.value.span.col == 24
    with pytest.raises(DsplaError, match="integer offset"):
        dp.select(dp.sparse("X", ("n", "n")), "tril", dp.scalar("t"))
    with pytest.raises(DsplaError, match="a Python predicate takes a number"):
        dp.select(dp.sparse("X", ("n", "n")), lambda v, r, c, t: v > t, dp.scalar("t"))


# ------------------------------------------------------------------------------------ random
def test_random_is_uniform_on_the_pattern_and_the_same_on_every_P():
    X = dp.sparse("X", ("n", "m"))
    seed = dp.scalar("seed", "int64")
    f = dp.function({"R": dp.random(X, seed), "S": dp.random(X, seed + 1)}, inputs=[X, seed])
    M = sp.random_array((400, 50), density=0.3, random_state=3, format="csr")
    out = f(X=M, seed=7)
    R, S = out["R"].to_scipy(), out["S"].to_scipy()
    R.sort_indices()
    M.sort_indices()
    assert R.dtype == np.float64 and np.array_equal(R.indptr, M.indptr) and np.array_equal(R.indices, M.indices)
    v = R.data
    assert 0 <= v.min() and v.max() < 1
    assert abs(v.mean() - 0.5) < 0.02 and abs(v.var() - 1 / 12) < 0.01      # uniform on [0, 1)
    assert np.histogram(v, bins=10, range=(0, 1))[0].min() > 0.08 * v.size
    assert not np.allclose(S.data, v) and np.corrcoef(S.data, v)[0, 1] < 0.05  # a new seed, new draws
    np.testing.assert_array_equal(f(X=M, seed=7)["R"].to_scipy().data, v)    # the same seed, the same
    for P in (2, 4):
        got, _ = run_dist(f, {"X": M, "seed": 7}, P, partition="random", seed=P)
        np.testing.assert_array_equal(got["R"].to_numpy(fill=-1), out["R"].to_numpy(fill=-1))


def test_random_in_files_and_its_errors():
    prog = parse("input X : sparse[n, n]\ninput s : scalar int64\nR = random(X, s)\noutput R\n")
    M = _matrix(6, 6, 4, np.float64)
    X = dp.sparse("X", ("n", "n"))
    want = dp.function({"R": dp.random(X, dp.scalar("s", "int64"))})(X=M, s=3)["R"].to_numpy(fill=-1)
    got = dp.Function(prog)(X=M, s=3)["R"].to_numpy(fill=-1)
    np.testing.assert_array_equal(got, want)      # the same draws from both front ends
    assert np.array_equal(got >= 0, _dense(M)[1]) and got.max() < 1
    with pytest.raises(DsplaError, match="the seed is an integer"):
        dp.random(dp.sparse("X", ("n", "n")), dp.scalar("s"))
    with pytest.raises(DsplaError, match="1 x 1"):
        dp.random(dp.sparse("X", ("n", "n")), dp.dense("s", ("n", 1), "int64"))


# ------------------------------------------------------------------------------ input defaults
def test_an_input_not_given_takes_its_default():
    prog = parse("input A : sparse[n, n]\ninput r : vector[n] = 2\ninput k : scalar int64 = -3\n"
                 "input b : scalar bool = true\ny = mxv(A, r) * k\noutput y, b\n")
    f = dp.Function(prog)
    M = _matrix(7, 7, 5, np.float64)
    vals, present = _dense(M)
    want = np.where(present.any(axis=1), vals.sum(axis=1) * 2 * -3, -99)
    out = f(A=M)
    np.testing.assert_allclose(out["y"].to_numpy(fill=-99), want)
    assert bool(out["b"]) is True
    np.testing.assert_allclose(f(A=M, k=1)["y"].to_numpy(fill=-99), np.where(want == -99, -99, want / -3))
    np.testing.assert_allclose(f(A=M, r=np.ones(7))["y"].to_numpy(fill=-99), np.where(want == -99, -99, want / 2))
    got, _ = run_dist(f, {"A": M}, 3, partition="random")
    np.testing.assert_allclose(got["y"].to_numpy(fill=-99).ravel(), want)


def test_defaults_in_python_and_their_errors():
    A = dp.sparse("A", ("n", "n"))
    x = dp.dense("x", ("n", 1), default=0.5)
    f = dp.function({"y": A @ x}, inputs=[A, x])
    M = _matrix(5, 5, 6, np.float64)
    np.testing.assert_allclose(f(A=M)["y"].to_numpy(fill=0).ravel(), M @ np.full(5, 0.5))
    for bad, match in [(lambda: dp.scalar("k", "int64", default=1.5), "give a whole number"),
                       (lambda: dp.scalar("b", "bool", default=1), "give true or false"),
                       (lambda: dp.scalar("k", "int8", default=300), "does not fit in int8"),
                       (lambda: dp.declare("S", "sparse", ("n", "n"), default=1), "only a dense input")]:
        with pytest.raises(DsplaError, match=match):
            bad()
    with pytest.raises(DsplaError, match="only a dense input") as e:
        parse("input A : sparse[n, n] = 1\noutput A\n")
    assert e.value.span.line == 1
    lone = dp.function({"v": dp.vector("v", "m", default=1.0) * 2}, inputs=[dp.vector("v", "m", default=1.0)])
    with pytest.raises(InputError, match="no input given has the dim 'm'"):
        lone()


# ------------------------------------------------------------ a transposed operand's descriptor
def test_a_masked_product_with_a_transposed_operand_matches_numpy(monkeypatch):
    A = dp.sparse("A", ("n", "k"))
    M = dp.sparse("M", ("n", "n"))
    f = dp.function({"C": dp.mxm(A, A.T, "plus_times", mask=M, structure=True)}, inputs=[A, M])
    a, m = _matrix(9, 6, 7, np.float64), _matrix(9, 9, 9, np.float64)
    av, ap = _dense(a)
    _, mp = _dense(m)
    vals = av @ av.T
    present = mp & ((ap.astype(int) @ ap.T.astype(int)) > 0)
    from dspla.kernels import gbops
    through_gbops = []   # the route reads Aᵀ through the descriptor, not gbops.mxm on a made transpose
    real = gbops.mxm
    monkeypatch.setattr(gbops, "mxm", lambda *a, **k: through_gbops.append(1) or real(*a, **k))
    out = f(A=a, M=m)
    assert f.last_stats["routes"] == {"masked": 1} and not through_gbops
    np.testing.assert_allclose(out["C"].to_numpy(fill=np.nan), np.where(present, vals, np.nan))
    got, _ = run_dist(f, {"A": a, "M": m}, 2, partition="random")
    np.testing.assert_allclose(got["C"].to_numpy(fill=np.nan), np.where(present, vals, np.nan))


def test_a_checked_int64_masked_product_with_a_transposed_operand_transposes_it_once():
    # int64 plus_times is overflow-checked: it cannot take the descriptor route, so it reads a made
    # Lᵀ; L is a plan's value (computed once from A), so Lᵀ is one too: made once, at planning
    A = dp.sparse("A", ("n", "k"))
    M = dp.sparse("M", ("n", "n"))
    D = dp.dense("D", ("n", "n"))   # (a data input: the mask, M's pattern, is then computed per call, and the product)
    L = dp.cast(A, "int64")
    f = dp.function({"C": dp.mxm(L, L.T, "plus_times", mask=dp.ewise_mult(M, D), structure=True)}, inputs=[A, M, D])
    a, m = _matrix(9, 6, 7, np.float64), _matrix(9, 9, 9, np.float64)
    d = np.ones((9, 9))
    av, ap = _dense(a)
    _, mp = _dense(m)
    li = av.astype(np.int64)
    want = np.where(mp & ((ap.astype(int) @ ap.T.astype(int)) > 0), li @ li.T, -1)   # numpy, a missing entry -1
    np.testing.assert_array_equal(f(A=a, M=m, D=d)["C"].to_numpy(fill=-1), want)
    rt = f.session().runtime
    (mxm,) = [i for i in rt.program.instrs if type(i).__name__ == "MxM"]
    kept = rt.slots[mxm.b]
    assert not mxm.b_transposed and id(kept) in rt.static_ids   # Lᵀ itself, a plan's value
    np.testing.assert_array_equal(f(A=a, M=m, D=d)["C"].to_numpy(fill=-1), want)
    assert f.session().runtime.slots[mxm.b] is kept   # the same Lᵀ object, not made again
    a2 = _matrix(9, 6, 8, np.float64)   # another graph: planned again, its own Lᵀ
    a2v, a2p = _dense(a2)
    l2 = a2v.astype(np.int64)
    want2 = np.where(mp & ((a2p.astype(int) @ a2p.T.astype(int)) > 0), l2 @ l2.T, -1)
    np.testing.assert_array_equal(f(A=a2, M=m, D=d)["C"].to_numpy(fill=-1), want2)
    got, _ = run_dist(f, {"A": a, "M": m, "D": d}, 2, partition="random")
    np.testing.assert_array_equal(got["C"].to_numpy(fill=-1), want)


def test_eager_select_tril_and_random_take_values():
    M = _matrix(8, 8, 10, np.float64)
    vals, present = _dense(M)
    a = dp.array(M)
    k = a.reduce_scalar("max")                      # an eager scalar as the thunk
    top = vals[present].max()
    want = np.where(present & (vals >= top), vals, -99)
    np.testing.assert_array_equal(dp.select(a, ">=", k).to_numpy(fill=-99), want)
    i, j = np.indices(M.shape)
    np.testing.assert_array_equal(dp.tril(a, -1).to_numpy(fill=-99), np.where(present & (j - i <= -1), vals, -99))
    drawn = dp.random(a, dp.array(np.array([[3]]))).to_numpy(fill=-1)
    X = dp.sparse("X", ("n", "n"))
    traced = dp.function({"R": dp.random(X, dp.scalar("s", "int64"))})(X=M, s=3)["R"].to_numpy(fill=-1)
    np.testing.assert_array_equal(drawn, traced)   # eager draws equal the traced ones


def test_apply_index_in_files_takes_its_operator_by_name():
    prog = parse("input A : sparse[n, n]\nR = apply_index(A, rowindex, 1)\nD = apply_index(A, diagindex)\n"
                 "T = apply_index(A, tril)\noutput R, D, T\n")
    M = _matrix(7, 7, 11, np.float64)
    _, present = _dense(M)
    i, j = np.indices(M.shape)
    out = dp.Function(prog)(A=M)
    np.testing.assert_array_equal(out["R"].to_numpy(fill=-99), np.where(present, i + 1, -99))
    np.testing.assert_array_equal(out["D"].to_numpy(fill=-99), np.where(present, j - i, -99))
    np.testing.assert_array_equal(out["T"].to_numpy(fill=-1), np.where(present, (j - i <= 0).astype(int), -1))
    with pytest.raises(DsplaError, match="unknown index-unary operator 'bogus'"):
        parse("input A : sparse[n, n]\nQ = apply_index(A, bogus)\noutput Q\n")


def test_inf_literals_in_files():
    """``inf`` and ``-inf`` are float64's infinities (a union's fill for a missing entry);
    names that begin with them stay names; ``1e999`` stays an error."""
    prog = parse("input x : sparse[n, 1]\ninput y : sparse[n, 1]\ninfo = y\n"
                 "lo = ewise_union(x, info, min, inf, inf)\nhi = ewise_union(x, y, max, -inf, -inf)\n"
                 "better = mask(x, ewise_union(x, y, lt, inf, inf))\noutput lo, hi, better\n")
    x = sp.csr_array(np.array([[1.0], [0.0], [5.0], [0.0]]))
    y = sp.csr_array(np.array([[2.0], [3.0], [0.0], [0.0]]))
    got = dp.Function(prog)(x=x, y=y)
    xv, xp = _dense(x)
    yv, yp = _dense(y)
    both = xp | yp
    lo = np.where(xp, xv, np.inf).ravel(), np.where(yp, yv, np.inf).ravel()
    np.testing.assert_array_equal(got["lo"].to_numpy(fill=np.nan).ravel(),
                                  np.where(both.ravel(), np.minimum(*lo), np.nan))
    hi = np.where(xp, xv, -np.inf).ravel(), np.where(yp, yv, -np.inf).ravel()
    np.testing.assert_array_equal(got["hi"].to_numpy(fill=np.nan).ravel(),
                                  np.where(both.ravel(), np.maximum(*hi), np.nan))
    # x's entries where y has none or a larger one: rows 0 (1 < 2) and 2 (no y)
    np.testing.assert_array_equal(got["better"].to_numpy(fill=np.nan).ravel(), [1.0, np.nan, 5.0, np.nan])
    with pytest.raises(DsplaError, match="beyond the range of float64"):
        parse("input x : sparse[n, 1]\ny = x * 1e999\noutput y\n")
    for prog in ("input x : sparse[n, 1]\ninf = x\noutput inf\n", "input inf : sparse[n, 1]\noutput inf\n"):
        with pytest.raises(DsplaError, match="inf is float64's infinity"):
            parse(prog)
