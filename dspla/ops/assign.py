"""assign: GraphBLAS's ``C<M, replace>(I, J) accum= A`` (GrB_assign), as a new value (attributes:
rows, cols as extract's; value, a scalar assigned to every position of the region, or None when
A is an argument; accum, mask, complement, replace). Without accum the region I x J of C becomes
A's entries (an entry A lacks is deleted there); with accum, C(I, J) accum A over their union.
The mask, of C's shape, then decides where C takes the result (elsewhere C stays, or is
emptied with replace). Python: ``dp.assign(C, A, rows, cols, mask=, accum=)``; files:
``C[I, J] = A`` and ``assign(...)``.

Distributed: C keeps its layout; each rank writes the positions of the region it holds (A
replicated unless its rows are C's own), so nothing of C moves."""
from __future__ import annotations

import numpy as np

from .. import algebra
from .._types import BinaryOpLike, IndexLike, Scalar
from ..errors import DimensionMismatch, Span
from .apply import APPLY_BIND
from .define import (
    NOTHING,
    Expr,
    bool_mask,
    check_mask,
    define,
    is_scalar,
    make,
    mask_args,
    named,
    node_of,
    scalar,
    span_or_caller,
    spelling,
    touched,
)
from .define.index import check_range, index_attr, local_with_ids, share, size_of
from .define.lazy import kernel
from .ewise import EWISE_ADD
from .extract import EXTRACT
from .mxm import output_mask

gbops = kernel("gbops")


ASSIGN = define("assign", attrs=("rows", "cols", "value", "accum", "mask", "complement", "replace"))


@ASSIGN.type_rule
def _type(args, attrs, given, where, span):
    c = args[0]
    region = (size_of(attrs["rows"], c.type.nrows), size_of(attrs["cols"], c.type.ncols))
    first = 1 if attrs["value"] is not None else 2
    if first == 2 and tuple(args[1].type.shape) != region:
        a = args[1]
        raise DimensionMismatch(f"{where}: the region is [{region[0]}, {region[1]}] but {a.label} is {a.type}", span)
    check_mask(args, attrs, c.type.shape, where, span, first)
    if attrs["accum"] is not None:
        attrs["accum"].dtypes(c.type.dtype, args[1].type.dtype if first == 2 else c.type.dtype, where)
    return c.type   # GraphBLAS: C keeps its type (A is cast to it)


def _ix(ix):
    return slice(None) if ix is None else np.asarray(ix, dtype=np.int64)


@ASSIGN.eval_rule()
def _evaluate(node, args, env):
    value, accum = node.attr("value"), node.attr("accum")
    first = 1 if value is not None else 2
    has_mask = node.attr("mask") is not None
    c, ids = args[0], args[first + has_mask:]
    I, J = node.attr("rows"), node.attr("cols")
    dt = node.type.dtype
    a = gbops.cast(args[1], dt) if first == 2 else dt.np.type(value).item()
    row_ids, col_ids = (list(ids) + [None, None])[:2]
    if row_ids is None and col_ids is None:
        check_range(I, c.nrows, "assign rows")
        check_range(J, c.ncols, "assign columns")
    if row_ids is not None and I is not None:     # a piece by rows: the region's rows it holds
        pos, I = share(I, row_ids)
        a = a[pos, :].new() if first == 2 else a
    if col_ids is not None and J is not None:
        pos, J = share(J, col_ids)
        a = a[:, pos].new() if first == 2 else a
    out = gbops.cast(c, dt).dup()
    mask = output_mask(node, args, first) if has_mask else None
    kw = {"mask": mask, "replace": node.attr("replace")} if mask is not None else {}
    if accum is not None:
        kw["accum"] = gbops.binary(accum, dt)
    out(**kw)[_ix(I), _ix(J)] << a
    return out


@ASSIGN.fact_rule
def _facts(n, a):
    return NOTHING


@ASSIGN.lower_rule
def _lower(pl, n):
    local_with_ids(pl, n)


@ASSIGN.work_rule
def _work(n, args, out):
    return touched(args, out)


