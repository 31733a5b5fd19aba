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

import functools

import graphblas as gb
import numpy as np
import scipy.sparse as sp

DRAWS = 32   # R: the rows of C share the keys, so a total errs like one row: ~1/sqrt(R - 2), ~18 %


@functools.lru_cache(maxsize=1)
def _keys(ncols: int, seed: int = 0) -> gb.Matrix:
    return gb.Matrix.from_dense(np.random.default_rng(seed).exponential(1.0, (ncols, DRAWS)).astype(np.float32))


def least_keys(B, cols: np.ndarray | None = None):
    """rows(B) x R (float32, missing for an empty row): per row of B the least key of its columns;
    ``cols``: of those columns only (global ids: the keys are every rank's same draws)."""
    keys = _keys(B.ncols)
    M = B
    if cols is not None:
        M, keys = B[:, cols].new(), keys[cols, :].new()
    return M.mxm(keys, gb.semiring.min_second["FP32"]).new()


def row_entries(A, least) -> np.ndarray:
    """Estimated entries of each row of A ⊕.⊗ B, from B's rows' least keys (least_keys, every row
    of B in the order of A's columns)."""
    if A.nvals == 0:
        return np.zeros(A.nrows)
    per_row = A.mxm(least, gb.semiring.min_second["FP32"]).new().reduce_rowwise(gb.monoid.plus["FP64"]).new()
    total = per_row.to_dense(fill_value=np.inf)   # (a row of A without entries: none)
    return (DRAWS - 1) / total   # (not capped at B's columns: that biased hub rows' totals down ~20 %)


NONE = np.float32(3e38)   # an empty row's least key: larger than any drawn, so never the least


def _full(dense: np.ndarray):
    """An n x R array of least keys as a full GraphBLAS matrix (4 bytes an entry, no indices)."""
    return gb.Matrix.from_dense(np.where(np.isfinite(dense), dense, NONE).astype(np.float32))


def row_summary(B, cols: np.ndarray | None = None) -> tuple:
    """(least keys, entries) of every row of B (in columns ``cols`` only, when given)."""
    sub = B if cols is None else B[:, cols].new()
    return _full(least_keys(B, cols).to_dense(fill_value=np.inf)), \
        sub.reduce_rowwise(gb.agg.count).new().to_dense(fill_value=0).astype(np.int64)


def gathered_summary(comm, B_local, ids: np.ndarray, n: int, cols=None) -> tuple:
    """SPMD planning: row_summary of every row of B, each rank computing its own rows (``ids``,
    global) and one allgather of R + 1 numbers per row."""
    least, deg = row_summary(B_local, cols)
    mine = (np.asarray(ids, dtype=np.int64), least.to_dense().astype(np.float32), deg)
    del least
    parts = comm.allgather(mine) if comm is not None else [mine]
    out, degree = np.full((n, DRAWS), NONE, dtype=np.float32), np.zeros(n, dtype=np.int64)
    for rows, vals, d in parts:
        out[rows], degree[rows] = vals, d
    del parts, mine
    return _full(out), degree


def output_entries(ctx, r: int, A_r, block: int | None = None, cols=None) -> tuple[int, int] | None:
    """(estimated entries, multiply-adds) of rank r's rows of a sparse x sparse product (``A_r``:
    its rows of A, scipy CSR, global columns): the memory its output needs and the work; None
    when B is not static. Inside a static mask: the mask's entries in those rows (an upper
    bound, no estimate made) and a dot product per mask entry. ``block``, ``cols``: the
    product's columns ``cols`` only (a 2D plan's column block, numbered ``block``)."""
    if ctx.masked and ctx.product.pl.is_static(ctx.node.args[2]):
        M = operand(ctx, ctx.node.args[2])
        M = M if ctx.me is not None else M[ctx.rows.owned[r], :].new()
        M = M if cols is None else M[:, cols].new()
        # SuiteSparse's masked product takes a dot product per mask entry: about the row's
        # entries twice (its row of A and the column of B it meets)
        per_row = M.reduce_rowwise(gb.agg.count).new().to_dense(fill_value=0)
        return int(M.nvals), int(2 * (per_row * np.diff(A_r.indptr)).sum())
    summary = b_summary(ctx, block, cols)
    if summary is None:
        return None
    least, degree = summary
    flops = int(degree[A_r.indices].sum())
    est = float(row_entries(gb.io.from_scipy_sparse(A_r), least).sum()) if A_r.nnz else 0.0
    return int(round(min(est, flops))), flops


def b_summary(ctx, block: int | None = None, cols=None):
    """B's row_summary (of columns ``cols``, numbered ``block``) for a product with a static sparse
    B, made once per product and block (SPMD planning: a collective, so every rank calls it, at
    the same point of lowering); None otherwise."""
    pl, b = ctx.product.pl, ctx.node.args[1]
    if not ctx.b_sparse or not pl.is_static(b) or (ctx.masked and pl.is_static(ctx.node.args[2])):
        return None   # (inside a static mask its entries bound the output: no summary made)
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


def forget(product) -> None:
    """Drop what the estimates keep for one product (B's summary, the keys): planning is over."""
    product.__dict__.pop("_b_summary", None)
    product.__dict__.pop("_a_copy", None)
    _keys.cache_clear()
