"""resize: the value with another shape (attributes: the new dims): entries outside it are dropped,
new positions are missing; a new dim is a size or the dim it replaces. Python: ``dp.resize(A,
nrows, ncols)``; files: the same. Distributed: where the distributed dim stays, each piece where
it is; else gathered (counted, shown)."""
from __future__ import annotations

from ..errors import DimensionMismatch, NoGradient, Span
from ..ir.types import Dim, Kind, Type
from .define import DIM, EXPR, NOTHING, Expr, define, make, node_of, span_or_caller, spelling, touched
from .input import shape_of

RESIZE = define("resize", attrs=("nrows", "ncols"))


@RESIZE.type_rule
def _type(args, attrs, given, where, span):
    (x,) = args
    shape = (attrs["nrows"], attrs["ncols"])
    for new, old in zip(shape, x.type.shape):
        if isinstance(new, str) and new != old:
            raise DimensionMismatch(f"{where}: a new dim is a size (an int) or the dim it replaces ({old}), "
                                    f"got {new!r}", span)
    kind = x.type.kind if tuple(shape) == tuple(x.type.shape) else Kind.sparse
    return Type(kind, shape, x.type.dtype, "vector" if x.type.form == "vector" and shape[1] == 1 else "matrix")


@RESIZE.eval_rule()
def _evaluate(node, args, env):
    x = args[0].dup()
    nr, nc = node.type.shape   # (a symbolic dim is the one x has: its size, or this piece's, stays)
    x.resize(nr if isinstance(nr, int) else x.nrows, nc if isinstance(nc, int) else x.ncols)
    return x


@RESIZE.fact_rule
def _facts(n, a):
    return NOTHING


@RESIZE.lower_rule
def _lower(pl, n):
    if pl.layout(n) == pl.layout(n.args[0]):
        return pl.local(n)   # the distributed dim stays: each piece where it is
    pl.via_rep(n)


@RESIZE.work_rule
def _work(n, args, out):
    return touched(args, out)


@RESIZE.vjp_rule()
def _vjp(n, g, needs, b):
    """G cut (or padded) back to x's shape: x's entries outside the new shape get no cotangent."""
    x = n.args[0]
    for new, old in zip(n.type.shape, x.type.shape):
        if isinstance(old, str) and new != old:
            raise NoGradient(f"resize from the dim {old} to {new}: its gradient needs {old}'s size known")
    return (b.make(RESIZE.op, (g,), (("nrows", x.type.nrows), ("ncols", x.type.ncols))),)


@spelling(file=(("x", EXPR), ("nrows", DIM), ("ncols", DIM)))
def resize(x: Expr, nrows: Dim, ncols: Dim | None = None, *, span: Span | None = None) -> Expr:
    """x with ``nrows`` x ``ncols`` (a vector: ``resize(v, n)``); entries outside are dropped."""
    node = node_of(x)
    if ncols is None:
        ncols = 1 if node.type.form == "vector" else node.type.ncols
    shape = shape_of((nrows, ncols), "resize")
    return Expr(make(RESIZE.op, (node,), (("nrows", shape[0]), ("ncols", shape[1])), span=span_or_caller(span)))
