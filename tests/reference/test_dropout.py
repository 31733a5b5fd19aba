"""dropout_mask against an independent oracle: splitmix64 of (seed, row, column) written with
Python integers mod 2^64, on full operands (the bitmap path) and on operands with missing
entries (the coordinate path)."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.ops.dropout import dropout_keep, dropout_keep_full
from dspla.ops.random import uniform

MASK = (1 << 64) - 1


def oracle_keep(seed, i, j, p):
    z = (seed * 0x9E3779B97F4A7C15 + i * 0xBF58476D1CE4E5B9 + j * 0x94D049BB133111EB) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    return (z >> 11) / float(1 << 53) >= p


def _mask(x, p, seed):
    S = dp.dense("S", (1, 1), dtype="int64")
    X = dp.dense("X", ("n", "f")) if isinstance(x, np.ndarray) else dp.sparse("X", ("n", "f"))
    f = dp.function(outputs={"M": dp.dropout_mask(X, p, S)})
    return f(X=x, S=np.array([[seed]]))["M"]


def test_full_operand_matches_the_oracle():
    x = np.random.default_rng(0).random((37, 11))
    for p, seed in [(0.5, 3), (0.2, 11), (0.9, 0)]:
        M = _mask(x, p, seed)
        want = np.array([[oracle_keep(seed, i, j, p) for j in range(11)] for i in range(37)])
        assert np.array_equal(M.present(), want)
        np.testing.assert_allclose(M.to_numpy(fill=0)[want], 1.0 / (1.0 - p))


def test_missing_entries_stay_missing_and_the_rest_match():
    A = sp.random_array((40, 9), density=0.3, random_state=np.random.default_rng(1), format="csr")
    M = _mask(A, 0.5, 7)
    pres = M.present()
    r, c = A.nonzero()
    want = np.zeros(A.shape, bool)
    for i, j in zip(r, c):
        want[i, j] = oracle_keep(7, int(i), int(j), 0.5)
    assert np.array_equal(pres, want)


def test_kept_fraction():
    M = _mask(np.ones((2000, 50)), 0.3, 5)
    assert abs(M.present().mean() - 0.7) < 0.01



def oracle_uniform(seed, i, j):
    z = (seed * 0x9E3779B97F4A7C15 + i * 0xBF58476D1CE4E5B9 + j * 0x94D049BB133111EB) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return ((z ^ (z >> 31)) >> 11) / float(1 << 53)


@pytest.mark.parametrize("seed", [5, -1, -(2 ** 63), 2 ** 63 - 1])
def test_masks_and_draws_for_any_int64_seed(seed):
    """The dense (broadcast) and coordinate masks and dp.random's draws against the Python-integer
    oracle, negative seeds too (their two's complement, as an int64 input holds them)."""
    rows, cols = np.arange(7), np.arange(5)
    r, c = np.repeat(rows, cols.size), np.tile(cols, rows.size)
    want = np.array([oracle_keep(seed, int(i), int(j), 0.4) for i, j in zip(r, c)])
    np.testing.assert_array_equal(dropout_keep_full(seed, rows, cols, 0.4).ravel(), want)
    np.testing.assert_array_equal(dropout_keep(seed, r, c, 0.4), want)
    np.testing.assert_array_equal(uniform(seed, r, c), [oracle_uniform(seed, int(i), int(j)) for i, j in zip(r, c)])


def test_random_draws_at_the_entries_of_columns_rows_and_matrices():
    """dp.random on a sparse column, a row and a matrix (the first two made from their
    coordinates as they are, the last built): the oracle's number at each present entry, none
    elsewhere, the same on 1, 2 and 4 processes; the column read by a product afterwards."""
    from harness import run_dist
    rng = np.random.default_rng(8)
    n = 23
    col = sp.random_array((n, 1), density=0.5, random_state=rng, format="csr")
    row = sp.random_array((1, n), density=0.5, random_state=rng, format="csr")
    mat = sp.random_array((n, 4), density=0.4, random_state=rng, format="csr")
    A = sp.random_array((n, n), density=0.2, random_state=rng, format="csr")
    X, Y, Z = dp.sparse("X", ("n", 1)), dp.sparse("Y", (1, "n")), dp.sparse("Z", ("n", 4))
    Asym, S = dp.sparse("A", ("n", "n")), dp.scalar("s", "int64")
    f = dp.function({"x": dp.random(X, S), "y": dp.random(Y, S + 1), "z": dp.random(Z, S),
                     "best": dp.mxm(Asym, dp.random(X, S), "max_second")}, inputs=[Asym, X, Y, Z, S])
    seed = 12
    inputs = {"A": A, "X": col, "Y": row, "Z": mat, "s": seed}

    def want(M, s):
        d = M.toarray() != 0
        vals = np.array([[oracle_uniform(s, i, j) if d[i, j] else 0.0 for j in range(d.shape[1])]
                         for i in range(d.shape[0])])
        return d, vals
    xp, xv = want(col, seed)
    pairs = (A.toarray() != 0) & xp[:, 0][None, :]
    best_p = pairs.any(axis=1)
    best_v = np.where(pairs, xv[:, 0][None, :], -np.inf).max(axis=1)
    for P in (1, 2, 4):
        got = f(**inputs) if P == 1 else run_dist(f, inputs, P, partition="random", seed=P)[0]
        for k, M, s in (("x", col, seed), ("y", row, seed + 1), ("z", mat, seed)):
            p, v = want(M, s)
            assert np.array_equal(got[k].present(), p), (k, P)
            np.testing.assert_array_equal(got[k].to_numpy(fill=0.0)[p], v[p])
        b = got["best"]
        assert np.array_equal(b.present()[:, 0], best_p), P
        np.testing.assert_array_equal(b.to_numpy(fill=0.0)[:, 0][best_p], best_v[best_p])


def test_random_on_a_column_draws_the_oracles_numbers_as_a_wider_matrix_does():
    # a column's draws (its rows alone, one column id) and column 0 of an n x 2 matrix with the
    # same entries there (every entry's (row, column) hashed): both the oracle's numbers
    from harness import run_dist
    n = 300
    rng = np.random.default_rng(5)
    rows = np.sort(rng.choice(n, 120, replace=False))
    v = sp.csr_array((np.ones(rows.size), (rows, np.zeros(rows.size, int))), shape=(n, 1))
    W = sp.csr_array((np.ones(rows.size + 1), (np.r_[rows, 0], np.r_[np.zeros(rows.size, int), 1])), shape=(n, 2))
    x, w, seed = dp.sparse("x", ("n", 1)), dp.sparse("w", ("n", 2)), dp.scalar("seed", "int64")
    f = dp.function({"r": dp.random(x, seed), "q": dp.random(w, seed)}, inputs=[x, w, seed])
    want = np.full(n, -1.0)
    want[rows] = [oracle_uniform(11, int(i), 0) for i in rows]
    out = f(x=v, w=W, seed=11)
    np.testing.assert_array_equal(out["r"].to_numpy(fill=-1)[:, 0], want)
    np.testing.assert_array_equal(out["q"].to_numpy(fill=-1)[:, 0], want)
    for P in (2, 4):
        got, _ = run_dist(f, {"x": v, "w": W, "seed": 11}, P, partition="random", seed=P)
        np.testing.assert_array_equal(got["r"].to_numpy(fill=-1)[:, 0], want)
