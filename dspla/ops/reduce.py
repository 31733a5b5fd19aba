"""reduce: reduce with a monoid (attributes: monoid; axis 'rows' -> n x 1, 'cols' -> 1 x m, 'all'
-> 1 x 1); a row with no entries gives a missing entry. Python: ``dp.reduce``, ``dp.reduce_rows``,
``dp.reduce_cols``, ``dp.reduce_all``; files: the same."""
from __future__ import annotations

from typing import Literal

from .. import algebra
from .._types import MonoidLike
from ..errors import NoGradient, Span
from ..ir.types import Kind, Type
from .define import AXIS, EXPR, MONOID, Expr, Facts, define, make, named, node_of, span_or_caller, spelling, touched
from .define.lazy import kernel, library
from .form import as_scalar, as_vector
from .transpose import transpose

_ss = library("suitesparse_graphblas")
gbops = kernel("gbops")
_item = kernel("item")
_prepared = kernel("prepared")

REDUCE = define("reduce", attrs=("monoid", "axis"))


@REDUCE.type_rule
def _type(args, attrs, given, where, span):
    (x,) = args
    axis = attrs["axis"]
    shape = {"rows": (x.type.nrows, 1), "cols": (1, x.type.ncols), "all": (1, 1)}[axis]
    out = attrs["monoid"].check(x.type.dtype, where)
    # a vector's reductions are a vector (by rows: itself) and a scalar
    form = "matrix" if x.type.form == "matrix" or axis == "cols" else "vector" if axis == "rows" else "scalar"
    return Type(Kind.dense, shape, out, form)


@REDUCE.eval_rule(into=True)
def _evaluate(node, args, env, into=None):
    (x,) = args
    m, axis = node.attr("monoid"), node.attr("axis")
    dt = node.type.dtype
    x = gbops.cast(x, dt)
    mon = gbops.monoid(m, dt)
    if axis == "rows":
        return gbops.column(gbops.reduced(x, mon, "rows"), x.shape[0])
    if axis == "cols":
        return gbops.row(gbops.reduced(x, mon, "cols"), x.shape[1])
    s = x.reduce_scalar(mon).new()
    return _item.scalar(None if s.is_empty else s.value, dt, into)   # (an empty reduction leaves it missing)


@REDUCE.prepare_rule
def _prepare(node, sig):
    ((gdt, nrows, _),) = sig
    m, dt = node.attr("monoid"), node.type.dtype
    name = _prepared.typed_name(dt)
    if _prepared.dtype_of_type(gdt) is not dt or name is None or gbops._user(m):
        return None
    mon = gbops.monoid(m, dt)
    if node.attr("axis") == "rows":
        return _by_rows(mon, gdt, nrows)
    if node.attr("axis") != "all":
        return None
    fn = getattr(_ss.lib, f"GrB_Matrix_reduce_{name}")
    cell = _ss.ffi.new(f"{_item._TYPED[name].ctype}*")
    count, write = _prepared.counter(), _item.writer(dt)

    def step(args, into):
        if not count(args[0]):   # an empty reduction leaves the result missing
            return write(None, into)
        _item.check(fn(cell, _prepared.NULL, mon.gb_obj, args[0].gb_obj[0], _prepared.NULL), "reduce")
        return write(cell[0], into)
    return step


def _by_rows(mon, gdt, nrows: int):
    """x's rows reduced into an n x 1 column, one GrB_Matrix_reduce_Monoid (the evaluation rule's
    python-graphblas expression and the Scalars its sizes make cost more than the C call on a
    small x). SuiteSparse holds an n x 1 matrix by column, as a vector, so the C call writes it
    as one (the cast python-graphblas's Vector._as_matrix makes the other way); checked once:
    otherwise None, and the evaluation rule reduces."""
    lib, ffi = _ss.lib, _ss.ffi
    probe, fmt = _item.new_matrix(gdt, nrows, 1), ffi.new("int32_t*")
    _item.check(lib.GxB_Matrix_Option_get_INT32(probe.gb_obj[0], lib.GxB_FORMAT, fmt), "get")
    if fmt[0] != lib.GxB_BY_COL:
        return None

    def step(args, into):
        C = _item.new_matrix(gdt, nrows, 1)
        if args[0].ncols == 0:   # (no entries: an empty column, gbops.reduced says why)
            return C
        _item.check(lib.GrB_Matrix_reduce_Monoid(ffi.cast("GrB_Vector", C.gb_obj[0]), _prepared.NULL, _prepared.NULL,
                                                 mon.gb_obj, args[0].gb_obj[0], _prepared.NULL), "reduce")
        return C
    return step


