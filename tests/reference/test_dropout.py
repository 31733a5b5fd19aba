"""dropout_mask against an independent oracle: splitmix64 of (seed, row, column) written with
Python integers mod 2^64, on full operands (the bitmap path) and on operands with missing
entries (the coordinate path)."""
import numpy as np
import scipy.sparse as sp

import dspla as dp

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
