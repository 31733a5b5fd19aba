"""kronecker, diag, ewise_union, select by position and by a Python predicate, apply_index,
power, isequal/isclose, build and resize against dense numpy (tests/ops/gbsem.py), over the
built-in dtypes and at P = 1..4; and vectors and scalars as results."""
import numpy as np
import pytest
import scipy.sparse as sp
from gbsem import DTYPES, check, rand, rng_for, run, to_sparse

import dspla as dp

N = 9
NUMERIC = [d for d in DTYPES if d != "bool"]


def _kron(a, b, op):
    (av, ap), (bv, bp) = a, b
    vals = op(av[:, None, :, None], bv[None, :, None, :]).reshape(av.shape[0] * bv.shape[0], -1)
    pres = (ap[:, None, :, None] & bp[None, :, None, :]).reshape(vals.shape)
    return np.where(pres, vals, 0).astype(vals.dtype), pres


@pytest.mark.parametrize("dtype", NUMERIC)
def test_kronecker_every_dtype(dtype):
    rng = rng_for("kron", dtype)
    a, b = rand(rng, (3, 4), dtype), rand(rng, (2, 3), dtype)
    A, B = dp.sparse("A", (3, 4), dtype), dp.sparse("B", (2, 3), dtype)
    f = dp.function({"k": dp.kronecker(A, B, "times"), "m": dp.kron(A, B, "max")})
    got = run(f, {"A": to_sparse(a), "B": to_sparse(b)}, 1)
    with np.errstate(over="ignore"):
        check(got["k"], _kron(a, b, np.multiply))
    check(got["m"], _kron(a, b, np.maximum))


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_kronecker_of_a_distributed_value(P):
    """X by rows: X ⊗ B with a one-row B is made where X's rows are; B ⊗ X (B one row) gathers X;
    B2 ⊗ X[I] takes X's rows I from their owners first."""
    rng = rng_for("kron-dist", P)
    a, b1, b2 = rand(rng, (N, 4), "int64"), rand(rng, (1, 3), "int64"), rand(rng, (2, 2), "int64", full=True)
    A, B1, B2 = dp.sparse("A", ("n", 4), "int64"), dp.sparse("B1", (1, 3), "int64"), dp.dense("B2", (2, 2), "int64")
    X = A * 2   # dynamic: computed, not planned
    f = dp.function({"k1": dp.kronecker(X, B1, "plus"), "k2": dp.kronecker(B1, X, "times"),
                     "k3": dp.kronecker(B2, X[[0, 3, 5]], "minus")})
    got = run(f, {"A": to_sparse(a), "B1": to_sparse(b1), "B2": b2[0]}, P)
    x = (2 * a[0], a[1])
    check(got["k1"], _kron(x, b1, np.add))
    check(got["k2"], _kron(b1, x, np.multiply))
    check(got["k3"], _kron(b2, (x[0][[0, 3, 5]], x[1][[0, 3, 5]]), np.subtract))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float32", "float64"])
