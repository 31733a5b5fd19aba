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
from .define.lazy import kernel, library
from .ewise import EWISE_MULT
from .ewise import _facts_add as union_facts

_ss = library("suitesparse_graphblas")
gb = library("graphblas")
gbops = kernel("gbops")
_item = kernel("item")
_prepared = kernel("prepared")


EWISE_UNION = define("ewise_union", attrs=("op", "left", "right"))


@EWISE_UNION.type_rule
def _type(args, attrs, given, where, span):
    a, b = args
    if tuple(a.type.shape) != tuple(b.type.shape):
        dims_differ(where, "a union takes operands of one shape", a, b, a.type.shape, b.type.shape, span)
    _, out = attrs["op"].dtypes(a.type.dtype, b.type.dtype, where)
    kind = Kind.dense if Kind.dense in (a.type.kind, b.type.kind) else Kind.sparse
    return Type(kind, a.type.shape, out, joined(a.type.shape, a.type, b.type))


@EWISE_UNION.eval_rule(into=True)
def _evaluate(node, args, env, into=None):   # (``into``: its prepared step writes there; the rule makes its own)
    a, b = args
    op = node.attr("op")
    compute, out = op.dtypes(gbops.dtype_of(a), gbops.dtype_of(b))
    left, right = (compute.np.type(node.attr(s)).item() for s in ("left", "right"))
    res = gbops.cast(a, compute).ewise_union(gbops.cast(b, compute), gbops.binary(op, compute), left, right).new()
    return gbops.cast(res, out)


@EWISE_UNION.prepare_rule
def _prepare(node, sig):
    """GxB_Matrix_eWiseUnion with the defaults as C scalars made once (python-graphblas's
    expression made two Scalars and an output each call: ~150 us of a Luby iteration's step):
    operands of one shape already in the operator's dtype; others take the evaluation rule."""
    (adt, ar, ac), (bdt, br, bc) = sig
    a, b = _prepared.dtype_of_type(adt), _prepared.dtype_of_type(bdt)
    if a is None or b is None or (ar, ac) != (br, bc):
        return None
    op = node.attr("op")
    compute, out = op.dtypes(a, b)
    gop = _prepared.binary_call(op, compute)
    if gop is None or a is not compute or b is not compute:
        return None
    left, right = (gb.Scalar.from_value(compute.np.type(node.attr(k)).item(), dtype=compute.gb)
                   for k in ("left", "right"))
    odt, fn, null = gb.dtypes.lookup_dtype(out.gb), _ss.lib.GxB_Matrix_eWiseUnion, _prepared.NULL

    def step(args, into):
        C = _prepared.output(into, odt, ar, ac)
        _item.check(fn(C.gb_obj[0], null, null, gop.gb_obj, args[0].gb_obj[0], left.gb_obj[0], args[1].gb_obj[0],
                       right.gb_obj[0], null), "eWiseUnion")
        return C
    return step


@EWISE_UNION.fact_rule
def _facts(n, a):
    return union_facts(n, a)   # (present wherever either operand is, as eWiseAdd)


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
