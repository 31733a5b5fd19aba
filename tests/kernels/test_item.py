"""1 x 1 values through SuiteSparse's typed element calls (kernels/item.py) and the numpy route of
built-in operators on two 1 x 1 values (kernels/scalars.py). The oracle is
python-graphblas itself: its indexing for single entries, its element-wise kernels for the
operators, on 1 x 1 matrices with and without an entry."""
import itertools
import math

import graphblas as gb
import numpy as np
import pytest

from dspla.algebra import BINARY
from dspla.ir.types import DType
from dspla.kernels import gbops
from dspla.kernels.item import copy, empty, item, scalar, set_item
from dspla.kernels.scalars import SCALAR_OPS as _SCALAR_OPS
from dspla.kernels.scalars import scalar_binary as _scalar_binary


@pytest.mark.parametrize("dt", list(DType))
def test_item_set_item_and_scalar_agree_with_graphblas_indexing(dt):
    M = empty(dt)
    assert M.shape == (1, 1) and M.nvals == 0 and M.dtype == dt.gb
    assert item(M) is None
    v = dt.np.type(3)
    set_item(M, v.item())
    assert M.nvals == 1 and M[0, 0].new().value == v
    assert item(M) == M[0, 0].new().value
    assert type(item(M)) is type(M[0, 0].new().value)
    set_item(M, None)
    assert M.nvals == 0
    S = scalar(2, dt)
    assert S.dtype == dt.gb and S[0, 0].new().value == dt.np.type(2)
    assert scalar(None, dt).nvals == 0


def test_item_reads_any_position_and_nan():
    M = gb.Matrix.from_coo([1], [2], [np.nan], nrows=3, ncols=4)
    assert math.isnan(item(M, 1, 2)) and item(M, 0, 0) is None


_VALUES = [None, 0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3.0, 0.1, 1 / 3]   # (1 / 3, 0.1: rounded)


def _gb_binary(name, compute, x, y, union):
    """The oracle: python-graphblas's union or intersection of two 1 x 1 matrices."""
    a, b = scalar(x, compute), scalar(y, compute)
    op = gbops.binary(BINARY[name], compute)
    expr = a.ewise_add(b, op) if union else a.ewise_mult(b, op)
    return expr.new()


_I64 = np.iinfo(np.int64)
# (overflow, subnormals)
_VALUES_OF = {DType.float64: _VALUES + [1e308, 5e-324], DType.float32: _VALUES + [3e38, 1e-45],
              DType.int64: [None, 0, 1, -1, 7, -3, int(_I64.max), int(_I64.min), int(_I64.max) - 1],
              DType.bool: [None, False, True]}


@pytest.mark.parametrize("compute,name", [(dt, name) for dt in _SCALAR_OPS for name in sorted(_SCALAR_OPS[dt])])
def test_scalar_operators_equal_graphblas_on_every_pair(name, compute):
    """Every operator the numpy route takes, on every pair of special values of its dtype
    (integer overflow wraps in both)."""
    op = BINARY[name]
    _, out = op.dtypes(compute, compute)
    for x, y in itertools.product(_VALUES_OF[compute], repeat=2):
        for union in (True, False):
            got = _scalar_binary(op, compute, out, x, y, union, None)
            want = gbops.cast(_gb_binary(name, compute, x, y, union), out)
            assert got.dtype == want.dtype, (name, x, y, union)
            assert got.nvals == want.nvals, (name, x, y, union)
            if want.nvals:
                g, w = item(got), want[0, 0].new().value
                assert (g == w and math.copysign(1, g) == math.copysign(1, w)) if not (
                    isinstance(w, float) and math.isnan(w)) else math.isnan(g), (name, x, y, union, g, w)


def test_scalar_operators_write_into_a_free_result_of_their_type_only():
    op = BINARY["plus"]
    into = scalar(9.0, DType.float64)
    got = _scalar_binary(op, DType.float64, DType.float64, 1.0, 2.0, True, into)
    assert got is into and item(into) == 3.0
    other = scalar(9, DType.int64)   # another dtype: a new result, the other untouched
    got = _scalar_binary(op, DType.float64, DType.float64, 1.0, 2.0, True, other)
    assert got is not other and item(other) == 9 and item(got) == 3.0
    # a missing result clears what the reused one held
    assert _scalar_binary(op, DType.float64, DType.float64, None, None, True, into).nvals == 0


