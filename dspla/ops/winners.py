"""argbest and route: the gradients of min/max products, made by reverse mode (not written by
users). argbest (attribute: semiring; arguments: a, b, c = a ⊕.⊗ b): on c's entries, the lowest
inner index k whose term a[i,k] ⊗ b[k,j] equals c[i,j] (the winner; int64). route (axis 'cols' |
'rows', factor; arguments: g, k, f): g[i,j] (times f[k,j], resp. f[i,k], when factor) summed into
[i, k] (cols: n x f.nrows) or [k, j] (rows). The kernels are kernels/winners.py's."""
from __future__ import annotations

from .. import algebra
from ..errors import DimensionMismatch, DomainMismatch, NoGradient
from ..instr.layout import REP
from ..ir.types import DType, Kind, Type
from .define import NOTHING, define, touched, unify, unify_shapes
from .define.lazy import kernel

winners = kernel("winners")

ARGBEST = define("argbest", attrs=("semiring",))
ROUTE = define("route", attrs=("axis", "factor"))


@ARGBEST.type_rule
def _type_argbest(args, attrs, given, where, span):
    a, b, c = args
    if unify(a.type.ncols, b.type.nrows, where) is None or \
            unify_shapes(c.type.shape, (a.type.nrows, b.type.ncols), where) is None:
        raise DimensionMismatch(f"{where}: c must be a ⊕.⊗ b ({a.type}, {b.type}, {c.type})", span)
    return c.type.with_(dtype=DType.int64)


@ROUTE.type_rule
def _type_route(args, attrs, given, where, span):
    g, k, f = args
    if k.type.dtype is not DType.int64 or unify_shapes(k.type.shape, g.type.shape, where) is None:
        raise DomainMismatch(f"{where}: the winners must be int64 of the cotangent's shape, got {k.type}", span)
    shape = (g.type.nrows, f.type.nrows) if attrs["axis"] == "cols" else (f.type.ncols, g.type.ncols)
    return Type(Kind.sparse, shape, g.type.dtype)


@ARGBEST.eval_rule()
def _evaluate_argbest(node, args, env):
    return winners.argbest(*args, node.attr("semiring"))


@ROUTE.eval_rule()
def _evaluate_route(node, args, env):
    return winners.route(*args, node.attr("axis"), node.attr("factor"))


@ARGBEST.fact_rule
def _facts_argbest(n, a):
    return NOTHING


@ROUTE.fact_rule
def _facts_route(n, a):
    return NOTHING


@ARGBEST.lower_rule
def _lower_argbest(pl, n):
    """Local when A (indexed by rows) is laid out like the result, with B whole; else through
    the replicated fallback."""
    _local_when_rowwise(pl, n, n.args[0], keep=(0, 2))


@ROUTE.lower_rule
def _lower_route(pl, n):
    """To B's rows (axis 'rows'): every rank's partial summed with one Allreduce; to A's columns:
    local when the winners are laid out like the result."""
    if n.attr("axis") == "rows":
        g, k, a = n.args
        first = pl.layout(g)
        if first != REP and pl.layout(a) == first and pl.layout(k) == first:
            part = pl.slot()
            pl.emit_local(part, n, (pl.value(g), pl.value(k), pl.value(a)), (first, first, first), REP)
            return pl.reduced(n, part, algebra.MONOIDS["plus"])
        return pl.via_rep(n)
    _local_when_rowwise(pl, n, n.args[1], keep=(0, 1))


def _local_when_rowwise(pl, n, rowwise, keep: tuple):
    lay = pl.layout(n)
    first = pl.layout(n.args[0])
    if lay != REP and first == lay and pl.layout(rowwise) == lay:
        out = pl.slot()
        layouts = tuple(pl.layout(a) if i in keep else REP for i, a in enumerate(n.args))
        pl.emit_local(out, n, tuple(pl.value(a, layouts[i]) if i not in keep else pl.value(a)
                                    for i, a in enumerate(n.args)), layouts, lay)
        return pl.set(n, out, lay)
    pl.via_rep(n)


@ARGBEST.work_rule
def _work_argbest(n, args, out):
    return touched(args, out)


@ROUTE.work_rule
def _work_route(n, args, out):
    return touched(args, out)


def _no_gradient(n, g, needs, b):
    raise NoGradient("the winners of a min/max product are piecewise constant (a gradient of a gradient through "
                     "min/max has no rule)")


ARGBEST.vjp_rule()(_no_gradient)
ROUTE.vjp_rule()(_no_gradient)
