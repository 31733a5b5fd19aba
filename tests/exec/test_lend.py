"""Arrays lent by SuiteSparse's unpack/pack calls (exec/lend.py): the views show the matrix's
values and presence as python-graphblas's public API reads them, writes through them land in
the matrix, the matrix is whole again after the block, and layouts that are not C-ordered
(values by column of a wide matrix, iso values, sparse) are declined."""
from __future__ import annotations

import graphblas as gb
import numpy as np
import pytest

from dspla.exec import lend


def _bitmap(values, present, by_row=True):
    r, c = np.nonzero(present)
    M = gb.Matrix.from_coo(r, c, values[r, c], nrows=values.shape[0], ncols=values.shape[1])
    M.ss.config["format"] = "by_row" if by_row else "by_col"
    M.ss.config["sparsity_control"] = "bitmap"
    return M


@pytest.mark.parametrize("shape,by_row", [((6, 1), True), ((6, 1), False), ((4, 3), True)])
def test_bitmap_views_read_and_write_the_matrix(shape, by_row):
    rng = np.random.default_rng(1)
    values, present = rng.random(shape), rng.random(shape) < 0.6
    present.flat[0], present.flat[1] = True, False
    M = _bitmap(values, present, by_row)
    assert M.ss.format == ("bitmapr" if by_row else "bitmapc")
    with lend.bitmap(M) as held:
        assert held is not None and held.nvals == present.sum()
        assert np.array_equal(held.present.astype(bool), present)
        assert np.array_equal(held.values[present], values[present])
        held.values[0, 0] = 42.0   # a write lands in the matrix
        held.present.flat[1] = 1
        held.values.flat[1] = 7.0
        held.nvals += 1
    present.flat[1] = True
    got = M.to_dense(fill_value=np.nan)
    assert M.nvals == present.sum() and np.array_equal(~np.isnan(got), present)
    assert got.flat[0] == 42.0 and got.flat[1] == 7.0


def test_full_views_read_and_write_the_matrix():
    values = np.arange(12.0).reshape(4, 3)
    M = gb.Matrix.from_dense(values)
    M.ss.config["format"] = "by_row"
    with lend.full(M) as v:
        assert v is not None and np.array_equal(v, values)
        v[2, 1] = -1.0
    want = values.copy()
    want[2, 1] = -1.0
    assert np.array_equal(M.to_dense(), want) and M.nvals == 12


def test_layouts_that_are_not_c_ordered_are_declined_and_left_whole():
    wide_by_col = gb.Matrix.from_dense(np.ones((3, 2)))
    wide_by_col.ss.config["format"] = "by_col"
    iso = gb.Matrix.from_coo([0, 2], [0, 0], 1.0, nrows=5, ncols=1)
    sparse = gb.Matrix.from_coo([0], [1], [2.0], nrows=4, ncols=4)
    assert wide_by_col.ss.format == "fullc" and iso.ss.is_iso
    for M, lent in ((wide_by_col, lend.full), (iso, lend.bitmap), (sparse, lend.bitmap), (sparse, lend.full)):
        before = M.to_coo()
        with lent(M) as held:
            assert held is None
        after = M.to_coo()
        assert all(np.array_equal(x, y) for x, y in zip(before, after))
