"""extract and assign against dense numpy (tests/ops/gbsem.py), every built-in dtype, masks and
accumulators, at P = 1..4; and the forms their int indices give (a row is a vector, an entry a
scalar)."""
import numpy as np
import pytest
from gbsem import DTYPES, accumulate, check, masked, rand, rng_for, run, to_sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import dspla as dp

N = 9
I = [7, 0, 3, 3]          # repeats: extract takes them in order
J = [2, 8, 5]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_extract_every_dtype(dtype, P):
    rng = rng_for("extract", dtype, P)
    a = rand(rng, (N, N), dtype)
    A = dp.sparse("A", ("n", "n"), dtype)
    f = dp.function({"rows": A[I], "sub": A[I, J], "cols": A[:, 2:6], "row": A[4, :], "col": A[:, 1],
                     "one": A[2, 3], "sl": A[1:8:3, 0:9:2]})
    got = run(f, {"A": to_sparse(a)}, P)
    vals, pres = a
    ix = np.ix_(I, J)
    check(got["rows"], (vals[I], pres[I], (4, N)), "A[I]")
    check(got["sub"], (vals[ix], pres[ix], (4, 3)), "A[I, J]")
    check(got["cols"], (vals[:, 2:6], pres[:, 2:6]), "A[:, 2:6]")
    check(got["row"], (vals[4][:, None], pres[4][:, None], (N,)), "A[4, :]")
    check(got["col"], (vals[:, [1]], pres[:, [1]], (N,)), "A[:, 1]")
    check(got["one"], (vals[2:3, 3:4], pres[2:3, 3:4], ()), "A[2, 3]")
    check(got["sl"], (vals[1:8:3, ::2], pres[1:8:3, ::2]), "A[1:8:3, ::2]")


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_extract_of_a_computed_value_moves_its_rows(P):
    """X is dynamic (a dense input times 2): rows I gathered from their owners, columns where they are."""
    rng = rng_for("extract-dyn", P)
    x = rand(rng, (N, 3), "float64", full=True)
    v = rand(rng, (N, 1), "int64", full=True)
    a = rand(rng, (N, N), "float64")
    X, V, A = dp.dense("X", ("n", 3)), dp.vector("v", "n", "int64"), dp.sparse("A", ("n", "n"))   # A: n is partitioned
    Y = X * 2
    f = dp.function({"a": Y[I], "b": Y[:, [2, 0]], "c": (V + 1)[J], "d": (V + 1)[4], "p": A @ X})
    got = run(f, {"X": x[0], "v": v[0][:, 0], "A": to_sparse(a)}, P)
    check(got["a"], (2 * x[0][I], x[1][I]))
    check(got["b"], (2 * x[0][:, [2, 0]], x[1][:, [2, 0]]))
    check(got["c"], ((v[0] + 1)[J], v[1][J], (3,)))
    check(got["d"], ((v[0] + 1)[4:5], v[1][4:5], ()))


