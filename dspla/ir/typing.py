"""Type rules, one per op, and ``make`` — the only way nodes are built.

A rule takes the argument nodes and attributes and returns the result Type, or raises a
DimensionMismatch/DomainMismatch that names the expression, both shapes and the source
span. The verifier re-runs the same rules after every pass.
"""
from __future__ import annotations

from typing import Callable

from ..errors import DimensionMismatch, DomainMismatch, DsplaError, Span
from .node import Node, Op
from .types import DType, Kind, Type

TYPE_RULES: dict[Op, Callable] = {}
ATTRS: dict[Op, frozenset] = {}   # the attributes a node of each op carries (the verifier checks them)


def type_rule(*ops: Op, attrs=()):
    def register(fn):
        for op in ops:
            TYPE_RULES[op] = fn
            ATTRS[op] = frozenset(attrs)
        return fn
    return register


def make(op: Op, args=(), attrs=(), *, type: Type | None = None, span: Span | None = None,
         name: str | None = None) -> Node:
    """Build a node, inferring its type with the op's rule (leaves take their type as given)."""
    args = tuple(args)
    attrs = tuple(attrs)
    try:
        inferred = TYPE_RULES[op](args, dict(attrs), type, _where(op, args, attrs), span)
    except DsplaError as e:
        if e.span is None and span is not None:  # algebra rows do not know where they were used
            raise e.at(span) from None
        raise
    return Node(op, args, attrs, inferred, span, name)


def _where(op, args, attrs) -> str:
    probe = Node(op, args, attrs, Type(Kind.dense, (1, 1)))
    return f"{probe.op_text()}({', '.join(a.label for a in args)})"


def _dims_differ(where, what, a: Node, b: Node, da, db, span):
    raise DimensionMismatch(f"{where}: {what}: {a.label} is {a.type} and {b.label} is {b.type} ({da} != {db})",
                            span)


@type_rule(Op.INPUT, attrs=("name", "role"))
def _input(args, attrs, given, where, span):
    if given is None:
        raise ValueError(f"{where}: an input needs its declared type")
    return given


@type_rule(Op.IDENTITY)
def _identity(args, attrs, given, where, span):
    if given is None or given.shape[0] != given.shape[1]:
        raise DimensionMismatch(f"{where}: an identity matrix is square, got {given and given.shape}", span)
    return given


@type_rule(Op.MXM, attrs=("semiring",))
def _mxm(args, attrs, given, where, span):
    a, b = args
    if a.type.ncols != b.type.nrows:
        _dims_differ(where, "inner dimensions differ", a, b, a.type.ncols, b.type.nrows, span)
    _, out = attrs["semiring"].dtypes(a.type.dtype, b.type.dtype, where)
    kind = Kind.sparse if a.type.kind is Kind.sparse and b.type.kind is Kind.sparse else Kind.dense
    return Type(kind, (a.type.nrows, b.type.ncols), out)


def broadcast_shape(a: Node, b: Node, where, span):
    shape = []
    for axis in (0, 1):
        da, db = a.type.shape[axis], b.type.shape[axis]
        if da == db or db == 1:
            shape.append(da)
        elif da == 1:
            shape.append(db)
        else:
            _dims_differ(where, f"shapes do not match or broadcast along axis {axis}", a, b, da, db, span)
    return tuple(shape)


@type_rule(Op.EWISE_ADD, attrs=("op",))
def _ewise_add(args, attrs, given, where, span):
    a, b = args
    shape = broadcast_shape(a, b, where, span)
    _, out = attrs["op"].dtypes(a.type.dtype, b.type.dtype, where)
    # a union is as full as its fullest operand
    kind = Kind.dense if any(x.type.kind is Kind.dense for x in args) else Kind.sparse
    return Type(kind, shape, out)


