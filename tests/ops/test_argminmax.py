"""argmin/argmax against dense numpy (tests/ops/gbsem.py): the position of the best entry present
per row or per column, ties to the lowest index, missing where a row (column) has no entry; every
dtype, both front ends, the reference executor and P = 1..4 (every layout: the axis whole on each
rank, or split, where two result-sized Allreduces combine the pieces), the words moved (never the
operand: independent of its rows), and no gradient through a position."""
import numpy as np
import pytest
import scipy.sparse as sp
from gbsem import DTYPES, check, rand, rng_for, run, to_sparse

import dspla as dp
from dspla.frontend.parser import parse
from dspla.function import Function
from tests.harness import run_dist

N = 11


def _arg(x, which, axis):
    """(values, present) of argmin/argmax of x = (values, present) along 'rows' (n x 1) or 'cols'."""
    vals, pres = x
    fill = np.inf if which == "argmin" else -np.inf   # (the values are small exact numbers: ints, k/4)
    key = np.where(pres, vals.astype(np.float64), fill)
    best = np.argmin if which == "argmin" else np.argmax   # (the first of equal ones: the lowest index)
    ax = 1 if axis == "rows" else 0
    idx = best(key, axis=ax).astype(np.int64)
    has = pres.any(axis=ax)
    shape = (vals.shape[0], 1) if axis == "rows" else (1, vals.shape[1])
    return np.where(has, idx, 0).reshape(shape), has.reshape(shape)


def _outputs(X):
    return {f"{w}_{a}": getattr(dp, w)(X, a) for w in ("argmin", "argmax") for a in ("rows", "cols")}


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_one_process_and_the_reference(dtype):
    """(run() at P = 1 also checks the one-process run against the reference executor.)"""
    rng = rng_for("argminmax", dtype)
    a = rand(rng, (N, 5), dtype, density=0.4)
    A = dp.sparse("A", ("n", 5), dtype)
    got = run(dp.function({**_outputs(A), "dyn": dp.argmax(dp.select(A, "offdiag"), "cols")}), {"A": to_sparse(a)}, 1)
    for name in ("argmin_rows", "argmin_cols", "argmax_rows", "argmax_cols"):
        which, axis = name.split("_")
        check(got[name], _arg(a, which, axis), name)
    off = (a[0], a[1] & ~np.eye(N, 5, dtype=bool))
    check(got["dyn"], _arg(off, "argmax", "cols"))


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_distributed_every_layout(P):
    """X by rows (dynamic) by 'rows': local; by 'cols': split over the ranks. Xᵀ by columns, the
    same two cases the other way; A static (computed at planning); ties everywhere (ints 0..5)."""
    rng = rng_for("argminmax-dist", P)
    a = rand(rng, (N, 6), "uint8", density=0.5)
    A = dp.sparse("A", ("n", 6), "uint8")
    X = A * 2
    f = dp.function({**_outputs(X), **{f"t_{k}": v for k, v in _outputs(X.T).items()},
                     "static": dp.argmin(A, "cols")})
    got = run(f, {"A": to_sparse(a)}, P)
    x = ((a[0] * 2).astype(np.uint8), a[1])
    xt = (x[0].T, x[1].T)
    for name in ("argmin_rows", "argmin_cols", "argmax_rows", "argmax_cols"):
        which, axis = name.split("_")
        check(got[name], _arg(x, which, axis), name)
        check(got[f"t_{name}"], _arg(xt, which, axis), f"t_{name}")
    check(got["static"], _arg(a, "argmin", "cols"))


@pytest.mark.parametrize("P", [1, 3])
def test_a_vectors_argmin_is_a_scalar(P):
    rng = rng_for("argmin-vector", P)
    v = rand(rng, (N, 1), "float64", density=0.6)
    V = dp.vector("v", "n", "float64", kind="sparse")
    got = run(dp.function({"i": dp.argmin(V), "j": dp.argmax(V * -1.0), "r": dp.argmin(V, "rows")}),
              {"v": to_sparse(v)}, P)
    want = _arg(v, "argmin", "cols")
    check(got["i"], (want[0], want[1], ()))
    check(got["j"], (want[0], want[1], ()))
    check(got["r"], (np.zeros((N, 1), np.int64), v[1], (N,)))


