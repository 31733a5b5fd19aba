"""Type rules, one per op, and ``make`` — the only way nodes are built.

A rule takes the argument nodes and attributes and returns the result Type, or raises a
DimensionMismatch/DomainMismatch that names the expression, both shapes and the source
span. The verifier re-runs the same rules after every pass.

Dims that must agree unify (``unify``): equal dims, or a size other than 1 and a symbol, where
the symbol binds to the size (``X : dense[n, 4]`` plus ``Y : dense[n, c]`` binds c = 4; a 1
meeting a symbol broadcasts where an op broadcasts, and is a mismatch elsewhere). The result keeps
the symbol, which carries how a dim is partitioned; the node records the binding (``binds``),
and a program's bindings (``bindings``) are checked against each other when a function is made
and against the data when it runs. Two different sizes, or two different symbols, do not unify.
"""
from __future__ import annotations

from typing import Callable

from ..errors import DimensionMismatch, DomainMismatch, DsplaError, Span
from .node import Node, Op
from .types import Dim, DType, Kind, TupleType, Type

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
    where = _where(op, args, attrs)
    try:
        inferred = TYPE_RULES[op](args, dict(attrs), type, where, span)
    except DsplaError as e:
        if e.span is None and span is not None:  # algebra rows do not know where they were used
            raise e.at(span) from None
        raise
    return Node(op, args, attrs, inferred, span, name, tuple(where.binds))


class _Where:
    """The op and its arguments as error messages name them, spelled out only when a message
    is made (every node is type-checked at build and after each pass; few ever fail); and the
    dims its rule bound (``unify``)."""
    __slots__ = ("op", "args", "attrs", "binds")

    def __init__(self, op, args, attrs):
        self.op, self.args, self.attrs = op, args, attrs
        self.binds: list[tuple[str, int]] = []

    def __str__(self) -> str:
        probe = Node(self.op, self.args, self.attrs, Type(Kind.dense, (1, 1)))
        return f"{probe.op_text()}({', '.join(a.label for a in self.args)})"

    __format__ = lambda self, spec: format(str(self), spec)   # noqa: E731 - f-strings
    __repr__ = __str__


def _where(op, args, attrs) -> _Where:
    return _Where(op, args, attrs)


def unify(da, db, where) -> Dim | None:
    """The dim two dims that must agree stand for, or None when they cannot: equal dims; a size
    other than 1 and a symbol, the symbol bound to the size (recorded on ``where``; the symbol is
    returned)."""
    if da == db:
        return da
    if isinstance(da, str) != isinstance(db, str) and 1 not in (da, db):   # (a 1 broadcasts, or is a vector's)
        sym, size = (da, db) if isinstance(da, str) else (db, da)
        where.binds.append((sym, size))
        return sym
    return None


def unify_shapes(a, b, where) -> tuple | None:
    """Two shapes that must be equal, unified dim by dim (None when a pair cannot)."""
    out = tuple(unify(x, y, where) for x, y in zip(a, b))
    return None if None in out else out


def same_dims(da, db) -> bool:
    """Whether two dims stand for the same size once symbols are bound (a size other than 1 and a
    symbol do: a 1 against a symbol broadcasts)."""
    return da == db or isinstance(da, str) != isinstance(db, str) and 1 not in (da, db)


def _dims_differ(where, what, a: Node, b: Node, da, db, span):
    da, db = (f"[{', '.join(map(str, d))}]" if isinstance(d, tuple) else d for d in (da, db))   # shapes as written
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


MASK_KINDS = (None, "value", "structure")


def _check_mask(args, attrs, shape, where, span, first: int):
    """The optional mask argument (args[first]) of a masked op."""
    kind = attrs["mask"]
    if kind not in MASK_KINDS:
        raise DomainMismatch(f"{where}: a mask is 'value' or 'structure', got {kind!r}", span)
    if (kind is None) != (len(args) == first):
        raise DomainMismatch(f"{where}: a mask kind needs a mask argument and the reverse", span)
    if kind is not None and unify_shapes(args[first].type.shape, shape, where) is None:
        m = args[first]
        raise DimensionMismatch(f"{where}: the mask {m.label} is {m.type}, but the result is "
                                f"[{shape[0]}, {shape[1]}]", span)


@type_rule(Op.MXM, attrs=("semiring", "mask", "complement"))
def _mxm(args, attrs, given, where, span):
    a, b = args[0], args[1]
    if unify(a.type.ncols, b.type.nrows, where) is None:
        _dims_differ(where, "inner dimensions differ", a, b, a.type.ncols, b.type.nrows, span)
    _, out = attrs["semiring"].dtypes(a.type.dtype, b.type.dtype, where)
    shape = (a.type.nrows, b.type.ncols)
    _check_mask(args, attrs, shape, where, span, 2)
    # a masked product holds entries inside its mask only: stored sparse
    sparse = a.type.kind is Kind.sparse and b.type.kind is Kind.sparse or attrs["mask"] is not None
    return Type(Kind.sparse if sparse else Kind.dense, shape, out)


def broadcast_shape(a: Node, b: Node, where, span):
    shape = []
    for axis in (0, 1):
        da, db = a.type.shape[axis], b.type.shape[axis]
        if da == db or db == 1:
            shape.append(da)
        elif da == 1:
            shape.append(db)
        else:
            d = unify(da, db, where)
            if d is None:
                _dims_differ(where, f"shapes do not match or broadcast along axis {axis}", a, b, da, db, span)
            shape.append(d)
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
    full = [x for x in args if all(same_dims(d, e) for d, e in zip(x.type.shape, shape))]
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
    if unify_shapes(x.type.shape, m.type.shape, where) is None:
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