@REDUCE.fact_rule
def _facts(n, a):
    axis = n.attr("axis")
    # (a row full in X has an entry: its reduction is present)
    over = a[0].over if axis == "rows" and n.args[0].type.nrows == n.type.nrows else None
    return Facts(a[0].rows if axis == "rows" else a[0].cols if axis == "cols" else a[0].rows, over=over)


@REDUCE.lower_rule
def _lower(pl, n):
    pl.reduction(n, n.attr("axis"), n.attr("monoid"))


@REDUCE.work_rule
def _work(n, args, out):
    return touched(args, out)


@REDUCE.vjp_rule()
def _vjp(n, g, needs, b):
    x = n.args[0]
    m, axis = n.attr("monoid"), n.attr("axis")
    if m.linear:
        return (b.spread(x, g),)
    if m.selects is None:
        raise NoGradient(f"reductions with {m.name} have no gradient rule (differentiable: plus, min, max)")
    cand = b.mask(x, b.mul(x, n, "eq"))          # entries equal to their row's (column's, ...) result
    if axis == "rows":
        idx = b.un(cand, "colindex")
        win = b.mul(idx, b.reduce(idx, "min", "rows"), "eq")
        return (b.mask(b.spread(cand, g), win),)
    if axis == "cols":
        idx = b.un(cand, "rowindex")
        win = b.mul(idx, b.reduce(idx, "min", "cols"), "eq")
        return (b.mask(b.spread(cand, g), win),)
    ri = b.un(cand, "rowindex")                   # all: the first winner in row-major order
    row = b.mask(cand, b.mul(ri, b.reduce(ri, "min", "all"), "eq"))
    ci = b.un(row, "colindex")
    win = b.mul(ci, b.reduce(ci, "min", "all"), "eq")
    return (b.mask(b.spread(row, g), win),)


@spelling(file=(("x", EXPR), ("monoid", MONOID), ("axis", AXIS)))
def reduce(x: Expr, monoid: MonoidLike = "plus", axis: Literal["rows", "cols", "all"] = "rows", *,
           span: Span | None = None) -> Expr:
    """Reduce with a monoid: axis 'rows' gives an n x 1 vector (one value per row), 'cols' a
    1 x m vector, 'all' a 1 x 1 scalar. A row with no entries gives a missing entry."""
    if axis not in ("rows", "cols", "all"):
        raise ValueError(f"axis is 'rows', 'cols' or 'all', got {axis!r}")
    return Expr(make(REDUCE.op, (node_of(x),), (("monoid", named(algebra.get_monoid, monoid, span)), ("axis", axis)),
                     span=span_or_caller(span)))


@spelling(file=(("x", EXPR), ("monoid", MONOID)))
def reduce_rows(x: Expr, monoid: MonoidLike = "plus", *, span: Span | None = None) -> Expr:
    return reduce(x, monoid, "rows", span=span_or_caller(span))


@spelling(file=(("x", EXPR), ("monoid", MONOID)))
def reduce_cols(x: Expr, monoid: MonoidLike = "plus", *, span: Span | None = None) -> Expr:
    return reduce(x, monoid, "cols", span=span_or_caller(span))


@spelling(file=(("x", EXPR), ("monoid", MONOID)))
def reduce_all(x: Expr, monoid: MonoidLike = "plus", *, span: Span | None = None) -> Expr:
    return reduce(x, monoid, "all", span=span_or_caller(span))


@spelling(file=(("x", EXPR), ("monoid", MONOID)))
def reduce_rowwise(x: Expr, monoid: MonoidLike = "plus", *, span: Span | None = None) -> Expr:
    """A vector of x's rows reduced with a monoid (a row with no entries: a missing entry)."""
    return as_vector(reduce(x, monoid, "rows", span=span_or_caller(span)), span=span_or_caller(span))


@spelling(file=(("x", EXPR), ("monoid", MONOID)))
def reduce_columnwise(x: Expr, monoid: MonoidLike = "plus", *, span: Span | None = None) -> Expr:
    """A vector of x's columns reduced with a monoid."""
    span = span_or_caller(span)   # (the 1 x m result transposed, not x: a copy of the result's size)
    return as_vector(transpose(reduce(x, monoid, "cols", span=span), span=span), span=span)


@spelling(file=(("x", EXPR), ("monoid", MONOID)))
def reduce_scalar(x: Expr, monoid: MonoidLike = "plus", *, span: Span | None = None) -> Expr:
    """A scalar: every entry of x reduced with a monoid (none: a missing scalar)."""
    return as_scalar(reduce(x, monoid, "all", span=span_or_caller(span)), span=span_or_caller(span))
