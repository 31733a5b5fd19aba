"""power: A ⊕.⊗ A ⊕.⊗ ... by repeated squaring (a spelling built from mxm, no op of its own).
Python: ``dp.power(A, k, semiring)``; files: the same."""
from __future__ import annotations

from .._types import SemiringLike
from ..errors import DimensionMismatch, Span
from .define import EXPR, SCALAR, SEMIRING, Expr, node_of, span_or_caller, spelling
from .mxm import mxm


@spelling(file=(("a", EXPR), ("k", SCALAR), ("semiring", SEMIRING)))
def power(a: Expr, k: int, semiring: SemiringLike = "plus_times", *, span: Span | None = None) -> Expr:
    """A ⊕.⊗ A ⊕.⊗ ... (k factors, k >= 1) by repeated squaring: about 2 log2 k products."""
    span = span_or_caller(span)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"power: k is a whole number >= 1, got {k!r}")
    t = node_of(a).type
    if t.nrows != t.ncols:
        raise DimensionMismatch(f"power of a square matrix, got {node_of(a).label} of shape {list(t.shape)}", span)
    result, square = None, a
    while True:
        if k & 1:
            result = square if result is None else mxm(result, square, semiring, span=span)
        k >>= 1
        if not k:
            return result
        square = mxm(square, square, semiring, span=span)
