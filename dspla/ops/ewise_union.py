"""ewise_union: C = A ∪ B under a binary operator with defaults (attributes: op, left, right):
op(a, b) where both are present, op(a, right) where only A is, op(left, b) where only B is
(GxB_eWiseUnion: unlike ewise_add, a lone entry goes through the operator). Python:
``dp.ewise_union(A, B, op, left_default, right_default)``; files: the same."""
from __future__ import annotations

from .. import algebra
from .._types import BinaryOpLike, Scalar
from ..errors import Span
from ..ir.types import Kind, Type, joined
from .define import (
    BINARY,
    EXPR,
    NOTHING,
    SCALAR,
    Expr,
    define,
    dims_differ,
    is_scalar,
    make,
    named,
    node_of,
    scalar,
    span_or_caller,
    spelling,
    touched,
)
from .define.lazy import kernel
from .ewise import EWISE_MULT

gbops = kernel("gbops")


EWISE_UNION = define("ewise_union", attrs=("op", "left", "right"))


@EWISE_UNION.type_rule
def _type(args, attrs, given, where, span):
    a, b = args
    if tuple(a.type.shape) != tuple(b.type.shape):
        dims_differ(where, "a union takes operands of one shape", a, b, a.type.shape, b.type.shape, span)
    _, out = attrs["op"].dtypes(a.type.dtype, b.type.dtype, where)
    kind = Kind.dense if Kind.dense in (a.type.kind, b.type.kind) else Kind.sparse
    return Type(kind, a.type.shape, out, joined(a.type.shape, a.type, b.type))


@EWISE_UNION.eval_rule()
def _evaluate(node, args, env):
    a, b = args
    op = node.attr("op")
    compute, out = op.dtypes(gbops.dtype_of(a), gbops.dtype_of(b))
    left, right = (compute.np.type(node.attr(s)).item() for s in ("left", "right"))
    res = gbops.cast(a, compute).ewise_union(gbops.cast(b, compute), gbops.binary(op, compute), left, right).new()
    return gbops.cast(res, out)


@EWISE_UNION.fact_rule
def _facts(n, a):
    return NOTHING


@EWISE_UNION.lower_rule
def _lower(pl, n):
    pl.local(n)


@EWISE_UNION.work_rule
def _work(n, args, out):
    return touched(args, out)


def _linked(n):
    return EWISE_MULT.linked(n)


@EWISE_UNION.vjp_rule(linked=_linked)
def _vjp(n, g, needs, b):
    """A ∪ B with defaults is the intersection of A filled with ``left`` where only B is and B filled
    with ``right`` where only A is: ewise_mult's rule on those, each cotangent cut to its operand's
    entries (the defaults are constants)."""
    A, B = n.args
    fa = b.add(A, b.bind(b.mask(B, A, structure=True, complement=True), "second", n.attr("left")), "first")
    fb = b.add(B, b.bind(b.mask(A, B, structure=True, complement=True), "second", n.attr("right")), "first")
    both = b.make(EWISE_MULT.op, (fa, fb), (("op", n.attr("op")),))
    gA, gB = b.through(EWISE_MULT, both, g, needs, f"ewise_union with {n.attr('op').name}")
    return (None if gA is None else b.mask(gA, A, structure=True),
            None if gB is None else b.mask(gB, B, structure=True))


@spelling(file=(("a", EXPR), ("b", EXPR), ("op", BINARY), ("left_default", SCALAR), ("right_default", SCALAR)))
def ewise_union(a: Expr, b: Expr, op: BinaryOpLike, left_default: Scalar, right_default: Scalar, *,
                span: Span | None = None) -> Expr:
    """A ∪ B under op, a lone entry of A combined with ``right_default``, of B with ``left_default``."""
    left, right = scalar(left_default), scalar(right_default)
    if not (is_scalar(left) and is_scalar(right)):
        raise TypeError("ewise_union's defaults are numbers or bools")
    return Expr(make(EWISE_UNION.op, (node_of(a), node_of(b)), (("op", named(algebra.get_binary, op, span)),
                                                                ("left", left), ("right", right)),
                     span=span_or_caller(span)))