@ASSIGN.vjp_rule()
def _vjp(n, g, needs, b):
    """Where the mask lets the assign through: without accum, the region's cotangent goes to A and
    none to C there; with accum, the region is ``accum(C(I, J), A)`` (ewise_add's rule, or apply's
    with a bound scalar). Elsewhere G goes to C (none with replace: C is emptied there)."""
    accum, kind, first = n.attr("accum"), n.attr("mask"), 1 if n.attr("value") is not None else 2
    region = (("rows", n.attr("rows")), ("cols", n.attr("cols")))
    inside = outside = g
    if kind is not None:
        m, structure, comp = n.args[first], kind == "structure", n.attr("complement")
        inside = b.mask(g, m, structure=structure, complement=comp)
        outside = None if n.attr("replace") else b.mask(g, m, structure=structure, complement=not comp)
    g_region = b.make(EXTRACT.op, (inside,), region)
    if accum is None:
        gCr, gA = _nothing(b, g_region), g_region
    else:
        gCr, gA = _through_accum(n, b, g_region, region, needs, first)
    gC = b.make(ASSIGN.op, (inside, gCr), (*region, ("value", None), ("accum", None), ("mask", None),
                                           ("complement", False), ("replace", False)))
    if kind is not None and outside is not None:
        gC = b.add(gC, outside)   # (disjoint)
    if first == 2 and needs[1] and gA is not None:
        gA = b.as_form(gA, n.args[1])
    return (gC, gA if first == 2 and needs[1] else None)[:first] + (None,) * (len(n.args) - first)


def _through_accum(n, b, g_region, region, needs, first):
    """(C(I, J)'s cotangent, A's) through ``accum(C(I, J), A)``."""
    accum = n.attr("accum")
    Cr = b.make(EXTRACT.op, (n.args[0],), region)
    what = f"assign with accum={accum.name}"
    if first == 2:
        t = b.make(EWISE_ADD.op, (Cr, n.args[1]), (("op", accum),))
        gCr, gA = b.through(EWISE_ADD, t, g_region, (True, needs[1]), what)
    else:
        t = b.make(APPLY_BIND.op, (Cr,), (("op", accum), ("scalar", n.attr("value")), ("side", "right")))
        (gCr,), gA = b.through(APPLY_BIND, t, g_region, (True,), what), None
    return b.mask(gCr, Cr, structure=True), gA


def _nothing(b, x):
    """An empty value of x's shape: assigned without accum, it deletes the region."""
    return b.mask(x, x, structure=True, complement=True)


@spelling()
def assign(c: Expr, value: Expr | Scalar, rows: IndexLike = None, cols: IndexLike = None, *,
           mask: Expr | None = None, accum: BinaryOpLike | None = None,
           complement: bool = False, structure: bool = False, replace: bool = False,
           span: Span | None = None) -> Expr:
    """``C<mask, replace>(rows, cols) accum= value`` as a new value: ``value`` an expression of the
    region's shape (a vector for one row, one column or a vector C) or a scalar put at every
    position of the region. Indices as ``extract``'s (None: all); the mask has C's shape."""
    span = span_or_caller(span)
    node = node_of(c, "the value assigned into")
    I, one_row = index_attr(rows, node.type.nrows, "assign rows", span)
    J, one_col = index_attr(cols, node.type.ncols, "assign columns", span)
    for ix, what in ((I, "rows"), (J, "columns")):
        if ix is not None and len(set(ix)) != len(ix):
            raise DimensionMismatch(f"assign: repeated {what} (GraphBLAS leaves such an assign undefined)", span)
    value = scalar(value)
    extra, mattrs = mask_args(mask, complement, structure)
    acc = None if accum is None else named(algebra.get_binary, accum, span)
    attrs = (("rows", I), ("cols", J), ("accum", acc), *mattrs, ("replace", bool(replace)))
    if is_scalar(value):
        return Expr(bool_mask(make(ASSIGN.op, (node, *extra), (("value", value), *attrs), span=span)))
    a = node_of(value, "the value assigned")
    if one_row and not one_col and a.type.form == "vector":   # a row of C from a vector
        a = node_of(Expr(a).T)
    if a.type.form == "vector" and node.type.form == "matrix" and not (one_row or one_col):
        raise DimensionMismatch(f"assign: a vector goes into one row or column of a matrix (an int index), got "
                                f"{a.label} for a region of {len(I) if I else node.type.nrows} rows", span)
    return Expr(bool_mask(make(ASSIGN.op, (node, a, *extra), (("value", None), *attrs), span=span)))