PLUS = np.add
MASKS = [None, ("value", False, False), ("structure", True, False), ("value", False, True), ("structure", False, True)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_assign_every_dtype(dtype):
    rng = rng_for("assign-dt", dtype)
    c, a = rand(rng, (N, N), dtype), rand(rng, (len(I[:3]), len(J)), dtype)
    C, A = dp.sparse("C", ("n", "n"), dtype), dp.sparse("A", (3, 3), dtype)
    f = dp.function({"out": dp.assign(C, A, [7, 0, 3], J)})
    got = run(f, {"C": to_sparse(c), "A": to_sparse(a)}, 1)
    wv, wp = c[0].copy(), c[1].copy()
    ix = np.ix_([7, 0, 3], J)
    wv[ix], wp[ix] = a
    check(got["out"], (wv, wp))


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("accum", [None, "plus"])
@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_assign_masked_accumulated(mask, accum, P):
    rng = rng_for("assign", mask, accum, P)
    rows = [7, 0, 3]
    c, a, m = rand(rng, (N, N), "int64"), rand(rng, (3, 3), "int64"), rand(rng, (N, N), "int64")
    C, A, M = dp.sparse("C", ("n", "n"), "int64"), dp.sparse("A", (3, 3), "int64"), dp.sparse("M", ("n", "n"), "int64")
    kw = {} if mask is None else {"mask": M, "structure": mask[0] == "structure", "complement": mask[1],
                                  "replace": mask[2]}
    f = dp.function({"out": dp.assign(C, A, rows, J, accum=accum, **kw),
                     "s": dp.assign(C, 3, None, [1, 4], accum=accum, **kw)})
    got = run(f, {"C": to_sparse(c), "A": to_sparse(a), **({} if mask is None else {"M": to_sparse(m)})}, P)
    for name, region, val in (("out", np.ix_(rows, J), a), ("s", np.ix_(range(N), [1, 4]),
                                                            (np.full((N, 2), 3), np.ones((N, 2), bool)))):
        z = [c[0].copy(), c[1].copy()]
        if accum is None:
            z[0][region], z[1][region] = val
        else:
            z[0][region], z[1][region] = accumulate((c[0][region], c[1][region]), val, PLUS)
        want = tuple(z) if mask is None else masked(z, c, m, complement=mask[1], structure=mask[0] == "structure",
                                                    replace=mask[2])
        check(got[name], want, f"{name} mask={mask} accum={accum} P={P}")


@pytest.mark.parametrize("P", [1, 3])
def test_assign_a_vector_into_a_row_and_into_a_vector(P):
    rng = rng_for("assign-vec", P)
    c, u, w = rand(rng, (N, N), "float64"), rand(rng, (N, 1), "float64", full=True), rand(rng, (N, 1), "float64")
    C, U, W = dp.sparse("C", ("n", "n")), dp.vector("u", "n"), dp.vector("w", "n", kind="sparse")
    f = dp.function({"row": dp.assign(C, U, 2, None), "col": dp.assign(C, U, None, 5), "v": dp.assign(W, 1.5, [0, 4]),
                     "vs": dp.assign(W, U[[1, 2]], [6, 8])})
    got = run(f, {"C": to_sparse(c), "u": u[0][:, 0], "w": to_sparse(w)}, P)
    r = [c[0].copy(), c[1].copy()]
    r[0][2], r[1][2] = u[0][:, 0], True
    check(got["row"], tuple(r))
    k = [c[0].copy(), c[1].copy()]
    k[0][:, 5], k[1][:, 5] = u[0][:, 0], True
    check(got["col"], tuple(k))
    v = [w[0].copy(), w[1].copy()]
    v[0][[0, 4]], v[1][[0, 4]] = 1.5, True
    check(got["v"], (*v, (N,)))
    s = [w[0].copy(), w[1].copy()]
    s[0][[6, 8], 0], s[1][[6, 8], 0] = u[0][[1, 2], 0], True
    check(got["vs"], (*s, (N,)))


def test_indices_are_checked_where_written():
    A = dp.sparse("A", (4, 4))
    with pytest.raises(dp.DimensionMismatch, match="out of range"):
        A[5]
    with pytest.raises(dp.DimensionMismatch, match="repeated"):
        dp.assign(A, 1, [1, 1])
    B = dp.sparse("B", ("n", "n"))
    with pytest.raises(dp.DimensionMismatch, match="non-negative start and stop"):
        B[2:]
    with pytest.raises(dp.DimensionMismatch, match="region"):
        dp.assign(B, A, [0, 1], [0, 1])


def test_an_exchange_is_shown_and_counted():
    """Rows of a computed value by index: explain names the exchange; the run counts its words."""
    rng = rng_for("extract-words")
    a, x = rand(rng, (N, N), "float64"), rand(rng, (N, 3), "float64", full=True)
    A, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 3))
    f = dp.function({"a": (X * 2)[I], "p": A @ X})
    inputs = {"A": to_sparse(a), "X": x[0]}
    assert "moved outside products (each rank): AllgatherSparse x1" in f.explain(np=3, **inputs)
    from harness import run_dist
    _, with_extract = run_dist(f, inputs, 3, partition="random", plan="p2p1d")
    _, without = run_dist(dp.function({"p": A @ X}), inputs, 3, partition="random", plan="p2p1d")
    moved = with_extract["words_sent_total"] - without["words_sent_total"]
    assert moved == 2 * 3 * 4   # each of 4 extracted rows x 3 values sent by its owner to the 2 others


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_extract_then_assign_back_is_the_identity(data):
    """For any index lists (repeats in extract, unique in assign): A[I, J] equals numpy's, and
    assigning A[I, J] back into A at (I, J) gives A again."""
    n, m = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))
    rows = data.draw(st.lists(st.integers(0, n - 1), max_size=8))
    cols = data.draw(st.lists(st.integers(0, m - 1), min_size=1, max_size=8, unique=True))
    urows = sorted(set(rows)) or [0]
    a = rand(rng_for("hyp", n, m, rows, cols), (n, m), "int16")
    A = dp.sparse("A", (n, m), "int16")
    f = dp.function({"x": A[rows, cols], "back": dp.assign(A, A[urows, cols], urows, cols)})
    got = run(f, {"A": to_sparse(a)}, 1)
    ix = np.ix_(rows, cols)
    check(got["x"], (a[0][ix], a[1][ix]))
    check(got["back"], a)


@pytest.mark.parametrize("P", [1, 3])
def test_extract_by_columns_and_into_an_output(P):
    """A value distributed by columns (Xᵀ): columns J from their owners; extract(..., out=C,
    mask=M, accum=plus) writes as GrB_extract does: C<M> accum= A(I, J)."""
    rng = rng_for("extract-cols", P)
    a, x = rand(rng, (N, N), "float64"), rand(rng, (N, 3), "float64", full=True)
    c, m = rand(rng, (3, 2), "float64"), rand(rng, (3, 2), "bool", full=True)
    A, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 3))
    C, M = dp.sparse("C", (3, 2)), dp.dense("M", (3, 2), "bool")
    Y = (X * 2).T   # 3 x n: by columns
    f = dp.function({"cols": Y[:, [4, 1, 4]], "one": Y[1, 3], "into": dp.extract(Y, None, [0, 8], out=C, mask=M,
                                                                                  accum="plus"),
                     "p": A @ X})
    got = run(f, {"A": to_sparse(a), "X": x[0], "C": to_sparse(c), "M": m[0]}, P)
    y = 2 * x[0].T
    check(got["cols"], (y[:, [4, 1, 4]], np.ones((3, 3), bool)))
    check(got["one"], (y[1:2, 3:4], np.ones((1, 1), bool), ()))
    t = (y[:, [0, 8]], np.ones((3, 2), bool))
    z = accumulate(c, t, np.add)
    check(got["into"], masked(z, c, m))