@type_rule(Op.NVALS)
def _nvals(args, attrs, given, where, span):
    return Type(Kind.dense, (1, 1), DType.int64)


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


@type_rule(Op.UPDATE, attrs=("accum", "mask", "complement", "replace"))
def _update(args, attrs, given, where, span):
    c, t = args[0], args[1]
    if unify_shapes(c.type.shape, t.type.shape, where) is None:
        _dims_differ(where, "an update writes a value of its own shape", c, t, c.type.shape, t.type.shape, span)
    _check_mask(args, attrs, c.type.shape, where, span, 2)
    if attrs["accum"] is not None:
        attrs["accum"].dtypes(c.type.dtype, t.type.dtype, where)
    return c.type   # GraphBLAS: the result keeps C's type (T is cast to it)


@type_rule(Op.WHILE, attrs=("cond", "body", "max_iter", "carried"))
def _while(args, attrs, given, where, span):
    cond, body, n = attrs["cond"], attrs["body"], attrs["carried"]
    m = attrs["max_iter"]
    if not (isinstance(m, str) and m.isidentifier()) and (not isinstance(m, int) or isinstance(m, bool) or m < 0):
        raise DomainMismatch(f"{where}: max_iter is a non-negative integer or a dim, got {m!r}", span)
    for prog, what in ((cond, "condition"), (body, "body")):
        if len(prog.declared) != len(args):
            raise DomainMismatch(f"{where}: the {what} takes {len(prog.declared)} values, the loop gives {len(args)}",
                                 span)
        for p, a in zip(prog.declared, args):
            # a carried value may be stored sparse in the loop though it starts dense
            if not _same_type(p.type, a.type, where) and not _same_type(p.type, a.type.with_(kind=Kind.sparse), where):
                raise DomainMismatch(f"{where}: {p.attr('name')} is {p.type} in the {what} but {a.type} outside",
                                     span)
    (_, c), = cond.outputs
    if tuple(c.type.shape) != (1, 1) or c.type.dtype is not DType.bool:
        raise DomainMismatch(f"{where}: a loop condition is a 1 x 1 bool value (a comparison such as "
                             f"delta > 1e-6), got {c.type}", c.span or span)
    if len(body.outputs) != n:
        raise DomainMismatch(f"{where}: the body gives {len(body.outputs)} values for {n} loop-carried ones", span)
    for (name, v), p in zip(body.outputs, body.declared[:n]):
        if not _same_type(v.type, p.type, where):
            _carried_changes(where, name, p.type, v.type, v.span or span)
    return TupleType(tuple(p.type for p in body.declared[:n]) + (Type(Kind.dense, (1, 1), DType.int64),))


def _same_type(a: Type, b: Type, where) -> bool:
    """Equal types, their shapes unified (a size meeting a symbol binds it)."""
    return a.kind is b.kind and a.dtype is b.dtype and unify_shapes(a.shape, b.shape, where) is not None


def _carried_changes(where, name, before: Type, after: Type, span):
    """A loop body gave a carried value another type: the error names what changed, since only
    a dtype change has a fix in the body (a cast)."""
    if tuple(before.shape) != tuple(after.shape):
        raise DimensionMismatch(f"{where}: loop-carried {name} changes shape in the body: {before} before it and "
                                f"{after} after; a loop-carried value must keep its shape", span)
    hint = "; cast it (cast(x, dtype)) so both agree" if before.dtype is not after.dtype else ""
    raise DomainMismatch(f"{where}: loop-carried {name} is {before} before the body and {after} after it{hint}",
                         span)


@type_rule(Op.ITEM, attrs=("index",))
def _item(args, attrs, given, where, span):
    (t,) = args
    if not isinstance(t.type, TupleType) or not 0 <= attrs["index"] < len(t.type.items):
        raise DomainMismatch(f"{where}: no value {attrs['index']} in {t.type}", span)
    return t.type.items[attrs["index"]]


@type_rule(Op.ARGBEST, attrs=("semiring",))
def _argbest(args, attrs, given, where, span):
    a, b, c = args
    if unify(a.type.ncols, b.type.nrows, where) is None or \
            unify_shapes(c.type.shape, (a.type.nrows, b.type.ncols), where) is None:
        raise DimensionMismatch(f"{where}: c must be a ⊕.⊗ b ({a.type}, {b.type}, {c.type})", span)
    return c.type.with_(dtype=DType.int64)


@type_rule(Op.ROUTE, attrs=("axis", "factor"))
def _route(args, attrs, given, where, span):
    g, k, f = args
    if k.type.dtype is not DType.int64 or unify_shapes(k.type.shape, g.type.shape, where) is None:
        raise DomainMismatch(f"{where}: the winners must be int64 of the cotangent's shape, got {k.type}", span)
    shape = (g.type.nrows, f.type.nrows) if attrs["axis"] == "cols" else (f.type.ncols, g.type.ncols)
    return Type(Kind.sparse, shape, g.type.dtype)


def check_rules_cover_ops():
    missing = [op for op in Op if op not in TYPE_RULES]
    assert not missing, f"ops without a type rule: {missing}"


check_rules_cover_ops()
