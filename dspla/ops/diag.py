"""diag: a vector as the k-th diagonal of a matrix (``diag_matrix``), or a matrix's k-th diagonal
as a vector (``diag_vector``); attribute k, the diagonal (0 the main one, > 0 above). Python:
``dp.diag(v, k)``, ``dp.diag(A, k)``; files: ``diag(x, k)``. k != 0 needs dims of known size.

Distributed: the main diagonal of a matrix by rows is in each rank's own rows, and a vector by
rows gives a matrix whose rows are those same rows: each rank makes its piece where it is."""
from __future__ import annotations

import numpy as np

from ..errors import DimensionMismatch, Span
from ..ir.types import Kind, Type
from .define import EXPR, NOTHING, SCALAR, Expr, Family, define, make, node_of, span_or_caller, spelling, touched
from .define.index import local_with_ids
from .define.lazy import library
from .resize import RESIZE

gb = library("graphblas")


DIAG_MATRIX = define("diag_matrix", attrs=("k",))
DIAG_VECTOR = define("diag_vector", attrs=("k",))
BOTH = Family(DIAG_MATRIX, DIAG_VECTOR)


def _sized(dims, k, where, span):
    if not all(isinstance(d, int) for d in dims):
        raise DimensionMismatch(f"{where}: diagonal {k} of a {'non-square ' if not k else ''}matrix needs dims of "
                                f"known size, got {list(dims)}", span)


@DIAG_MATRIX.type_rule
def _type_matrix(args, attrs, given, where, span):
    (v,) = args
    k = attrs["k"]
    if v.type.ncols != 1:
        raise DimensionMismatch(f"{where}: diag of a vector, got {v.label} of shape {list(v.type.shape)}", span)
    if k:
        _sized(v.type.shape, k, where, span)
    n = v.type.nrows + abs(k) if k else v.type.nrows
    return Type(Kind.sparse, (n, n), v.type.dtype)


@DIAG_VECTOR.type_rule
def _type_vector(args, attrs, given, where, span):
    (x,) = args
    k = attrs["k"]
    r, c = x.type.shape
    if k == 0 and r == c:
        n = r
    else:
        _sized((r, c), k, where, span)
        n = max(0, min(r, c - k) if k >= 0 else min(r + k, c))
    return Type(Kind.sparse, (n, 1), x.type.dtype, "vector")


@DIAG_MATRIX.eval_rule()
def _evaluate_matrix(node, args, env):
    # a piece by rows: its rows' global ids, and the columns of the whole
    v, row_ids, _, ncols = (list(args) + [None, None, None])[:4]
    k = node.attr("k")
    r, _, vals = v.to_coo()
    r = r.astype(np.int64)
    if row_ids is not None:
        return gb.Matrix.from_coo(r, np.asarray(row_ids, np.int64)[r], vals, nrows=v.nrows, ncols=ncols,
                                  dtype=v.dtype)
    n = v.nrows + abs(k)
    return gb.Matrix.from_coo(r + max(-k, 0), r + max(k, 0), vals, nrows=n, ncols=n, dtype=v.dtype)


@DIAG_VECTOR.eval_rule()
def _evaluate_vector(node, args, env):
    x, row_ids = args[0], (list(args) + [None, None])[1]
    k = node.attr("k")
    r, c, vals = x.to_coo()
    r, c = r.astype(np.int64), c.astype(np.int64)
    if row_ids is not None:   # a piece by rows, k = 0: the entries on its rows' own columns
        on = np.asarray(row_ids, np.int64)[r] == c
        return gb.Matrix.from_coo(r[on], np.zeros(on.sum(), np.int64), vals[on], nrows=x.nrows, ncols=1,
                                  dtype=x.dtype)
    on = c - r == k
    i = r[on] if k >= 0 else c[on]
    n = max(0, min(x.nrows, x.ncols - k) if k >= 0 else min(x.nrows + k, x.ncols))
    return gb.Matrix.from_coo(i, np.zeros(i.size, np.int64), vals[on], nrows=n, ncols=1, dtype=x.dtype)


@BOTH.fact_rule
def _facts(n, a):
    return NOTHING


@BOTH.lower_rule
def _lower(pl, n):
    if pl.layout(n) != pl.layout(n.args[0]) or n.attr("k"):
        return pl.via_rep(n)   # (k != 0: dims of known size, replicated)
    local_with_ids(pl, n, *((pl.concrete(n.type.ncols),) if n.op is DIAG_MATRIX.op else ()))


@BOTH.work_rule
def _work(n, args, out):
    return touched(args, out)


@DIAG_MATRIX.vjp_rule()
def _vjp_matrix(n, g, needs, b):
    return (b.make(DIAG_VECTOR.op, (g,), (("k", n.attr("k")),)),)   # the k-th diagonal of G


@DIAG_VECTOR.vjp_rule()
def _vjp_vector(n, g, needs, b):
    x, k = n.args[0], n.attr("k")
    d = b.make(DIAG_MATRIX.op, (g,), (("k", k),))
    if tuple(d.type.shape) != tuple(x.type.shape):   # (a non-square A: sizes known) the square one cut to A's
        d = b.make(RESIZE.op, (d,), (("nrows", x.type.nrows), ("ncols", x.type.ncols)))
    return (d,)


@spelling(file=(("x", EXPR), ("k", SCALAR)))
def diag(x: Expr, k: int = 0, *, span: Span | None = None) -> Expr:
    """A vector's values on the k-th diagonal of a square matrix, or a matrix's k-th diagonal as
    a vector (GraphBLAS's Matrix_diag and Vector_diag)."""
    span = span_or_caller(span)
    node = node_of(x)
    k = int(k)
    op = DIAG_MATRIX if node.type.form == "vector" else DIAG_VECTOR
    return Expr(make(op.op, (node,), (("k", k),), span=span))
