"""extract: C = A(I, J), the rows I and columns J of A in that order (attributes: rows, cols, each a
tuple of indices or None for all; repeated indices repeat). Python: ``dp.extract(A, rows, cols)``,
``A[I, J]``, ``v[I]`` (an int index gives a vector or a scalar); files: ``A[I, J]`` with ints,
slices ``a:b``, ``:`` and ``extract(A, rows, cols)``.

Distributed: when A's distributed axis is taken whole the pieces are extracted where they are;
else each rank extracts the rows (columns) of I (J) it holds and one exchange of the entries
present puts them together."""
from __future__ import annotations

import numpy as np

from .._types import BinaryOpLike, IndexLike
from ..errors import Span
from ..ir.types import Type
from .define import NOTHING, Expr, define, make, node_of, span_or_caller, spelling, touched
from .define.index import check_range, index_attr, lower_by_parts, share, size_of, written
from .define.lazy import library
from .form import as_scalar, as_vector
from .transpose import transpose

gb = library("graphblas")


EXTRACT = define("extract", attrs=("rows", "cols"))


@EXTRACT.type_rule
def _type(args, attrs, given, where, span):
    (x,) = args
    shape = (size_of(attrs["rows"], x.type.nrows), size_of(attrs["cols"], x.type.ncols))
    form = "vector" if x.type.form == "vector" and attrs["cols"] is None else "matrix"
    return Type(x.type.kind, shape, x.type.dtype, form)


@EXTRACT.eval_rule()
def _evaluate(node, args, env):
    # a distributed piece passes its global row (column) ids: it gives the entries of I (J) it holds
    x, row_ids, col_ids = (list(args) + [None, None])[:3]
    I, J = node.attr("rows"), node.attr("cols")
    if row_ids is None and col_ids is None:
        check_range(I, x.nrows, "extract rows")
        check_range(J, x.ncols, "extract columns")
        return x[_ix(I), _ix(J)].new()
    pos_r, loc_r = share(I, row_ids) if row_ids is not None else (None, I)
    pos_c, loc_c = share(J, col_ids) if col_ids is not None else (None, J)
    part = x[_ix(loc_r), _ix(loc_c)].new()
    r, c, v = part.to_coo()
    r = pos_r[r] if pos_r is not None else r
    c = pos_c[c] if pos_c is not None else c
    nr = len(I) if I is not None else x.nrows
    nc = len(J) if J is not None else x.ncols
    return gb.Matrix.from_coo(np.asarray(r, np.int64), np.asarray(c, np.int64), v, nrows=nr, ncols=nc,
                              dtype=x.dtype)


def _ix(ix):
    return slice(None) if ix is None else np.asarray(ix, dtype=np.int64)


@EXTRACT.fact_rule
def _facts(n, a):
    return NOTHING


@EXTRACT.lower_rule
def _lower(pl, n):
    x = n.args[0]
    xl = pl.layout(x)
    whole = {"row": n.attr("rows") is None, "col": n.attr("cols") is None}
    if xl.kind == "rep" or whole[xl.kind] and pl.layout(n) == xl:
        return pl.local(n)   # the distributed axis is taken whole: each piece where it is
    lower_by_parts(pl, n, xl.kind)


@EXTRACT.work_rule
def _work(n, args, out):
    return touched(args[:1], out)


@EXTRACT.vjp_rule()
def _vjp(n, g, needs, b):
    """C = P_I A P_Jᵀ with P_I the rows I of the identity: dA = P_Iᵀ G P_J (a repeated index sums
    its cotangents)."""
    x = n.args[0]
    I, J = n.attr("rows"), n.attr("cols")
    dt = g.type.dtype
    if I is not None:
        g = b.mxm(b.T(b.make(EXTRACT.op, (b.eye(x.type.nrows, dt),), (("rows", I), ("cols", None)))), g)
    if J is not None:
        g = b.mxm(g, b.make(EXTRACT.op, (b.eye(x.type.ncols, dt),), (("rows", J), ("cols", None))))
    return (g,)


@spelling()
def extract(x: Expr, rows: IndexLike = None, cols: IndexLike = None, *, out: Expr | None = None,
            mask: Expr | None = None, accum: BinaryOpLike | None = None,
            complement: bool = False, structure: bool = False, replace: bool = False,
            span: Span | None = None) -> Expr:
    """C = x(rows, cols): ``rows``/``cols`` an int (a vector or scalar results), a slice, a list or
    array of ints (repeats allowed) or None for all. A vector's ``extract(v, I)`` is a vector.
    ``out=C`` writes into C as GraphBLAS does (``C<mask, replace> accum= x(I, J)``); without it a
    mask keeps the result's entries where it holds."""
    span = span_or_caller(span)
    node = node_of(x)
    if node.type.form == "vector" and cols is not None and not (isinstance(cols, slice) and cols == slice(None)):
        raise TypeError("a vector takes one index: v[I]")
    I, one_row = index_attr(rows, node.type.nrows, "extract rows", span)
    J, one_col = index_attr(cols, node.type.ncols, "extract columns", span)
    t = Expr(make(EXTRACT.op, (node,), (("rows", I), ("cols", J)), span=span))
    if one_row and (one_col or node.type.form == "vector"):
        t = as_scalar(t, span=span)
    elif one_row:
        t = as_vector(transpose(t, span=span), span=span)   # a row of A: a vector
    elif one_col:
        t = as_vector(t, span=span)
    return written(t, out, mask, accum, complement, structure, replace, span)
