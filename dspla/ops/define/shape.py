"""What type rules share: errors that name the expression and both shapes, broadcasting, masks,
and the dtype a Python scalar takes."""
from __future__ import annotations

from ...errors import DimensionMismatch, DomainMismatch
from ...ir.node import Node
from ...ir.types import DType


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
    if kind is not None and tuple(args[first].type.shape) != tuple(shape):
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
            dims_differ(where, f"shapes do not match or broadcast along axis {axis}", a, b, da, db, span)
    return tuple(shape)


def scalar_dtype(value, like: DType) -> DType:
    """Python scalars are weak, as in numpy 2: they take the other operand's dtype when it holds them."""
    if isinstance(value, bool):
        return DType.bool
    if isinstance(value, int):
        return like if like.is_numeric else DType.int64
    return like if like.is_float else DType.float64
