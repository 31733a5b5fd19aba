"""mask: keep the entries of arg 0 where the mask arg 1 holds (attributes: complement; structure:
where the mask has an entry, else where its value is true). Python: ``dp.mask``; files: the same."""
from __future__ import annotations

from ..errors import Span
from .define import (
    BOOL,
    EXPR,
    NOTHING,
    Expr,
    bool_mask,
    define,
    dims_differ,
    make,
    node_of,
    span_or_caller,
    spelling,
    touched,
    unify_shapes,
)
from .define.lazy import kernel, library

_ss = library("suitesparse_graphblas")
_gb = library("graphblas")
_item = kernel("item")
_prepared = kernel("prepared")

MASK = define("mask", attrs=("complement", "structure"))


@MASK.type_rule
def _type(args, attrs, given, where, span):
    x, m = args
    if unify_shapes(x.type.shape, m.type.shape, where) is None:
        dims_differ(where, "the mask must have the shape of the value", x, m, x.type.shape, m.type.shape, span)
    return x.type


@MASK.eval_rule(into=True)
def _evaluate(node, args, env, into=None):
    x, m = args
    mask = m.S if node.attr("structure") else m.V
    if node.attr("complement"):
        mask = ~mask
    return x.dup(mask=mask)


@MASK.prepare_rule
def _prepare(node, sig):
    """C<M, replace> = identity(x): x's entries inside the mask, in a free earlier result
    (python-graphblas's ``dup(mask=)`` builds an output and an expression: ~50 us a call). An
    apply, not an assign of x: SuiteSparse 9.4 takes 2.5-7x as long for ``C<¬M, replace> = x``
    as GrB_assign as for the same write as GrB_apply (82K-row vectors: 0.83 ms and 0.32 ms)."""
    (gdt, nr, nc), _ = sig
    if _prepared.dtype_of_type(gdt) is None:
        return None
    lib, null = _ss.lib, _prepared.NULL
    kind = ("S" if node.attr("structure") else "") + ("C" if node.attr("complement") else "")
    desc = getattr(lib, "GrB_DESC_R" + kind)
    identity = _gb.unary.identity[gdt].gb_obj

    def step(args, into):
        C = _prepared.output(into, gdt, nr, nc)
        _item.check(lib.GrB_Matrix_apply(C.gb_obj[0], args[1].gb_obj[0], null, identity, args[0].gb_obj[0], desc),
                    "apply")
        return C
    return step


@MASK.fact_rule
def _facts(n, a):
    return NOTHING   # it drops entries where the mask does not hold


@MASK.lower_rule
def _lower(pl, n):
    pl.local(n)


@MASK.work_rule
def _work(n, args, out):
    return touched(args, out)


@MASK.vjp_rule(linked=lambda n: (True, False))
def _vjp(n, g, needs, b):
    """X's entries the mask lets through get G; the others none: G may hold entries where the
    value is missing (a union's cotangent spans both operands), and there X may be present."""
    return (b.mask(g, n.args[1], structure=n.attr("structure"), complement=n.attr("complement")), None)


@spelling(file=(("x", EXPR), ("m", EXPR), ("complement", BOOL), ("structure", BOOL)))
def mask(x: Expr, m: Expr, *, complement: bool = False, structure: bool = False, span: Span | None = None) -> Expr:
    """Keep entries of x where the mask m holds: its value is true (or, with structure=True,
    it is present); complement=True keeps the others."""
    return Expr(bool_mask(make(MASK.op, (node_of(x), node_of(m)), (("complement", bool(complement)),
                                                                   ("structure", bool(structure))),
                               span=span_or_caller(span))))
