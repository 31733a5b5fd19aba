"""apply_index: an index-unary operator on each present entry (attributes: op, thunk): rowindex
(i + thunk), colindex (j + thunk), diagindex (j - i + thunk), all int64; and the positional
predicates as bool values (tril, triu, diag, offdiag, rowle, rowgt, colle, colgt, as select's).
Python: ``dp.apply_index(A, "diagindex", thunk)``; files: the same. Distributed: each piece
with its global row (column) ids."""
from __future__ import annotations

import numbers

import numpy as np

from .._types import Scalar
from ..errors import DsplaError, NoGradient, Span, UnknownNameError
from ..ir.types import DType
from .define import EXPR, INDEX_UNARY, NOTHING, SCALAR, Expr, define, make, node_of, span_or_caller, spelling, touched
from .define.lazy import library

gb = library("graphblas")


APPLY_INDEX = define("apply_index", attrs=("op", "thunk"))
INDEX_OPS = {"rowindex": lambda r, c, k: r + k, "colindex": lambda r, c, k: c + k,
             "diagindex": lambda r, c, k: c - r + k}
PREDICATES = {"tril": lambda r, c, k: c - r <= k, "triu": lambda r, c, k: c - r >= k,
              "diag": lambda r, c, k: c - r == k, "offdiag": lambda r, c, k: c - r != k,
              "rowle": lambda r, c, k: r <= k, "rowgt": lambda r, c, k: r > k,
              "colle": lambda r, c, k: c <= k, "colgt": lambda r, c, k: c > k}


@APPLY_INDEX.type_rule
def _type(args, attrs, given, where, span):
    return args[0].type.with_(dtype=DType.int64 if attrs["op"] in INDEX_OPS else DType.bool)


@APPLY_INDEX.eval_rule()
def _evaluate(node, args, env):
    x, row_ids, col_ids = (list(args) + [None, None])[:3]
    op, k = node.attr("op"), int(node.attr("thunk"))
    r, c, _ = x.to_coo(values=False)
    gr = (r if row_ids is None else np.asarray(row_ids)[r]).astype(np.int64)
    gc = (c if col_ids is None else np.asarray(col_ids)[c]).astype(np.int64)
    fn = INDEX_OPS.get(op) or PREDICATES[op]
    return gb.Matrix.from_coo(r, c, fn(gr, gc, k), nrows=x.nrows, ncols=x.ncols,
                              dtype="INT64" if op in INDEX_OPS else "BOOL")


@APPLY_INDEX.fact_rule
def _facts(n, a):
    return NOTHING


@APPLY_INDEX.lower_rule
def _lower(pl, n):
    if pl.replicated(n):
        return pl.local(n)
    pl.with_global_ids(n)


@APPLY_INDEX.work_rule
def _work(n, args, out):
    return touched(args, out)


@APPLY_INDEX.vjp_rule()
def _vjp(n, g, needs, b):
    raise NoGradient("an index-unary operator's value does not depend on the entries")


@spelling(file=(("x", EXPR), ("op", INDEX_UNARY), ("thunk", SCALAR)))
def apply_index(x: Expr, op: str, thunk: Scalar = 0, *, span: Span | None = None) -> Expr:
    """An index-unary operator on x's present entries: rowindex, colindex, diagindex (int64
    positions plus the thunk) or a positional predicate (bool: tril, triu, diag, offdiag,
    rowle, rowgt, colle, colgt)."""
    name = getattr(op, "name", op)
    if not isinstance(name, str) or name not in INDEX_OPS and name not in PREDICATES:
        raise UnknownNameError("index-unary operator", str(name), [*INDEX_OPS, *PREDICATES], span_or_caller(span))
    whole = isinstance(thunk, numbers.Integral) or isinstance(thunk, numbers.Real) and float(thunk).is_integer()
    if isinstance(thunk, bool) or not whole:   # (a fraction would be cut silently)
        raise DsplaError(f"apply_index: the thunk is an integer (an offset of positions), got {thunk!r}",
                         span_or_caller(span))
    return Expr(make(APPLY_INDEX.op, (node_of(x),), (("op", name), ("thunk", int(thunk))), span=span_or_caller(span)))