@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_diag_both_ways(dtype, P):
    rng = rng_for("diag", dtype, P)
    a, v = rand(rng, (N, N), dtype, density=0.7), rand(rng, (N, 1), dtype, density=0.7)
    A, V = dp.sparse("A", ("n", "n"), dtype), dp.vector("v", "n", dtype, kind="sparse")
    S = dp.sparse("S", (4, 5), dtype)
    s = rand(rng, (4, 5), dtype, density=0.8)
    f = dp.function({"d": dp.diag(A), "m": dp.diag(V), "d1": dp.diag(S, 1), "dm": dp.diag(S, -2),
                     "dd": dp.diag(dp.diag(V)), "vx": dp.diag(V[[1, 2, 3]], -1)})
    got = run(f, {"A": to_sparse(a), "v": to_sparse(v), "S": to_sparse(s)}, P)
    idx = np.arange(N)
    check(got["d"], (a[0][idx, idx][:, None], a[1][idx, idx][:, None], (N,)))
    mv, mp = np.zeros((N, N), a[0].dtype), np.zeros((N, N), bool)
    mv[idx, idx], mp[idx, idx] = v[0][:, 0], v[1][:, 0]
    check(got["m"], (mv, mp, (N, N)))
    check(got["dd"], (v[0], v[1], (N,)))
    i1 = np.arange(4)   # S[i, i + 1]: 4 entries
    check(got["d1"], (s[0][i1, i1 + 1][:, None], s[1][i1, i1 + 1][:, None], (4,)))
    i2 = np.arange(2)   # S[i + 2, i]: 2 entries
    check(got["dm"], (s[0][i2 + 2, i2][:, None], s[1][i2 + 2, i2][:, None], (2,)))
    xv, xp = np.zeros((4, 4), a[0].dtype), np.zeros((4, 4), bool)
    xv[np.arange(1, 4), np.arange(3)], xp[np.arange(1, 4), np.arange(3)] = v[0][1:4, 0], v[1][1:4, 0]
    check(got["vx"], (xv, xp))


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("P", [1, 4])
def test_ewise_union(dtype, P):
    rng = rng_for("union", dtype, P)
    a, b = rand(rng, (N, 4), dtype), rand(rng, (N, 4), dtype)
    A, B = dp.sparse("A", ("n", 4), dtype), dp.sparse("B", ("n", 4), dtype)
    f = dp.function({"u": dp.ewise_union(A, B, "max", 2, 3), "v": dp.ewise_union(A, B, "first", 1, 0)})
    got = run(f, {"A": to_sparse(a), "B": to_sparse(b)}, P)
    (av, ap), (bv, bp) = a, b
    dt = av.dtype
    left, right = np.where(ap, av, dt.type(2)), np.where(bp, bv, dt.type(3))
    check(got["u"], (np.where(ap | bp, np.maximum(left, right), 0).astype(dt), ap | bp))
    check(got["v"], (np.where(ap, av, np.where(bp, dt.type(1), 0)).astype(dt), ap | bp))


POSITIONAL = {"tril": lambda r, c, k: c - r <= k, "triu": lambda r, c, k: c - r >= k,
              "diag": lambda r, c, k: c - r == k, "offdiag": lambda r, c, k: c - r != k,
              "rowle": lambda r, c, k: r <= k, "rowgt": lambda r, c, k: r > k,
              "colle": lambda r, c, k: c <= k, "colgt": lambda r, c, k: c > k}


def _rc(shape):
    return np.indices(shape)


@pytest.mark.parametrize("name", sorted(POSITIONAL))
@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_select_and_apply_by_position(name, P):
    rng = rng_for("positional", name, P)
    a = rand(rng, (N, N), "float64", density=0.6)
    A = dp.sparse("A", ("n", "n"))
    X = A + 1   # dynamic: each rank's piece with its global ids
    f = dp.function({"s": dp.select(X, name, 2), "s0": dp.select(A, name, -1), "ap": dp.apply_index(X, name, 3)})
    got = run(f, {"A": to_sparse(a)}, P)
    r, c = _rc((N, N))
    for out, src, k in (("s", a[0] + 1, 2), ("s0", a[0], -1)):
        keep = a[1] & POSITIONAL[name](r, c, k)
        check(got[out], (np.where(keep, src, 0), keep), f"select {name} {k}")
    check(got["ap"], (np.where(a[1], POSITIONAL[name](r, c, 3), False), a[1]), f"apply {name}")


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_index_unary_values_and_a_python_predicate(P):
    rng = rng_for("index-values", P)
    a = rand(rng, (N, 5), "int32", density=0.6)
    A = dp.sparse("A", ("n", 5), "int32")
    X = A * 3

    def odd_sum(values, rows, cols, thunk):   # numpy arrays in, one bool per entry out
        return (values + rows + cols) % 2 == thunk

    f = dp.function({"ri": dp.apply_index(X, "rowindex", 1), "ci": dp.apply_index(X, "colindex"),
                     "di": dp.apply_index(X, "diagindex", -2), "odd": dp.select(X, odd_sum, 1),
                     "v": dp.select(X, "valuegt", 0), "le": dp.select(X, "valuele", 3)})
    got = run(f, {"A": to_sparse(a)}, P)
    r, c = _rc((N, 5))
    p = a[1]
    check(got["ri"], (np.where(p, r + 1, 0), p))
    check(got["ci"], (np.where(p, c, 0), p))
    check(got["di"], (np.where(p, c - r - 2, 0), p))
    x = (3 * a[0]).astype(np.int32)
    keep = p & ((x + r + c) % 2 == 1)
    check(got["odd"], (np.where(keep, x, 0), keep))
    check(got["v"], (np.where(p & (x > 0), x, 0), p & (x > 0)))
    check(got["le"], (np.where(p & (x <= 3), x, 0), p & (x <= 3)))


