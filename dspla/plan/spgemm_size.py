"""How many entries a sparse x sparse product will have, before it is computed: Cohen's
size-estimation framework (Cohen, "Size-Estimation Framework with Applications to Transitive
Closure and Reachability"). Every column j of B gets R random keys, exponential(1); a row k of
B keeps the least key of its columns (per draw), and a row i of C = A ⊕.⊗ B the least over
the rows k its entries of A reach. The least of m exponential keys is exponential with rate m,
so (R - 1) / Σ_r least_r estimates m = the entries of row i of C (unbiased; the relative error of
a total over many rows is small). Both steps are min.second products of a sparse matrix with
an n x R full one: no product is formed, and what a rank gathers is R numbers per row of B
(metadata), never B's entries.
"""
from __future__ import annotations

import graphblas as gb
import numpy as np
import scipy.sparse as sp

DRAWS = 32   # R: the rows of C share the keys, so a total errs like one row: ~1/sqrt(R - 2), ~18 %


def _keys(ncols: int, seed: int = 0) -> gb.Matrix:
    keys = np.random.default_rng(seed).exponential(1.0, (ncols, DRAWS))
    return gb.Matrix.from_dense(keys, dtype="FP64")


def least_keys(B, cols: np.ndarray | None = None) -> np.ndarray:
    """rows(B) x R: per row of B the least key of its columns (inf for an empty row); ``cols``:
    of those columns only (global ids: the keys are every rank's same draws)."""
    M = B.dup(dtype="FP64") if B.dtype != gb.dtypes.FP64 else B
    keys = _keys(B.ncols)
    if cols is not None:
        M, keys = M[:, cols].new(), keys[cols, :].new()
    out = M.mxm(keys, gb.semiring.min_second).new()
    return out.to_dense(fill_value=np.inf)


def row_entries(A, least_B: np.ndarray, ncols: int) -> np.ndarray:
    """Estimated entries of each row of A ⊕.⊗ B (B with ``ncols`` columns), from B's rows' least
    keys (least_keys, all rows of B in the order of A's columns)."""
    if A.nvals == 0:
        return np.zeros(A.nrows)
    M = A.dup(dtype="FP64") if A.dtype != gb.dtypes.FP64 else A
    finite = np.where(np.isfinite(least_B), least_B, 1e300)
    least = M.mxm(gb.Matrix.from_dense(finite, dtype="FP64"), gb.semiring.min_second).new().to_dense(fill_value=1e300)
    total = least.sum(axis=1)
    est = np.where(total < 1e299, (DRAWS - 1) / np.maximum(total, 1e-300), 0.0)
    return est   # (not capped at ncols per row: that biased the totals of hub rows down by ~20 %)


def row_summary(B, cols: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(least keys, entries) of every row of B (in columns ``cols`` only, when given)."""
    sub = B if cols is None else B[:, cols].new()
    return least_keys(B, cols), sub.reduce_rowwise(gb.agg.count).new().to_dense(fill_value=0).astype(np.int64)


def gathered_summary(comm, B_local, ids: np.ndarray, n: int, cols=None) -> tuple[np.ndarray, np.ndarray]:
    """SPMD planning: row_summary of every row of B, each rank computing its own rows (``ids``,
    global) and one allgather of R + 1 numbers per row."""
    least, deg = row_summary(B_local, cols)
    parts = comm.allgather((np.asarray(ids, dtype=np.int64), least, deg)) if comm is not None else [(ids, least, deg)]
    out, degree = np.full((n, DRAWS), np.inf), np.zeros(n, dtype=np.int64)
    for rows, vals, d in parts:
        out[rows], degree[rows] = vals, d
    return out, degree


def output_entries(ctx, r: int, A_r, block: int | None = None, cols=None) -> tuple[int, int] | None:
    """(estimated entries, exact multiply-adds) of rank r's rows of a sparse x sparse product
    (``A_r``: its rows of A, scipy CSR, global columns): the memory its output needs and the
    work; None when B is not static. Inside a static mask: at most the mask's entries in those
    rows. B's summary is made once per product. ``block``, ``cols``: the product's columns
    ``cols`` only (a 2D plan's column block, numbered ``block``)."""
    pl = ctx.product.pl
    summary = b_summary(ctx, block, cols)
    if summary is None:
        return None
    least, degree = summary
    flops = int(degree[A_r.indices].sum())
    est = float(row_entries(gb.io.from_scipy_sparse(A_r), least, ctx.K).sum()) if A_r.nnz else 0.0
    if ctx.masked and pl.is_static(ctx.node.args[2]):
        M = operand(ctx, ctx.node.args[2])
        rows = ctx.rows.owned[r] if ctx.me is None else None
        M = M if rows is None else M[rows, :].new()
        M = M if cols is None else M[:, cols].new()
        est = min(est, float(M.nvals))
        # SuiteSparse's masked product takes a dot product per mask entry: about the row's
        # entries twice (its row of A and the column of B it meets), where fewer than unmasked
        per_row = M.reduce_rowwise(gb.agg.count).new().to_dense(fill_value=0)
        flops = min(flops, int(2 * (per_row * np.diff(A_r.indptr)).sum()))
    return int(round(min(est, flops))), flops


def b_summary(ctx, block: int | None = None, cols=None):
    """B's row_summary (of columns ``cols``, numbered ``block``) for a product with a static sparse
    B, made once per product and block (SPMD planning: a collective, so every rank calls it, at
    the same point of lowering); None otherwise."""
    pl, b = ctx.product.pl, ctx.node.args[1]
    if not ctx.b_sparse or not pl.is_static(b):
        return None
    cache = ctx.product.__dict__.setdefault("_b_summary", {})
    if block not in cache:
        B = operand(ctx, b)
        cache[block] = row_summary(B, cols) if ctx.me is None else \
            gathered_summary(ctx.comm if ctx.P > 1 else None, B, ctx.cols.owned[ctx.me], ctx.cols.size, cols)
    return cache[block]


def operand(ctx, node, csr: bool = False):
    """A static operand of the product (B, the mask) as a graphblas Matrix, or scipy CSR: when
    it is A itself (A @ A, L·L inside L), A's arrays are lent out while the product is lowered
    (Product.A) and the Matrix reads as empty, so A's CSR is read instead."""
    v = ctx.product.pl.static_value(node)
    if v is not ctx.product._A:
        return sp.csr_array(gb.io.to_scipy_sparse(v, format="csr")) if csr else v
    if csr:
        return ctx.A
    cache = ctx.product.__dict__.setdefault("_a_copy", [])
    if not cache:
        cache.append(gb.io.from_scipy_sparse(ctx.A))
    return cache[0]
