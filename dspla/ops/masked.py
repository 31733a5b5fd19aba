"""masked: an element-wise op computed inside a mask, GraphBLAS's ``C<M> = A ⊕ B`` (attributes:
of, ewise_add or ewise_mult; op, its binary operator; complement; structure; arguments: a, b and
the mask). Users write ``mask(X / Y, M)``; simplify makes it this (passes/simplify.py) when
nothing else reads X / Y, so that only the entries inside the mask are computed: on a BFS level
of a wide frontier, a few thousand instead of every entry of X and Y. No spelling of its own."""
from __future__ import annotations

from ..errors import NoGradient
from ..ir.node import Node, Op
from .define import NOTHING, define, definition, make, touched
from .define.lazy import kernel, library

gb = library("graphblas")
gbops = kernel("gbops")

MASKED = define("masked", attrs=("of", "op", "complement", "structure"))


@MASKED.type_rule
def _type(args, attrs, given, where, span):
    a, b, m = args
    t = definition(Op(attrs["of"])).type((a, b), {"op": attrs["op"]}, None, where, span)
    return definition(Op.MASK).type((_Typed(t), m), {}, None, where, span)


class _Typed:
    """A stand-in argument of a type (the element-wise result's, for mask's type rule)."""
    label = "the element-wise result"

    def __init__(self, type_) -> None:
        self.type = type_


@MASKED.eval_rule()
def _evaluate(node, args, env):
    a, b, m = args
    op = node.attr("op")
    compute, _ = op.dtypes(gbops.dtype_of(a), gbops.dtype_of(b))
    a, b = gbops.cast(a, compute), gbops.cast(b, compute)
    C = gb.Matrix(node.type.dtype.gb, *a.shape)
    both = a.ewise_add if node.attr("of") == "ewise_add" else a.ewise_mult
    mask = gbops.mask_of(m, "structure" if node.attr("structure") else "value", node.attr("complement"))
    C(mask=mask) << both(b, gbops.binary(op, compute))
    return C


@MASKED.fact_rule
def _facts(n, a):
    return NOTHING   # it drops entries where the mask does not hold


@MASKED.lower_rule
def _lower(pl, n):
    pl.local(n)


@MASKED.work_rule
def _work(n, args, out):
    return touched(args, out)


@MASKED.vjp_rule()
def _vjp(n, g, needs, b):
    raise NoGradient("masked is made by simplify, after gradients are built; differentiate mask(X op Y, M)")


def fold(n: Node, uses: dict) -> Node | None:
    """mask(X ⊕ Y, M) as one masked element-wise op, when nothing else reads X ⊕ Y (``uses``: id
    -> readers) and X, Y and the result have one shape (no broadcast); else None."""
    if n.op is not Op.MASK:
        return None
    x, m = n.args
    if x.op not in (Op.EWISE_ADD, Op.EWISE_MULT) or uses.get(id(x), 0) != 1:
        return None
    if any(tuple(a.type.shape) != tuple(x.type.shape) for a in x.args):
        return None
    attrs = (("of", x.op.value), ("op", x.attr("op")), ("complement", n.attr("complement")),
             ("structure", n.attr("structure")))
    return make(MASKED.op, (*x.args, m), attrs, span=n.span)
