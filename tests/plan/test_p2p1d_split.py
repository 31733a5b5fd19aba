"""The column-block split every 1D/1.5D/2D plan builds its local pieces with, against a dense
oracle: both the few-blocks path (scipy column gather) and the many-blocks path (one sort)."""
import numpy as np
import pytest
import scipy.sparse as sp

from dspla.plan.plans.p2p1d import split_by_owner


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
