"""kronecker: C = kron(A, B) under a binary operator (attribute: op): C[i·mb + k, j·nb + l] =
op(A[i, j], B[k, l]) where both are present. Python: ``dp.kronecker(A, B, op)``; files:
``kronecker(A, B, op)``, ``kron(A, B, op)``. A dim of C is symbolic only where B's is 1 (n·1 = n);
elsewhere the sizes must be known.

Distributed: A by rows with a replicated B of one row gives C's rows where A's are (each rank its
piece); otherwise the operands are gathered (an exchange explain shows and the stats count)."""
from __future__ import annotations

from .. import algebra
from .._types import BinaryOpLike
from ..errors import DimensionMismatch, Span
from ..ir.types import Kind, Type
from .define import BINARY, EXPR, NOTHING, Expr, define, make, named, node_of, span_or_caller, spelling, touched
from .define.lazy import kernel
from .ewise import EWISE_MULT

gbops = kernel("gbops")


KRONECKER = define("kronecker", attrs=("op",))


def _times(a, b, where, span):
    if b == 1:
        return a
    if a == 1:
        return b
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    raise DimensionMismatch(f"{where}: a dim {a} x {b} needs both sizes known (or one of them 1)", span)


@KRONECKER.type_rule
def _type(args, attrs, given, where, span):
    a, b = args
    _, out = attrs["op"].dtypes(a.type.dtype, b.type.dtype, where)
    shape = (_times(a.type.nrows, b.type.nrows, where, span), _times(a.type.ncols, b.type.ncols, where, span))
    kind = Kind.dense if a.type.kind is Kind.dense and b.type.kind is Kind.dense else Kind.sparse
    return Type(kind, shape, out)


@KRONECKER.eval_rule()
def _evaluate(node, args, env):
    a, b = args
    op = node.attr("op")
    compute, out = op.dtypes(gbops.dtype_of(a), gbops.dtype_of(b))
    res = gbops.cast(a, compute).kronecker(gbops.cast(b, compute), gbops.binary(op, compute)).new()
    return gbops.cast(res, out)


@KRONECKER.fact_rule
def _facts(n, a):
    return NOTHING


@KRONECKER.lower_rule
def _lower(pl, n):
    a, b = n.args
    lay = pl.layout(n)
    if pl.replicated(b) and (lay == pl.layout(a) and (lay.kind != "row" or b.type.nrows == 1)
                             and (lay.kind != "col" or b.type.ncols == 1)):
        return pl.local(n)   # (REP, or A's rows (columns) are C's: one row (column) of B)
    pl.via_rep(n)


@KRONECKER.work_rule
def _work(n, args, out):
    return touched(args, out)


def _linked(n):
    return EWISE_MULT.linked(n)   # (first / second read one operand's value only, as element-wise)


@KRONECKER.vjp_rule(linked=_linked)
def _vjp(n, g, needs, b):
    """C[i·mb + k, j·nb + l] = op(A[i, j], B[k, l]) is ewise_mult's op on A and B spread to C's
    shape (``kronecker(A, B, first)``, ``(.., second)``): its rule gives their cotangents there,
    then dA[i, j] sums A's over its block and dB[k, l] over its position in every block, as
    products with 0/1 matrices (the identity kronecker a row of ones)."""
    A, B = n.args
    dt = g.type.dtype
    spread = [b.make(KRONECKER.op, (A, B), (("op", algebra.get_binary(side)),)) for side in ("first", "second")]
    both = b.make(EWISE_MULT.op, tuple(spread), (("op", n.attr("op")),))
    parts = b.through(EWISE_MULT, both, g, needs, f"kronecker with {n.attr('op').name}")
    (ma, na), (mb, nb) = A.type.shape, B.type.shape
    out = []
    for blocks, h in zip((True, False), parts):
        out.append(None if h is None else
                   b.mxm(b.mxm(_sums(b, ma, mb, dt, blocks), h), b.T(_sums(b, na, nb, dt, blocks))))
    return tuple(out)


def _sums(b, outer: int, inner: int, dt, blocks: bool):
    """The 0/1 matrix that sums the rows (outer · inner of them, as C's) of each block
    (``blocks``: outer x outer·inner, I ⊗ 1ᵀ) or of each position in the blocks (inner x
    outer·inner, 1ᵀ ⊗ I)."""
    if (inner if blocks else outer) == 1:
        return b.eye(outer if blocks else inner, dt)
    pair = (b.eye(outer, dt), b.ones_row(inner, dt)) if blocks else (b.ones_row(outer, dt), b.eye(inner, dt))
    return b.make(KRONECKER.op, pair, (("op", algebra.get_binary("times")),))


@spelling(file=(("a", EXPR), ("b", EXPR), ("op", BINARY)))
def kronecker(a: Expr, b: Expr, op: BinaryOpLike = "times", *, span: Span | None = None) -> Expr:
    """The Kronecker product of a and b under a binary operator (GraphBLAS's kronecker)."""
    return Expr(make(KRONECKER.op, (node_of(a), node_of(b)), (("op", named(algebra.get_binary, op, span)),),
                     span=span_or_caller(span)))


@spelling(file=(("a", EXPR), ("b", EXPR), ("op", BINARY)))
def kron(a: Expr, b: Expr, op: BinaryOpLike = "times", *, span: Span | None = None) -> Expr:
    """``kronecker``."""
    return kronecker(a, b, op, span=span_or_caller(span))
