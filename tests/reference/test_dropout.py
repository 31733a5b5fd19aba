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
