"""update: GraphBLAS's write into an existing value, as a new value: ``C<M, replace> accum= T``
(attributes: accum, mask, complement, replace; arguments: c, t and the mask). Python:
``dp.update``; files: the same."""
from __future__ import annotations

from .. import algebra
from .._types import BinaryOpLike
from ..errors import NoGradient, Span
from .define import (
    BINARY,
    BOOL,
    EXPR,
    MASKED,
    NOTHING,
    Expr,
    Facts,
    check_mask,
    define,
    dims_differ,
    elementwise_over,
    make,
    mask_args,
    named,
    node_of,
    span_or_caller,
    spelling,
    touched,
    unify_shapes,
)
from .define.lazy import kernel
from .mxm import output_mask

gbops = kernel("gbops")

UPDATE = define("update", attrs=("accum", "mask", "complement", "replace"))


@UPDATE.type_rule
def _type(args, attrs, given, where, span):
    c, t = args[0], args[1]
    if unify_shapes(c.type.shape, t.type.shape, where) is None:
        dims_differ(where, "an update writes a value of its own shape", c, t, c.type.shape, t.type.shape, span)
    check_mask(args, attrs, c.type.shape, where, span, 2)
    if attrs["accum"] is not None:
        attrs["accum"].dtypes(c.type.dtype, t.type.dtype, where)
    return c.type   # GraphBLAS: the result keeps C's type (T is cast to it)


@UPDATE.eval_rule()
def _evaluate(node, args, env):
    c, t = args[0], args[1]
    want = node.type.dtype
    accum = node.attr("accum")
    compute = accum.dtypes(gbops.dtype_of(c), gbops.dtype_of(t))[0] if accum is not None else want
    out = gbops.cast(c, compute).dup()
    t = gbops.cast(t, compute)
    mask = output_mask(node, args, 2)
    kw = {"mask": mask, "replace": node.attr("replace")} if mask is not None else {}
    if accum is not None:
        out(accum=gbops.binary(accum, compute), **kw) << t
    else:
        out(**kw) << t
    return gbops.cast(out, want)


@UPDATE.fact_rule
def _facts(n, a):
    if n.attr("mask") is not None:
        return NOTHING
    c, t = a[0], a[1]
    if n.attr("accum") is None:
        return t   # without a mask: T
    return Facts(c.full or t.full, c.rows or t.rows, c.cols or t.cols, elementwise_over(n, (c, t), both=False))


@UPDATE.lower_rule
def _lower(pl, n):
    pl.local(n)


@UPDATE.work_rule
def _work(n, args, out):
    return touched(args, out)


@UPDATE.vjp_rule()
def _vjp(n, g, needs, b):
    raise NoGradient("update (C<M> accum= T) has no gradient rule; write it with ewise_add and mask")


@spelling(file=(("c", EXPR), ("t", EXPR), ("accum", BINARY), *MASKED, ("replace", BOOL)))
def update(c: Expr, t: Expr, *, accum: BinaryOpLike | None = None, mask: Expr | None = None,
           complement: bool = False, structure: bool = False, replace: bool = False,
           span: Span | None = None) -> Expr:
    """GraphBLAS's write into an existing value, as a new value: ``C<M, replace> accum= T``.

    Inside the mask (everywhere without one) the result is accum(C, T) where both have an
    entry, else whichever has one (T alone without accum); outside the mask it is C, or
    nothing with ``replace=True``. E.g. BFS levels: ``update(levels, frontier * depth,
    mask=frontier, structure=True)``."""
    extra, mattrs = mask_args(mask, complement, structure)
    acc = None if accum is None else named(algebra.get_binary, accum, span)
    return Expr(make(UPDATE.op, (node_of(c), node_of(t), *extra), (("accum", acc), *mattrs,
                                                                  ("replace", bool(replace))),
                     span=span_or_caller(span)))
