"""pack_sparse_rows: a sparse matrix's rows sent as their present entries (position in the send
list x width + column, value), by SuiteSparse's extract or, with a row lookup while the matrix
has no more entries than rows are sent, by looking its own entries up: the same entries either
way, against a dense numpy oracle, for sorted and unsorted send lists, several widths, dtypes,
no entries and no rows."""
from __future__ import annotations

import graphblas as gb
import numpy as np
import pytest

from dspla.ir.types import DType
from dspla.kernels import buffers


def _entries(buf: np.ndarray, dtype: DType) -> list:
    n = buffers.sparse_count(buf)
    pos = buf[8:8 + 8 * n].view(np.int64)
    vals = buf[8 + 8 * n:8 + n * (8 + dtype.np.itemsize)].view(dtype.np)
    return sorted(zip(pos.tolist(), vals.tolist()))


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("dtype", [DType.float64, DType.bool, DType.int64])
@pytest.mark.parametrize("density", [0.0, 0.01, 0.3, 0.9])
@pytest.mark.parametrize("order", ["sorted", "shuffled", "none"])
def test_both_ways_give_the_oracles_entries(k, dtype, density, order):
    rng = np.random.default_rng(int(density * 100) + k)
    n = 400
    present = rng.random((n, k)) < density
    values = (rng.integers(1, 9, (n, k))).astype(dtype.np)
    r, c = np.nonzero(present)
    M = gb.Matrix.from_coo(r, c, values[r, c], nrows=n, ncols=k, dtype=dtype.gb)
    rows = np.sort(rng.choice(n, 150, replace=False)) if order != "none" else np.zeros(0, dtype=np.int64)
    if order == "shuffled":
        rng.shuffle(rows)
    want = sorted((p * k + j, values[row, j].item()) for p, row in enumerate(rows) for j in range(k)
                  if present[row, j])
    lookup = buffers.row_lookup(rows, n)
    assert (lookup is None) == (order == "none")   # (no rows sent: more than 4 positions per row sent)
    assert _entries(buffers.pack_sparse_rows(M, rows, dtype), dtype) == want
    assert _entries(buffers.pack_sparse_rows(M, rows, dtype, lookup), dtype) == want


def test_the_lookup_is_made_only_when_it_is_small_beside_the_rows_sent():
    assert buffers.row_lookup(np.arange(10), 41) is None          # 41 rows held for 10 sent
    where = buffers.row_lookup(np.array([7, 2, 5]), 12)
    assert where.tolist() == [-1, -1, 1, -1, -1, 2, -1, 0, -1, -1, -1, -1]
