"""identity: the identity matrix of the node's shape (value 1). Python: ``dp.eye(n)``; files:
``eye(n)``. It depends only on its size, so planning computes it once (a static value)."""
from __future__ import annotations

from .._types import DTypeLike
from ..errors import DimensionMismatch, DsplaError, Span
from ..formats.limits import check_memory
from ..ir.types import Dim, DType, Kind, Type, concrete
from .define import DIM, DTYPE, NOTHING, Expr, define, make, named, span_or_caller, spelling
from .define.lazy import kernel
from .input import shape_of

gbops = kernel("gbops")

IDENTITY = define("identity")


@IDENTITY.type_rule
def _type(args, attrs, given, where, span):
    if given is None or given.shape[0] != given.shape[1]:
        raise DimensionMismatch(f"{where}: an identity matrix is square, got {given and given.shape}", span)
    return given


@IDENTITY.eval_rule()
def _evaluate(node, args, env):
    n = concrete(node.type.nrows, env.dims, "an identity matrix")
    try:   # row pointers, column indices and the coordinates it is built from: ~40 bytes a row (measured)
        check_memory(40 * n, f"the {n} x {n} identity matrix")
    except DsplaError as e:
        raise e.at(node.span) if node.span else e from None
    return gbops.identity(n, node.type.dtype)


@IDENTITY.fact_rule
def _facts(n, a):
    return NOTHING   # (static anyway: planning knows its value)


@IDENTITY.lower_rule
def _lower(pl, n):
    raise AssertionError(f"{n!r} is handled before lowering")


@IDENTITY.work_rule
def _work(n, args, out):
    return int(out[0])   # one entry a row


@IDENTITY.vjp_rule()
def _vjp(n, g, needs, b):
    return ()


@spelling(file=(("n", DIM), ("dtype", DTYPE)))
def eye(n: Dim, dtype: DTypeLike = "float64", *, span: Span | None = None) -> Expr:
    """The n x n identity matrix (sparse, ones on the diagonal)."""
    t = Type(Kind.sparse, shape_of((n, n), "eye"), named(DType.parse, dtype, span))
    return Expr(make(IDENTITY.op, (), (), type=t, span=span_or_caller(span)))
