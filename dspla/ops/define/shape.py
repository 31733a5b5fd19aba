"""What type rules share: errors that name the expression and both shapes, broadcasting, masks,
and the dtype a Python scalar takes.

Dims that must agree unify (``unify``): equal dims, or a size other than 1 and a symbol, where
the symbol binds to the size (``X : dense[n, 4]`` plus ``Y : dense[n, c]`` binds c = 4; a 1
meeting a symbol broadcasts where an op broadcasts, and is a mismatch elsewhere). The result keeps
the symbol, which carries how a dim is partitioned; the node records the binding (``binds``),
and a program's bindings are checked against each other when a function is made and against the
data when it runs. Two different sizes, or two different symbols, do not unify."""
from __future__ import annotations

from ...errors import DimensionMismatch, DomainMismatch
from ...ir.node import Node
from ...ir.types import Dim, DType, Type


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


def same_type(a: Type, b: Type, where) -> bool:
    """Equal types, their shapes unified (a size meeting a symbol binds it)."""
    return a.kind is b.kind and a.dtype is b.dtype and a.is_stack == b.is_stack \
        and unify_shapes(a.shape, b.shape, where) is not None


def dims_differ(where, what, a: Node, b: Node, da, db, span):
    da, db = (f"[{', '.join(map(str, d))}]" if isinstance(d, tuple) else d for d in (da, db))   # shapes as written
    raise DimensionMismatch(f"{where}: {what}: {a.label} is {a.type} and {b.label} is {b.type} ({da} != {db})",
                            span)


MASK_KINDS = (None, "value", "structure")


def check_mask(args, attrs, shape, where, span, first: int):
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
                dims_differ(where, f"shapes do not match or broadcast along axis {axis}", a, b, da, db, span)
            shape.append(d)
    return tuple(shape)


def scalar_dtype(value, like: DType) -> DType:
    """Python scalars are weak, as in numpy 2: they take the other operand's dtype when it holds them."""
    if isinstance(value, bool):
        return DType.bool
    if isinstance(value, int):
        return like if like.is_numeric else DType.int64
    return like if like.is_float else DType.float64