@type_rule(Op.EWISE_MULT, attrs=("op",))
def _ewise_mult(args, attrs, given, where, span):
    a, b = args
    shape = broadcast_shape(a, b, where, span)
    _, out = attrs["op"].dtypes(a.type.dtype, b.type.dtype, where)
    # an intersection is as sparse as its sparsest full-shape operand
    full = [x for x in args if tuple(x.type.shape) == shape]
    kind = Kind.sparse if any(x.type.kind is Kind.sparse for x in full) else Kind.dense
    return Type(kind, shape, out)


@type_rule(Op.APPLY, attrs=("op",))
def _apply(args, attrs, given, where, span):
    (x,) = args
    _, out = attrs["op"].dtypes(x.type.dtype, where)
    return x.type.with_(dtype=out)


def scalar_dtype(value, like: DType) -> DType:
    """Python scalars are weak, as in numpy 2: they take the other operand's dtype when it holds them."""
    if isinstance(value, bool):
        return DType.bool
    if isinstance(value, int):
        return like if like.is_numeric else DType.int64
    return like if like.is_float else DType.float64


@type_rule(Op.APPLY_BIND, attrs=("op", "scalar", "side"))
def _apply_bind(args, attrs, given, where, span):
    (x,) = args
    s = scalar_dtype(attrs["scalar"], x.type.dtype)
    a, b = (s, x.type.dtype) if attrs["side"] == "left" else (x.type.dtype, s)
    _, out = attrs["op"].dtypes(a, b, where)
    return x.type.with_(dtype=out)


@type_rule(Op.SELECT, attrs=("op", "thunk"))
def _select(args, attrs, given, where, span):
    (x,) = args
    op = attrs["op"]  # nonzero takes no thunk: it applies to bool values whatever the thunk
    if op.on == "value" and op.name != "nonzero" and x.type.dtype is DType.bool \
            and not isinstance(attrs["thunk"], bool):
        raise DomainMismatch(f"{where}: comparing bool values with {attrs['thunk']!r}", span)
    return x.type


@type_rule(Op.MASK, attrs=("complement", "structure"))
def _mask(args, attrs, given, where, span):
    x, m = args
    if tuple(x.type.shape) != tuple(m.type.shape):
        _dims_differ(where, "the mask must have the shape of the value", x, m, x.type.shape, m.type.shape, span)
    return x.type


@type_rule(Op.TRANSPOSE)
def _transpose(args, attrs, given, where, span):
    (x,) = args
    return x.type.with_(shape=(x.type.ncols, x.type.nrows))


@type_rule(Op.REDUCE, attrs=("monoid", "axis"))
def _reduce(args, attrs, given, where, span):
    (x,) = args
    axis = attrs["axis"]
    shape = {"rows": (x.type.nrows, 1), "cols": (1, x.type.ncols), "all": (1, 1)}[axis]
    out = attrs["monoid"].check(x.type.dtype, where)
    return Type(Kind.dense, shape, out)


@type_rule(Op.CAST, attrs=("dtype",))
def _cast(args, attrs, given, where, span):
    (x,) = args
    return x.type.with_(dtype=attrs["dtype"])


@type_rule(Op.DROPOUT_MASK, attrs=("p",))
def _dropout_mask(args, attrs, given, where, span):
    x, seed = args
    if tuple(seed.type.shape) != (1, 1) or seed.type.dtype is not DType.int64:
        raise DomainMismatch(f"{where}: the seed must be a 1 x 1 int64 value, got {seed.type}", span)
    if not 0.0 <= attrs["p"] < 1.0:
        raise DomainMismatch(f"{where}: the drop probability must be in [0, 1), got {attrs['p']}", span)
    dt = x.type.dtype if x.type.dtype.is_float else DType.float64
    return x.type.with_(dtype=dt)


def check_rules_cover_ops():
    missing = [op for op in Op if op not in TYPE_RULES]
    assert not missing, f"ops without a type rule: {missing}"


check_rules_cover_ops()
