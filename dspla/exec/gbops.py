"""Turning algebra-table rows into SuiteSparse:GraphBLAS objects, and small GraphBLAS helpers
shared by the reference executor and the distributed runtime's local compute."""
from __future__ import annotations

from functools import lru_cache

import graphblas as gb
import numpy as np

from ..algebra import BinaryOp, Monoid, Semiring, UnaryOp
from ..ir.types import DType


@lru_cache(maxsize=None)
def semiring(sr: Semiring, dtype: DType):
    name = f"{sr.monoid.gb}_{sr.mult.gb}"
    if sr.builtin and hasattr(gb.semiring, name):
        try:
            return getattr(gb.semiring, name)[dtype.gb]
        except KeyError:  # python-graphblas lacks some typed instances (min_max, max_min on BOOL)
            pass
    anon = gb.core.operator.Semiring.register_anonymous(getattr(gb.monoid, sr.monoid.gb),
                                                         getattr(gb.binary, sr.mult.gb), sr.name)
    return anon[dtype.gb]


@lru_cache(maxsize=None)
def binary(op: BinaryOp, dtype: DType):
    return getattr(gb.binary, op.gb)[dtype.gb]


@lru_cache(maxsize=None)
def monoid(m: Monoid, dtype: DType):
    return getattr(gb.monoid, m.gb)[dtype.gb]


def dtype_of(M) -> DType:
    return DType.of_numpy(M.dtype.np_type)


def cast(M, dtype: DType):
    return M if dtype_of(M) is dtype else M.dup(dtype=dtype.gb)


def apply_unary(M, op: UnaryOp, compute: DType, out: DType):
    M = cast(M, compute)
    for step in op.steps:
        if step[0] == "unary":
            M = M.apply(getattr(gb.unary, step[1])[compute.gb]).new()
        else:
            _, name, value = step
            M = M.apply(getattr(gb.binary, name)[compute.gb], right=value).new()
    return cast(M, out)


def empty(nrows: int, ncols: int, dtype: DType):
    return gb.Matrix(dtype.gb, nrows, ncols)


def identity(n: int, dtype: DType):
    idx = np.arange(n, dtype=np.uint64)
    return gb.Matrix.from_coo(idx, idx, dtype.np.type(1), nrows=n, ncols=n, dtype=dtype.gb)


def column(v, n: int):
    """A graphblas Vector as an n x 1 matrix."""
    idx, vals = v.to_coo()
    return gb.Matrix.from_coo(idx, np.zeros(len(idx), np.uint64), vals, nrows=n, ncols=1, dtype=v.dtype)


def row(v, n: int):
    idx, vals = v.to_coo()
    return gb.Matrix.from_coo(np.zeros(len(idx), np.uint64), idx, vals, nrows=1, ncols=n, dtype=v.dtype)


def full(nrows: int, ncols: int, value, dtype: DType):
    return gb.Matrix.from_dense(np.full((nrows, ncols), value, dtype=dtype.np), dtype=dtype.gb)


def expand(M, shape, like=None):
    """Broadcast M (n x 1, 1 x m or 1 x 1) to ``shape``. With ``like`` (a matrix of that shape),
    only onto like's pattern, which is all an intersection needs; otherwise to every position
    of the rows/columns where M has an entry, which is what a union needs."""
    r, c = M.shape
    R, C = shape
    if (r, c) == (R, C):
        return M
    dt = dtype_of(M)
    any_first, any_second = (gb.semiring.any_first[dt.gb], gb.semiring.any_second[dt.gb])
    if r == R and c == 1 and C != 1:      # column vector across columns
        if like is not None:
            return M[:, 0].new().diag().mxm(like, any_first).new()
        return M.mxm(full(1, C, True, DType.bool), any_first).new()
    if c == C and r == 1 and R != 1:      # row vector down rows
        if like is not None:
            return like.mxm(M[0, :].new().diag(), any_second).new()
        return full(R, 1, True, DType.bool).mxm(M, any_second).new()
    # 1 x 1 to R x C (R or C may also be 1)
    if M.nvals == 0:
        return empty(R, C, dt)
    value = M[0, 0].new().value
    if like is not None:
        return like.apply(gb.binary.second[dt.gb], right=value).new(dtype=dt.gb)
    return full(R, C, value, dt)


def mxm(a, b, sr: Semiring, compute: DType):
    """a ⊕.⊗ b in the compute dtype. Two full float operands under plus_times go through BLAS
    (numpy matmul on the values arrays, lent without copies): same result, every entry present."""
    if (sr.monoid.name == "plus" and sr.mult.name == "times" and compute.is_float and a.ncols > 0
            and a.nvals == a.nrows * a.ncols and b.nvals == b.nrows * b.ncols and a.nvals and b.nvals):
        from ..dist.local import from_values, values_of
        with values_of(a) as av, values_of(b) as bv:
            out = av @ bv
        return from_values(out, compute)
    return a.mxm(b, semiring(sr, compute)).new()
