"""The column-block split every 1D/1.5D/2D plan builds its local pieces with, against a dense
oracle: both the few-blocks path (scipy column gather) and the many-blocks path (one sort); and
the stacked operand (the lists' columns one after the other) StackMxM multiplies."""
import numpy as np
import pytest
import scipy.sparse as sp

from dspla.plan.plans.p2p1d import split_by_owner, stacked_columns


@pytest.mark.parametrize("nblocks", [1, 3, 16, 17, 40])
def test_blocks_match_dense_oracle(nblocks):
    rng = np.random.default_rng(nblocks)
    nrows, ncols = 30, 120
    D = np.where(rng.random((nrows, ncols)) < 0.15, rng.integers(1, 9, (nrows, ncols)), 0).astype(np.float64)
    D[5] = 0                                      # an empty row
    owner = rng.integers(0, nblocks, ncols)
    lists = [(b * 10, np.flatnonzero(owner == b)) for b in range(nblocks)]  # owner ids need not be 0..n-1
    blocks = split_by_owner(sp.csr_array(D), lists)
    assert sorted(blocks) == [b * 10 for b in range(nblocks)]
    for key, cols in lists:
        B = blocks[key]
        assert B.shape == (nrows, cols.size)
        np.testing.assert_array_equal(B.toarray(), D[:, cols])
        assert B.has_sorted_indices


@pytest.mark.parametrize("empty_blocks", [0, 17])   # few blocks (gather) and many (sort)
def test_unlisted_columns_are_dropped(empty_blocks):
    D = np.arange(1, 25, dtype=np.float64).reshape(4, 6)
    lists = [(q, np.array([q])) for q in range(3)] + [(q, np.zeros(0, np.int64)) for q in range(3, 3 + empty_blocks)]
    blocks = split_by_owner(sp.csr_array(D), lists)   # columns 3..5 are in no list
    for q in range(3):
        np.testing.assert_array_equal(blocks[q].toarray(), D[:, [q]])
    for q in range(3, 3 + empty_blocks):
        assert blocks[q].shape == (4, 0) and blocks[q].nnz == 0


@pytest.mark.parametrize("unlisted", [False, True])
def test_stacked_columns_match_dense_oracle(unlisted):
    """Columns renumbered by position in the lists concatenated, sorted per row; unlisted columns
    dropped; the row block itself untouched."""
    rng = np.random.default_rng(3)
    nrows, ncols = 25, 90
    D = np.where(rng.random((nrows, ncols)) < 0.2, rng.integers(1, 9, (nrows, ncols)), 0).astype(np.float64)
    D[7] = 0
    perm = rng.permutation(ncols)
    cut = [0, 20, 50, 80 if unlisted else 90]
    lists = [(q, np.sort(perm[a:b])) for q, (a, b) in enumerate(zip(cut[:-1], cut[1:]))]
    A = sp.csr_array(D)
    before = (A.data.copy(), A.indices.copy(), A.indptr.copy())
    M = stacked_columns(A, lists)
    want = np.hstack([D[:, cols] for _, cols in lists])
    assert M.shape == want.shape and M.has_sorted_indices
    np.testing.assert_array_equal(M.toarray(), want)
    for x, y in zip(before, (A.data, A.indices, A.indptr)):
        np.testing.assert_array_equal(x, y)
