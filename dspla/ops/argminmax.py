"""argmin, argmax: per row (axis 'rows' -> n x 1) or per column (axis 'cols' -> 1 x m), the
position of the smallest (largest) entry present, as int64: a column index by rows, a row index by
columns; ties go to the lowest index, and a row or column with no entries gives a missing entry.
python-graphblas spells it ``A.reduce_rowwise(agg.ss.argmin)``; a vector's own argmin (a scalar)
is axis 'cols' of the vector. Python: ``dp.argmin``, ``dp.argmax``; files: the same.

Across processes, when the axis reduced over is split: each rank's best value per column (row),
one Allreduce by min (max) of those, then each rank's lowest global index among its entries equal
to the best, one Allreduce by min: two vectors the size of the result, never the operand."""
from __future__ import annotations

from typing import Literal

import numpy as np

from .. import algebra
from ..errors import Span
from ..instr import Allreduce
from ..instr.layout import REP
from ..ir.types import DType, Kind, Type
from .define import AXIS, EXPR, Expr, Facts, Family, define, make, node_of, span_or_caller, spelling, touched
from .define.lazy import kernel
from .reduce import REDUCE

gbops = kernel("gbops")

ARGMIN = define("argmin", attrs=("axis",))
ARGMAX = define("argmax", attrs=("axis",))
BOTH = Family(ARGMIN, ARGMAX)
_BEST = {"argmin": "min", "argmax": "max"}   # the monoid that finds the best value


@BOTH.type_rule
def _type(args, attrs, given, where, span):
    (x,) = args
    axis = attrs["axis"]
    algebra.MONOIDS["min"].check(x.type.dtype, str(where))
    shape = (x.type.nrows, 1) if axis == "rows" else (1, x.type.ncols)
    # a vector by 'cols' is the index of its best entry: a scalar
    form = "matrix" if x.type.form != "vector" else "vector" if axis == "rows" else "scalar"
    return Type(Kind.dense, shape, DType.int64, form)


@BOTH.eval_rule()
def _evaluate(node, args, env):
    """The whole axis here: SuiteSparse's argmin/argmax aggregators. A piece of it (args: the
    piece, its global ids along the axis, the best values over all pieces): the lowest global
    index among the piece's entries equal to the best."""
    x, axis = args[0], node.attr("axis")
    if len(args) == 1:
        agg, int64 = getattr(gbops.gb.agg.ss, node.op.value), DType.int64.gb   # (int32 values: int32 indices)
        if axis == "rows":
            return gbops.column(x.reduce_rowwise(agg).new(dtype=int64), x.shape[0])
        return gbops.row(x.reduce_columnwise(agg).new(dtype=int64), x.shape[1])
    ids, best = args[1], args[2]
    r, c, v = x.to_coo()
    at, along = (c, r) if axis == "cols" else (r, c)   # (the result's position, the index reduced over)
    size = x.shape[1] if axis == "cols" else x.shape[0]
    bi, bj, bv = best.to_coo()
    value, has = np.zeros(size, v.dtype), np.zeros(size, bool)
    pos = bj if axis == "cols" else bi
    value[pos], has[pos] = bv, True
    keep = has[at] & (v == value[at])
    idx, where = np.asarray(ids, np.int64)[along[keep]], at[keep]
    zeros = np.zeros(len(idx), np.uint64)
    rows, cols = (zeros, where) if axis == "cols" else (where, zeros)
    shape = (1, size) if axis == "cols" else (size, 1)
    return gbops.gb.Matrix.from_coo(rows, cols, idx, nrows=shape[0], ncols=shape[1], dtype=DType.int64.gb,
                                    dup_op=gbops.gb.binary.min)


@BOTH.fact_rule
def _facts(n, a):
    return Facts(a[0].rows if n.attr("axis") == "rows" else a[0].cols)   # (present where the row has an entry)


@BOTH.lower_rule
def _lower(pl, n):
    """Local when the axis reduced over is whole on every rank; else the best values' Allreduce,
    then the winners' (by min: the lowest global index)."""
    (x,) = n.args
    axis, xl = n.attr("axis"), pl.layout(x)
    if xl.kind != ("row" if axis == "cols" else "col"):
        return pl.local(n)
    monoid = algebra.MONOIDS[_BEST[n.op.value]]
    best = make(REDUCE.op, (x,), (("monoid", monoid), ("axis", axis)), span=n.span)
    part = pl.slot()
    pl.emit_local(part, best, (pl.value(x),), (xl,), REP)
    everywhere = part
    if pl.P > 1:
        everywhere = pl.slot()
        pl.emit(Allreduce(everywhere, part, monoid, entries=pl.entries(n), label=pl.message_label(n)))
    ids = pl.const_all(lambda r: pl.dims[xl.dim].owned[r])
    winners = pl.slot()
    pl.emit_local(winners, n, (pl.value(x), ids, everywhere), (xl,), REP)
    pl.reduced(n, winners, algebra.MONOIDS["min"])


@BOTH.work_rule
def _work(n, args, out):
    return touched(args, out)


@BOTH.vjp_rule(linked=lambda n: (False,))
def _vjp(n, g, needs, b):
    """A position does not change with small changes of the values: a constant of the step."""
    return (None,)


def _build(definition, x: Expr, axis: str | None, span: Span | None) -> Expr:
    node = node_of(x)
    axis = axis or ("cols" if node.type.form == "vector" else "rows")
    if axis not in ("rows", "cols"):
        raise ValueError(f"axis is 'rows' or 'cols', got {axis!r}")
    return Expr(make(definition.op, (node,), (("axis", axis),), span=span_or_caller(span)))


@spelling(file=(("x", EXPR), ("axis", AXIS)))
def argmin(x: Expr, axis: Literal["rows", "cols"] | None = None, *, span: Span | None = None) -> Expr:
    """Per row (axis 'rows', the default for a matrix: n x 1) or per column ('cols': 1 x m), the
    index of the smallest entry present (ties: the lowest index; none present: missing), int64.
    A vector's argmin (axis 'cols', its default) is a scalar."""
    return _build(ARGMIN, x, axis, span_or_caller(span))


@spelling(file=(("x", EXPR), ("axis", AXIS)))
def argmax(x: Expr, axis: Literal["rows", "cols"] | None = None, *, span: Span | None = None) -> Expr:
    """As ``argmin``, for the largest entry."""
    return _build(ARGMAX, x, axis, span_or_caller(span))
