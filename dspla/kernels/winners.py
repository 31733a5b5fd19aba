"""Kernels for the gradients of min/max products (ops ARGBEST and ROUTE): which term of each
entry of C = A ⊕.⊗ B won, and the cotangent routed to it. Vectorised over the terms of C's
entries (as many as the product's multiply-adds), no loop per entry."""
from __future__ import annotations

import graphblas as gb
import numpy as np

from ..formats.limits import check_memory
from . import gbops

_MULT = {"plus": np.add, "times": np.multiply, "first": lambda a, b: a, "second": lambda a, b: b}


def _coo(M: gb.Matrix, dtype=None):
    r, c, v = M.to_coo()
    return r.astype(np.int64), c.astype(np.int64), (v if dtype is None else v.astype(dtype))


def lookup(M: gb.Matrix, rows: np.ndarray, cols: np.ndarray, dtype=None):
    """(values, present) of M at the positions (rows[i], cols[i])."""
    r, c, v = _coo(M, dtype)                          # row-major order: linear keys are sorted
    keys = r * M.ncols + c
    q = rows * M.ncols + cols
    i = np.minimum(np.searchsorted(keys, q), max(len(keys) - 1, 0))
    present = (keys[i] == q) if len(keys) else np.zeros(len(q), bool)
    return (v[i] if len(v) else np.zeros(len(q), dtype or np.float64)), present


def argbest(A: gb.Matrix, B: gb.Matrix, C: gb.Matrix, semiring) -> gb.Matrix:
    compute = semiring.dtypes(gbops.dtype_of(A), gbops.dtype_of(B))[0].np
    ci, cj, cv = _coo(C, compute)
    Ar, Ac, Av = _coo(A, compute)
    indptr = np.zeros(A.nrows + 1, dtype=np.int64)
    np.cumsum(np.bincount(Ar, minlength=A.nrows), out=indptr[1:])
    counts = indptr[ci + 1] - indptr[ci]               # the terms of each entry of C: A's row
    total = int(counts.sum())
    check_memory(40 * total, f"the {total} terms of the winners of {C.nrows} x {C.ncols} min/max product")
    entry = np.repeat(np.arange(len(ci)), counts)
    first = np.cumsum(counts) - counts
    pos = np.repeat(indptr[ci], counts) + (np.arange(total) - np.repeat(first, counts))
    k = Ac[pos]
    b, present = lookup(B, k, cj[entry], compute)
    term = _MULT[semiring.mult.name](Av[pos], b)
    big = np.iinfo(np.int64).max
    key = np.where(present & (term == cv[entry]), k, big)
    best = np.full(len(ci), big, dtype=np.int64)
    has = counts > 0
    if total:
        best[has] = np.minimum.reduceat(key, first[has])
    if np.any(best == big):   # cannot happen: C's value is one of its terms
        raise AssertionError("a min/max product entry without a winning term")
    return gb.Matrix.from_coo(ci, cj, best, nrows=C.nrows, ncols=C.ncols, dtype="INT64")


def route(G: gb.Matrix, K: gb.Matrix, F: gb.Matrix, axis: str, factor: bool) -> gb.Matrix:
    Gm = G.dup(mask=K.S)                               # both on the entries they share, same order
    gi, gj, gv = _coo(Gm)
    _, _, k = _coo(K.dup(mask=G.S))
    if factor:
        f, _ = lookup(F, k, gj, gv.dtype) if axis == "cols" else lookup(F, gi, k, gv.dtype)
        gv = gv * f
    if axis == "cols":
        rows, cols, shape = gi, k, (G.nrows, F.nrows)
    else:
        rows, cols, shape = k, gj, (F.ncols, G.ncols)
    dt = gbops.dtype_of(G)
    return gb.Matrix.from_coo(rows, cols, gv, nrows=shape[0], ncols=shape[1], dtype=dt.gb, dup_op=gb.binary.plus)