@pytest.mark.parametrize("op, thunk, message", [
    ([1], 0, "unknown index-unary operator '\\[1\\]'"), ({"a": 1}, 0, "unknown index-unary operator"),
    ("rowindex", "x", "the thunk is an integer"),
    ("rowindex", 1.5, r"the thunk is an integer \(an offset of positions\), got 1.5"),
    ("rowindex", True, "the thunk is an integer")])
def test_apply_index_refuses_what_is_not_an_operator_or_an_integer(op, thunk, message):
    """A list or dict as the operator raised 'unhashable type'; a fraction was cut to an int."""
    with pytest.raises(dp.DsplaError, match=message):
        dp.apply_index(dp.sparse("A", ("n", 5)), op, thunk)


def _matmul(a, b, sr):
    (av, ap), (bv, bp) = a, b
    pairs = ap[:, :, None] & bp[None, :, :]
    if sr == "plus_times":
        vals = np.where(pairs, av[:, :, None] * bv[None, :, :], 0).sum(axis=1)
    else:   # min_plus
        vals = np.where(pairs, av[:, :, None] + bv[None, :, :], np.iinfo(np.int64).max).min(axis=1)
    pres = pairs.any(axis=1)
    return np.where(pres, vals, 0).astype(av.dtype), pres


@pytest.mark.parametrize("sr", ["plus_times", "min_plus"])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("P", [1, 3])
def test_power(sr, k, P):
    rng = rng_for("power", sr, k, P)
    a = rand(rng, (N, N), "int64", density=0.3)
    A = dp.sparse("A", ("n", "n"), "int64")
    f = dp.function({"p": dp.power(A + 0, k, sr)})
    got = run(f, {"A": to_sparse(a)}, P)
    want = a
    for _ in range(k - 1):
        want = _matmul(want, a, sr)
    check(got["p"], want)


@pytest.mark.parametrize("P", [1, 2, 4])
def test_isequal_isclose_are_bool_scalars(P):
    rng = rng_for("isequal", P)
    a = rand(rng, (N, N), "float64")
    A, B = dp.sparse("A", ("n", "n")), dp.sparse("B", ("n", "n"))
    f = dp.function({"same": dp.isequal(A, B), "self": dp.isequal(A, A + 0), "close": dp.isclose(A, B, 1e-3),
                     "closer": dp.isclose(A, B, 1e-9)})
    nudged = (a[0] * (1 + 1e-6), a[1])
    got = run(f, {"A": to_sparse(a), "B": to_sparse(nudged)}, P)
    for name, want in (("same", False), ("self", True), ("close", True), ("closer", False)):
        assert got[name][2] == () and got[name][1].all() and bool(got[name][0][0, 0]) is want, name
    fewer = (a[0], a[1] & (np.arange(N)[:, None] > 0))   # one row fewer: the patterns differ
    got = run(f, {"A": to_sparse(a), "B": to_sparse(fewer)}, P)
    assert not got["same"][0][0, 0] and not got["close"][0][0, 0]


@pytest.mark.parametrize("dtype", ["int8", "uint32", "float32", "float64", "bool"])
@pytest.mark.parametrize("P", [1, 2, 4])
def test_build_with_and_without_dup_op(dtype, P):
    rng = rng_for("build", dtype, P)
    e = 14
    i, j = rng.integers(0, N, e), rng.integers(0, 4, e)
    x = rand(rng, (e, 1), dtype, full=True)[0][:, 0]
    I, J = dp.vector("I", "e", "int64"), dp.vector("J", "e", "int64")
    X = dp.vector("X", "e", dtype)
    dup = "lor" if dtype == "bool" else "plus"
    f = dp.function({"b": dp.build(I, J, X, (N, 4), dup_op=dup)})
    got = run(f, {"I": i, "J": j, "X": x}, P)
    wv, wp = np.zeros((N, 4), x.dtype), np.zeros((N, 4), bool)
    for r, c, v in zip(i, j, x):   # the oracle: one triple at a time
        wv[r, c] = (wv[r, c] | v if dtype == "bool" else wv[r, c] + v) if wp[r, c] else v
        wp[r, c] = True
    check(got["b"], (wv, wp))
    g = dp.function({"b": dp.build(I, J, X, (N, 4))})
    with pytest.raises(dp.InputError, match="more than once"):
        g(I=np.array([1, 1]), J=np.array([2, 2]), X=np.ones(2, x.dtype))


