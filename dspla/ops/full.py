"""full: a constant of another value's shape, every entry present (built from identity, apply,
mask, cast and ewise_add: no op of its own). Python: ``dp.full``; files: the same."""
from __future__ import annotations

from .._types import DTypeLike, Scalar
from ..errors import Span
from ..ir.types import DType
from .apply import apply
from .cast import cast
from .define import DTYPE, EXPR, SCALAR, Expr, is_scalar, named, node_of, scalar, span_or_caller, spelling
from .ewise import ewise_add
from .identity import eye
from .mask import mask


@spelling(file=(("like", EXPR), ("value", SCALAR), ("dtype", DTYPE)))
def full(like: Expr, value: Scalar, dtype: DTypeLike | None = None, *, span: Span | None = None) -> Expr:
    """A constant of ``like``'s shape with every entry present and equal to ``value``.

    GraphBLAS has no implicit zero: ``x + 1`` adds to x's present entries only, and an entry x
    lacks stays missing; ``dp.ewise_add(x, dp.full(x, 1.0))`` (or ``x + dp.full(x, 0) + 1``)
    reaches every entry. ``dtype``: by default like's; bool for a bool value, float64 for a
    float value and an integer or bool like. Built from existing ops (an empty matrix of like's shape, united with a
    1 x 1 constant that broadcasts), so every stage handles it already."""
    span = span_or_caller(span)
    value = scalar(value)
    if not is_scalar(value):
        raise TypeError(f"full(): the value is a number or a bool, got {type(value).__name__}")
    x = node_of(like, "like")
    if dtype is None:   # like's, unless the value says otherwise (a bool, or a float for integer values)
        dtype = DType.bool if isinstance(value, bool) else \
            DType.float64 if isinstance(value, float) and not x.type.dtype.is_float else x.type.dtype
    dt = named(DType.parse, dtype, span)
    one = eye(1, dt.value, span=span)
    if dt is DType.bool:
        c = one if bool(value) else apply(one, "lnot", span=span)
    else:
        c = one if value == 1 else apply(one, "times", right=dt.np.type(value).item(), span=span)
    empty = mask(Expr(x), Expr(x), complement=True, structure=True, span=span)
    if x.type.dtype is not dt:
        empty = cast(empty, dt, span=span)
    return ewise_add(empty, c, "second", span=span)
