"""gather (C[i] = x[idx[i]]) and build into a column with min / max (numpy's scatter), against
numpy with GraphBLAS semantics (a missing entry is not a zero), every dtype, P = 1..4."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from gbsem import DTYPES, check, rand, rng_for, run, to_sparse

import dspla as dp
from dspla.frontend.parser import parse

N, M = 9, 13


@pytest.mark.parametrize("P", [1, 2, 4])
@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_equals_numpy(dtype, P):
    rng = rng_for("gather", dtype, P)
    xv, xp = rand(rng, (N, 1), dtype)
    at = rng.integers(0, N, M)
    ap = rng.random(M) < 0.8
    X, I = dp.vector("x", "n", dtype, kind="sparse"), dp.vector("i", "m", "int64", kind="sparse")
    f = dp.function({"g": dp.gather(X, I)})
    idx = sp.csr_array((at[ap], (np.flatnonzero(ap), np.zeros(ap.sum(), int))), shape=(M, 1))
    got = run(f, {"x": to_sparse((xv, xp)), "i": idx}, P)
    want_p = ap & xp[at, 0]
    want_v = np.where(want_p, xv[at, 0], 0).astype(xv.dtype)
    check(got["g"], (want_v.reshape(M, 1), want_p.reshape(M, 1), (M,)))


@pytest.mark.parametrize("P", [1, 3])
def test_gather_of_full_vectors_and_of_itself(P):
    """f[f] on a full parent vector (FastSV's grandparents), read in place."""
    f = np.array([0, 0, 1, 2, 2, 4, 6, 6, 7])
    F = dp.vector("f", "n", "int64")
    fn = dp.function({"gf": dp.gather(F, F), "g2": dp.gather(F * 10, F)})
    got = run(fn, {"f": f}, P)
    check(got["gf"], (f[f].reshape(-1, 1), np.ones((N, 1), bool), (N,)))
    check(got["g2"], ((10 * f)[f].reshape(-1, 1), np.ones((N, 1), bool), (N,)))


def test_gather_errors():
    X, I = dp.vector("x", "n"), dp.vector("i", "m", "int64")
    f = dp.function({"g": dp.gather(X, I)})
    with pytest.raises(dp.InputError, match="position 9 is outside the vector's 9 entries"):
        f(x=np.ones(N), i=np.array([1, 9]))
    with pytest.raises(dp.DomainMismatch, match="positions are integers"):
        dp.gather(X, dp.vector("j", "m"))
    with pytest.raises(dp.DimensionMismatch, match="two vectors"):
        dp.gather(dp.dense("A", ("n", 2)), I)
    prog = parse("input x : vector[n]\ninput i : vector[m] int64\ng = gather(x, i)\noutput g\n")
    assert dict(prog.outputs)["g"] == dp.gather(X, I).node


@pytest.mark.parametrize("P", [1, 2, 4])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
@pytest.mark.parametrize("op", ["min", "max"])
def test_build_a_column_with_repeats(op, dtype, P):
    """build(rows, 0, values, n, 1, dup_op=min/max): full and partly present triples."""
    rng = rng_for("build-col", op, dtype, P)
    e = 30
    rows = rng.integers(0, N, e)
    vals, _ = rand(rng, (e, 1), dtype, full=True)
    R, Z, V = (dp.vector(k, "e", t, kind="sparse") for k, t in (("R", "int64"), ("Z", "int64"), ("V", dtype)))
    f = dp.function({"c": dp.build(R, Z, V, N, 1, dup_op=op)})
    for has in (np.ones(e, bool), rng.random(e) < 0.7):
        def col(v, h=has):
            return sp.csr_array((v[h], (np.flatnonzero(h), np.zeros(h.sum(), int))), shape=(e, 1))

        got = run(f, {"R": col(rows), "Z": col(np.zeros(e, np.int64)), "V": col(vals[:, 0])}, P)
        wv, wp = np.zeros((N, 1), vals.dtype), np.zeros((N, 1), bool)
        pick = np.minimum if op == "min" else np.maximum
        for k in np.flatnonzero(has):   # the oracle: one triple at a time
            wv[rows[k], 0] = pick(wv[rows[k], 0], vals[k, 0]) if wp[rows[k], 0] else vals[k, 0]
            wp[rows[k], 0] = True
        check(got["c"], (wv, wp))


@pytest.mark.parametrize("P", [2, 4])
def test_distributed_gather_asks_the_owners(P):
    """With the vectors distributed by rows (a graph partitions n), each rank asks the owners of
    its positions for their entries: two words per position another rank owns (asked,
    answered), counted here from the block partition alone; nothing is gathered whole."""
    from harness import run_dist

    n = 48
    rng = np.random.default_rng(P)
    A = sp.random_array((n, n), density=0.1, random_state=P, format="csr")
    x, at = rng.random(n), rng.integers(0, n, n)
    X, I = dp.vector("x", "n"), dp.vector("i", "n", "int64")
    f = dp.function({"g": dp.gather(X, I), "y": dp.sparse("A", ("n", "n")) @ X})
    got, stats = run_dist(f, {"A": A, "x": x, "i": at}, P, partition="block", plan="p2p1d")
    np.testing.assert_array_equal(got["g"].to_numpy()[:, 0], x[at])
    owner = np.arange(n) * P // n   # (block rows: row i on process i P / n)
    product = stats["products"][0]["words_sent_total"] if stats["products"] else 0
    assert stats["words_sent_total"] - product == 2 * int((owner != owner[at]).sum())   # (whole: n more a rank)
    assert "neither vector is gathered whole" in f.explain(np=P, A=A, x=x, i=at, partition="block", plan="p2p1d")
    at[n // 2] = n + 3   # a position outside x, on one rank only: every rank stops with its message
    with pytest.raises(dp.InputError, match=f"position {n + 3} is outside the vector's {n} entries"):
        run_dist(f, {"A": A, "x": x, "i": at}, P, partition="block", plan="p2p1d")


@pytest.mark.parametrize("P", [2, 3])
def test_distributed_gather_across_two_partitioned_dims(P):
    """x over n (a graph partitions it), idx over m (another graph partitions that), x with
    missing entries: C has idx's rows and layout, present where idx and x[idx] are."""
    from harness import run_dist

    n, m = 30, 44
    rng = np.random.default_rng(10 + P)
    xv, xp = rng.random(n), rng.random(n) < 0.7
    at, ap = rng.integers(0, n, m), rng.random(m) < 0.8
    x = sp.csr_array((xv[xp], (np.flatnonzero(xp), np.zeros(xp.sum(), int))), shape=(n, 1))
    idx = sp.csr_array((at[ap], (np.flatnonzero(ap), np.zeros(ap.sum(), int))), shape=(m, 1))
    A = sp.random_array((n, n), density=0.15, random_state=P, format="csr")
    B = sp.random_array((m, m), density=0.15, random_state=P + 1, format="csr")
    X, I = dp.vector("x", "n", kind="sparse"), dp.vector("i", "m", "int64", kind="sparse")
    f = dp.function({"g": dp.gather(X, I), "y": dp.sparse("A", ("n", "n")) @ X,
                     "z": dp.sparse("B", ("m", "m")) @ dp.cast(I, "float64")})
    got, _ = run_dist(f, {"A": A, "B": B, "x": x, "i": idx}, P, partition="random", plan="p2p1d")
    want_p = ap & xp[at]
    assert np.array_equal(got["g"].present()[:, 0], want_p)
    np.testing.assert_array_equal(got["g"].to_numpy(fill=0.0)[:, 0][want_p], xv[at][want_p])
    assert "FetchGather" in f.explain(np=P, A=A, B=B, x=x, i=idx, partition="random", plan="p2p1d")


def test_gather_writes_into_its_last_result_only_when_nothing_holds_it():
    """A full gather's values go into the matrix its step made last time when that one is free;
    a result the caller still holds is never written into, and a loop's carried value reads right."""
    n = 50
    rng = np.random.default_rng(1)
    F = dp.vector("f", "n", "int64")
    X = dp.vector("x", "n")
    f = dp.function({"g": dp.gather(X, F)})
    xs = [rng.random(n) for _ in range(4)]
    at = rng.integers(0, n, n)
    held = [f(x=x, f=at)["g"] for x in xs]   # every result kept by the caller
    for x, g in zip(xs, held):
        np.testing.assert_array_equal(g.to_numpy().ravel(), x[at])
    for x in xs:   # results let go at once: the step writes into its last one
        np.testing.assert_array_equal(f(x=x, f=at)["g"].to_numpy().ravel(), x[at])