@pytest.mark.parametrize("P", [1, 2, 4])
def test_build_uses_the_triples_all_three_vectors_hold(P):
    """A triple is used where the rows, columns and values all have an entry (the others
    dropped), each vector missing different positions."""
    rng = rng_for("build-partial", P)
    e = 40
    i, j, x = rng.integers(0, N, e), rng.integers(0, 4, e), rng.integers(1, 9, e)
    has = [rng.random(e) < 0.8 for _ in range(3)]
    I, J = dp.vector("I", "e", "int64", kind="sparse"), dp.vector("J", "e", "int64", kind="sparse")
    X = dp.vector("X", "e", "int64", kind="sparse")
    f = dp.function({"b": dp.build(I, J, X, (N, 4), dup_op="max")})
    col = [sp.csr_array((v[h], (np.flatnonzero(h), np.zeros(h.sum(), int))), shape=(e, 1)) for v, h in
           zip((i, j, x), has)]
    got = run(f, {"I": col[0], "J": col[1], "X": col[2]}, P)
    wv, wp = np.zeros((N, 4), np.int64), np.zeros((N, 4), bool)
    for k in np.flatnonzero(has[0] & has[1] & has[2]):   # the oracle: one used triple at a time
        wv[i[k], j[k]] = max(wv[i[k], j[k]], x[k]) if wp[i[k], j[k]] else x[k]
        wp[i[k], j[k]] = True
    check(got["b"], (wv, wp))


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_resize(P):
    rng = rng_for("resize", P)
    a, v = rand(rng, (N, 6), "int16"), rand(rng, (N, 1), "int16")
    A, V = dp.sparse("A", ("n", 6), "int16"), dp.vector("v", "n", "int16", kind="sparse")
    f = dp.function({"narrow": dp.resize(A, "n", 3), "wide": dp.resize(A, "n", 8), "rows": dp.resize(A, 4, 6),
                     "grow": dp.resize(A, 12, 2), "v": dp.resize(V, 5)})
    got = run(f, {"A": to_sparse(a), "v": to_sparse(v)}, P)
    check(got["narrow"], (a[0][:, :3], a[1][:, :3]))
    check(got["wide"], (np.pad(a[0], ((0, 0), (0, 2))), np.pad(a[1], ((0, 0), (0, 2)))))
    check(got["rows"], (a[0][:4], a[1][:4]))
    check(got["grow"], (np.pad(a[0][:, :2], ((0, 3), (0, 0))), np.pad(a[1][:, :2], ((0, 3), (0, 0)))))
    check(got["v"], (v[0][:5], v[1][:5], (5,)))


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_vectors_and_scalars_as_results(P):
    """mxv, vxm, an outer product, reductions to vectors and scalars, a scalar input."""
    rng = rng_for("forms", P)
    a, u = rand(rng, (N, N), "int64"), rand(rng, (N, 1), "int64", full=True)
    A, U, K = dp.sparse("A", ("n", "n"), "int64"), dp.vector("u", "n", "int64"), dp.scalar("k", "int64")
    f = dp.function({"mxv": A @ U, "vxm": dp.vxm(U, A, "min_plus"), "outer": dp.mxm(U, U.T),
                     "rows": dp.reduce_rowwise(A), "cols": dp.reduce_columnwise(A, "max"),
                     "total": dp.reduce_scalar(A), "dot": dp.reduce_all(U * U), "k2": K * 2})
    got = run(f, {"A": to_sparse(a), "u": u[0][:, 0], "k": 7}, P)
    (av, ap), uv = a, u[0]
    check(got["mxv"], _matmul(a, u, "plus_times") + ((N,),))
    at = (av.T.copy(), ap.T.copy())
    check(got["vxm"], _matmul(at, u, "min_plus") + ((N,),))
    check(got["outer"], (uv @ uv.T, np.ones((N, N), bool), (N, N)))
    check(got["rows"], (np.where(ap, av, 0).sum(1, keepdims=True), ap.any(1, keepdims=True), (N,)))
    cmax = np.where(ap, av, np.iinfo(np.int64).min).max(0)[:, None]
    check(got["cols"], (np.where(ap.any(0)[:, None], cmax, 0), ap.any(0)[:, None], (N,)))
    check(got["total"], (np.array([[np.where(ap, av, 0).sum()]]), np.ones((1, 1), bool), ()))
    check(got["dot"], (uv.T @ uv, np.ones((1, 1), bool), ()))
    check(got["k2"], (np.array([[14]]), np.ones((1, 1), bool), ()))