def test_empty_rows_and_columns_are_missing():
    a = sp.csr_array(([3.0, 1.0, 1.0], ([0, 0, 2], [1, 3, 1])), shape=(4, 5))
    A = dp.sparse("A", (4, 5))
    out = dp.function({"r": dp.argmin(A), "c": dp.argmax(A, "cols")})(A=a)
    r, c = out["r"].to_numpy(fill=-1), out["c"].to_numpy(fill=-1)
    assert r.ravel().tolist() == [3, -1, 1, -1]      # row 0: 1.0 at column 3 beats 3.0 at 1
    assert c.ravel().tolist() == [-1, 0, -1, 0, -1]  # column 1: 3.0 at row 0 beats 1.0 at row 2


FILE = """
input A : sparse[n, 6]
X = A * 2.0
lo = argmin(X, cols)
hi = argmax(X)
output lo, hi
"""


@pytest.mark.parametrize("P", [1, 2, 4])
def test_in_a_dspla_file(P):
    prog = parse(FILE)
    A = dp.sparse("A", ("n", 6))
    X = A * 2.0
    assert dict(prog.outputs)["lo"] == dp.argmin(X, "cols").node
    assert dict(prog.outputs)["hi"] == dp.argmax(X).node
    rng = rng_for("argmin-file", P)
    a = rand(rng, (N, 6), "float64", density=0.5)
    got = run(Function(prog), {"A": to_sparse(a)}, P)
    x = (a[0] * 2.0, a[1])
    check(got["lo"], _arg(x, "argmin", "cols"))
    check(got["hi"], _arg(x, "argmax", "rows"))


@pytest.mark.parametrize("P", [2, 3, 4])
def test_split_axis_moves_two_result_sized_vectors_not_the_operand(P):
    """argmin over a column split by rows: the words are the same for 40 rows and for 400
    (two Allreduces of the 1 x 8 result), explain prints them and a run measures the same."""
    A = dp.sparse("A", ("n", 8))
    f = dp.function({"c": dp.argmin(A * 2.0, "cols")})
    words = []
    for n in (40, 400):
        a = sp.random_array((n, 8), density=0.3, random_state=n + P, format="csr")
        text = str(f.explain(P, A=a, partition="block"))
        assert "argmin[cols]" in text
        line = next(ln for ln in text.splitlines() if "moved outside products" in ln)
        predicted = int(line.rsplit("words sent, all ranks: ", 1)[1])
        out, stats = run_dist(f, {"A": a}, P, partition="block")
        assert stats["words_sent_total"] == predicted > 0
        words.append(predicted)
        dense = a.toarray()
        np.testing.assert_array_equal(out["c"].to_numpy(fill=-1).ravel(),
                                      np.where((dense != 0).any(axis=0), np.argmin(np.where(dense != 0, dense, np.inf),
                                                                              axis=0), -1))
    assert words[0] == words[1]


def test_errors_and_no_gradient():
    A = dp.sparse("A", ("n", 4))
    with pytest.raises(ValueError, match="axis is 'rows' or 'cols'"):
        dp.argmin(A, "all")
    with pytest.raises(dp.UnknownNameError, match="diagonal") as e:
        parse("input A : sparse[n, 4]\ni = argmin(A, diagonal)\noutput i\n")
    assert e.value.span is not None and e.value.span.line == 2
    W = dp.param("W", (4, 3))
    loss = dp.reduce_all(dp.cast(dp.argmax(dp.mxm(A, W), "rows"), "float64") * 1.0) + dp.reduce_all(W)
    f = dp.function({"g": dp.grad(loss, W), "loss": loss})
    a = sp.random_array((6, 4), density=0.5, random_state=0, format="csr")
    g = f(A=a, W=np.random.default_rng(0).random((4, 3)))["g"].to_numpy()
    np.testing.assert_array_equal(g, np.ones((4, 3)))   # only reduce_all(W)'s: the positions have none


def test_at_once_on_values():
    a = sp.csr_array(([3.0, 1.0, 1.0, 5.0], ([0, 0, 2, 3], [1, 3, 1, 0])), shape=(4, 5))
    got = dp.argmax(dp.array(a), "cols").to_numpy(fill=-1)
    assert got.ravel().tolist() == [3, 0, -1, 0, -1]
