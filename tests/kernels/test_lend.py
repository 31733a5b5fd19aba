"""Arrays lent by SuiteSparse's unpack/pack calls (kernels/lend.py): the views show the matrix's
values and presence as python-graphblas's public API reads them, writes through them land in
the matrix, the matrix is whole again after the block, and layouts that are not C-ordered
(values by column of a wide matrix, iso values, sparse) are declined."""
from __future__ import annotations

import graphblas as gb
import numpy as np
import pytest

from dspla.kernels import lend


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


@pytest.mark.parametrize("shape,by_row", [((6, 1), True), ((6, 1), False), ((5, 3), True)])
def test_a_bitmap_taken_and_given_back_moves_between_matrices_whole(shape, by_row):
    """take_bitmap hands a bitmap's presence to numpy (the values freed, the matrix left empty);
    give_bitmap hands it to a full matrix, which then reads as that pattern over its own values."""
    rng = np.random.default_rng(2)
    values, present = rng.random(shape), rng.random(shape) < 0.5
    present.flat[0] = True
    M = _bitmap(values, present, by_row)
    bitmap, count = lend.take_bitmap(M)
    assert bitmap.dtype == np.int8 and bitmap.shape == shape and bitmap.base.flags.owndata
    assert np.array_equal(bitmap.astype(bool), present) and count == present.sum() and M.nvals == 0
    full = rng.random(shape)
    F = gb.Matrix.from_dense(full)
    F.ss.config["format"] = "by_row" if by_row else "by_col"
    if shape[1] > 1 and not by_row:
        pytest.skip("(a wide matrix by column is not C-ordered)")
    assert lend.give_bitmap(F, bitmap, count)
    assert not bitmap.base.flags.owndata   # SuiteSparse owns it now (frees it with the matrix)
    assert F.ss.format.startswith("bitmap") and F.nvals == count
    np.testing.assert_array_equal(F.to_dense(fill_value=np.nan), np.where(present, full, np.nan))


def test_what_cannot_be_handed_over_is_declined_untouched():
    full = gb.Matrix.from_dense(np.arange(6.0).reshape(3, 2))
    bitmap = np.ones((3, 2), dtype=np.int8)
    for bad in (np.ones((2, 3), dtype=np.int8),                 # another shape
                np.ones((3, 2), dtype=np.float64),              # another dtype
                np.ones((3, 4), dtype=np.int8)[:, :2],          # not contiguous
                np.ones(12, dtype=np.int8)[6:].reshape(3, 2)):  # not the start of the block it views
        assert not lend.give_bitmap(full, bad, 6)
    sparse = gb.Matrix.from_coo([0], [1], [2.0], nrows=3, ncols=2)
    assert not lend.give_bitmap(sparse, bitmap, 6) and bitmap.flags.owndata
    assert full.ss.format == "fullr" and full.nvals == 6 and sparse.nvals == 1
    iso = gb.Matrix.from_coo([0, 2], [0, 0], 1.0, nrows=5, ncols=1)
    iso.ss.config["sparsity_control"] = "bitmap"
    assert iso.ss.is_iso and lend.take_bitmap(iso) is None and iso.nvals == 2
    assert lend.take_bitmap(full) is None and full.nvals == 6


def test_taking_and_giving_back_a_bitmap_frees_what_it_should():
    """Many cycles of an output's life (full, made a bitmap with a kept presence array, taken
    back, refilled) hold no more memory than one: no array is leaked or freed twice."""
    import tracemalloc
    n, k = 2000, 16
    M = gb.Matrix.from_dense(np.zeros((n, k)))
    rows = np.arange(0, n, 7)

    def cycle(spare):
        bitmap = spare[0] if spare is not None else np.ones((n, k), dtype=np.int8)
        bitmap[rows] = 0
        assert lend.give_bitmap(M, bitmap, (n - rows.size) * k)
        spare = lend.take_bitmap(M)
        M.ss.pack_fullr(np.ones((n, k)), take_ownership=True)   # full again, new values (SuiteSparse's)
        return spare

    spare = cycle(None)
    tracemalloc.start()
    try:
        spare = cycle(spare)
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            spare = cycle(spare)
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown < n * k, f"{grown} bytes more after 200 cycles of a {n} x {k} output"