def test_results_present_their_form():
    A, U = dp.sparse("A", ("n", "n")), dp.vector("u", "n")
    f = dp.function({"y": A @ U, "s": dp.reduce_scalar(A), "e": dp.reduce_scalar(A * 0 + dp.select(A, "gt", 9))})
    a = np.diag(np.arange(1.0, 5.0))
    import scipy.sparse as sp
    out = f(A=sp.csr_array(a), u=np.ones(4))
    assert out["y"].shape == (4,) and out["y"].to_numpy().tolist() == [1, 2, 3, 4]
    assert out["s"].shape == () and float(out["s"]) == 10.0 and int(out["s"]) == 10 and bool(out["s"])
    assert "vector[4]" in repr(out["y"]) and "scalar" in repr(out["s"])
    with pytest.raises(ValueError, match="missing scalar"):
        float(dp.function({"m": dp.reduce_scalar(dp.select(A, "gt", 9))})(A=sp.csr_array(a))["m"])


def test_a_distributed_vector_result_goes_back_in():
    """A vector result stays distributed; passed back as an input it moves nothing and means the same."""
    from dspla.plan.options import Options
    from dspla.runtime.comm.sim import run_simulated
    from dspla.session import DistSession
    rng = rng_for("vector-back")
    a, u = rand(rng, (N, N), "float64"), np.arange(N, dtype=float)
    A, U = dp.sparse("A", ("n", "n")), dp.vector("u", "n")
    f = dp.function({"y": A @ U + U})

    def body(comm):
        s = DistSession(f.compiled, comm, Options(partition="random"))
        y = s.run({"A": to_sparse(a), "u": u} if comm.rank == 0 else None)["y"]
        y2 = s.run({"A": to_sparse(a), "u": y} if comm.rank == 0 else {"u": y})["y"]
        return y.shape, y2.shape, y2.to_numpy(fill=0)
    shape, shape2, got = run_simulated(3, body, timeout=120)[0]
    dense = np.where(a[1], a[0], 0)
    y = dense @ u + u
    assert shape == shape2 == (N,)
    np.testing.assert_allclose(got, dense @ y + y)


@pytest.mark.parametrize("dtype,P", [(d, 1) for d in DTYPES] + [(d, 3) for d in ("bool", "int8", "uint64", "float32")])
def test_every_dtype_through_products_reductions_and_unions(dtype, P):
    """A declared dtype runs through a distributed product, a reduction combined across ranks and
    a union with its transpose (integers wrap as GraphBLAS's C types do)."""
    rng = rng_for("dtypes", dtype, P)
    a, x = rand(rng, (N, N), dtype), rand(rng, (N, 2), dtype, full=True)
    A, X = dp.sparse("A", ("n", "n"), dtype), dp.dense("X", ("n", 2), dtype)
    logical = dtype == "bool"
    f = dp.function({"p": dp.mxm(A, X, "lor_land" if logical else "plus_times"), "c": dp.reduce_columnwise(A, "max"),
                     "e": dp.ewise_add(A, A.T, "max")})
    got = run(f, {"A": to_sparse(a), "X": x[0]}, P, plan="p2p1d")
    (av, ap), xv = a, x[0]
    dt = av.dtype
    if logical:
        pv = ((ap & av)[:, :, None] & xv[None, :, :]).any(1)
    else:
        pv = (np.where(ap, av, 0).astype(np.int64 if dt.kind in "iu" else dt) @ xv.astype(np.int64 if dt.kind in "iu"
                                                                                           else dt)).astype(dt)
    check(got["p"], (np.where(ap.any(1)[:, None], pv, 0).astype(dt), ap.any(1)[:, None].repeat(2, 1)))
    low = False if logical else (np.iinfo(dt).min if dt.kind in "iu" else -np.inf)
    cmax = np.where(ap, av, low).max(0)
    check(got["c"], (np.where(ap.any(0), cmax, 0).astype(dt)[:, None], ap.any(0)[:, None], (N,)))
    both = ap & ap.T
    ev = np.where(both, np.maximum(av, av.T), np.where(ap, av, av.T))
    check(got["e"], (np.where(ap | ap.T, ev, 0).astype(dt), ap | ap.T))