def test_integer_division_pow_and_user_operators_are_left_to_graphblas():
    """None: the caller takes GraphBLAS's route (integer division, pow and user functions have
    semantics of their own there)."""
    from dataclasses import replace
    assert _scalar_binary(BINARY["div"], DType.int64, DType.int64, 1, 0, True, None) is None
    assert _scalar_binary(BINARY["minus"], DType.bool, DType.bool, True, False, True, None) is None
    assert _scalar_binary(BINARY["pow"], DType.float64, DType.float64, 2.0, 3.0, True, None) is None
    user = replace(BINARY["plus"], func=lambda x, y: x - y)
    assert _scalar_binary(user, DType.float64, DType.float64, 1.0, 2.0, True, None) is None


@pytest.mark.parametrize("dt", list(DType))
@pytest.mark.parametrize("start", ["empty", "sparse", "bitmap", "full"])
def test_fill_makes_every_entry_the_value_whatever_the_format(dt, start):
    # the identities the products start from include each dtype's extremes (min's identity is its max)
    from dspla.kernels.item import fill
    info = np.iinfo(dt.np) if np.issubdtype(dt.np, np.integer) else None
    values = [dt.np.type(0), dt.np.type(1)] + ([dt.np.type(info.min), dt.np.type(info.max)] if info else [])
    if np.issubdtype(dt.np, np.floating):
        values.append(dt.np.type(np.inf))
    for v in values:
        M = gb.Matrix(dt.gb, 5, 3)
        if start != "empty":
            M[1, 2] << dt.np.type(1).item()
            if start != "sparse":
                M[0, 0] << dt.np.type(1).item()
                M.ss.config["sparsity_control"] = [start]
        fill(M, v.item())
        want = np.full((5, 3), v, dtype=dt.np)   # the oracle: numpy's full array
        assert M.nvals == 15 and M.dtype == dt.gb
        np.testing.assert_array_equal(M.to_dense(), want)


@pytest.mark.parametrize("dt", list(DType))
@pytest.mark.parametrize("form", ["sparse", "bitmap"])
def test_write_on_pattern_is_the_structural_masked_assign(dt, form):
    # the oracle: numpy arrays with a presence mask (a missing entry is not a zero)
    from dspla.kernels.item import write_on_pattern
    rng = np.random.default_rng(7)
    n = 40
    have, mask = rng.random(n) < 0.4, rng.random(n) < 0.3   # (they overlap: the mask's value wins there)
    vals = rng.integers(1, 100, n).astype(dt.np)
    C = gb.Matrix.from_coo(np.flatnonzero(have), np.zeros(have.sum(), int), vals[have], nrows=n, ncols=1,
                           dtype=dt.gb)
    C.ss.config["sparsity_control"] = [form]
    M = gb.Matrix.from_coo(np.flatnonzero(mask), np.zeros(mask.sum(), int), np.zeros(mask.sum(), bool),
                           nrows=n, ncols=1)   # (false values: only the structure counts)
    v = dt.np.type(5)
    assert write_on_pattern(C, M, v.item())
    want_have, want = have | mask, np.where(mask, v, vals)
    r, _, x = C.to_coo()
    np.testing.assert_array_equal(r, np.flatnonzero(want_have))
    np.testing.assert_array_equal(x, want[want_have])
    assert C.dtype == dt.gb


def test_check_passes_success_and_a_missing_entry_and_raises_on_errors():
    from suitesparse_graphblas import lib

    from dspla.kernels.item import check
    check(lib.GrB_SUCCESS, "x")
    check(lib.GrB_NO_VALUE, "x")
    for code in (lib.GrB_INVALID_VALUE, lib.GrB_OUT_OF_MEMORY, lib.GrB_DIMENSION_MISMATCH):
        with pytest.raises(RuntimeError, match=f"GraphBLAS mxm failed with code {code}"):
            check(code, "mxm")


@pytest.mark.parametrize("form", ["sparse", "bitmap", "full"])
def test_copy_is_a_new_matrix_with_the_same_entries(form):
    rng = np.random.default_rng(7)
    dense = rng.integers(-5, 5, (40, 3)).astype(np.int64)
    keep = rng.random((40, 3)) < (1.0 if form == "full" else 0.3)
    M = gb.Matrix.from_coo(*np.nonzero(keep), dense[keep], nrows=40, ncols=3)
    M.ss.config["sparsity_control"] = form
    C = copy(M)
    assert C is not M and C.dtype == M.dtype and C.shape == M.shape
    r, c, v = C.to_coo()
    assert (dense[r, c] == v).all() and len(v) == keep.sum()
    C[0, 0] = 99   # (written: the original keeps its value)
    assert M.get(0, 0) == (dense[0, 0] if keep[0, 0] else None)
