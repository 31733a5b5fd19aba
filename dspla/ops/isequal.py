"""isequal, isclose: whether two values are equal (close), as a bool scalar (spellings built from
ewise_mult, select and nvals, no op of their own). Python: ``dp.isequal(A, B)``, ``dp.isclose(A,
B, rel_tol, abs_tol)``; files: the same."""
from __future__ import annotations

from ..errors import DimensionMismatch, Span
from ..ir.types import DType
from .apply import apply
from .cast import cast
from .define import EXPR, SCALAR, Expr, node_of, span_or_caller, spelling
from .ewise import ewise_mult
from .form import as_scalar
from .nvals import nvals
from .select import select


def _all_of(ok: Expr, a: Expr, b: Expr, span) -> Expr:
    """A bool scalar: a and b have the same pattern and ``ok`` (on their intersection) holds everywhere."""
    same_count = ewise_mult(nvals(a, span=span), nvals(b, span=span), "eq", span=span)
    all_ok = ewise_mult(nvals(select(ok, "nonzero", span=span), span=span), nvals(a, span=span), "eq", span=span)
    return as_scalar(ewise_mult(same_count, all_ok, "land", span=span), span=span)


def _same_shape(a: Expr, b: Expr, what: str, span) -> None:
    sa, sb = node_of(a).type.shape, node_of(b).type.shape
    if tuple(sa) != tuple(sb):
        raise DimensionMismatch(f"{what}: shapes differ: {list(sa)} and {list(sb)}", span)


@spelling(file=(("a", EXPR), ("b", EXPR)))
def isequal(a: Expr, b: Expr, *, span: Span | None = None) -> Expr:
    """A bool scalar: a and b have entries at the same positions with equal values."""
    span = span_or_caller(span)
    _same_shape(a, b, "isequal", span)
    return _all_of(ewise_mult(a, b, "eq", span=span), a, b, span)


@spelling(file=(("a", EXPR), ("b", EXPR), ("rel_tol", SCALAR), ("abs_tol", SCALAR)))
def isclose(a: Expr, b: Expr, rel_tol: float = 1e-7, abs_tol: float = 0.0, *, span: Span | None = None) -> Expr:
    """A bool scalar: the same pattern, and |a - b| <= max(rel_tol·max(|a|, |b|), abs_tol) (or a == b)
    at every entry, as python-graphblas's isclose."""
    span = span_or_caller(span)
    _same_shape(a, b, "isclose", span)
    fa, fb = (x if node_of(x).type.dtype.is_float else cast(x, DType.float64, span=span) for x in (a, b))
    diff = apply(ewise_mult(fa, fb, "minus", span=span), "abs", span=span)
    big = ewise_mult(apply(fa, "abs", span=span), apply(fb, "abs", span=span), "max", span=span)
    tol = apply(apply(big, "times", right=float(rel_tol), span=span), "max", right=float(abs_tol), span=span)
    close = ewise_mult(ewise_mult(diff, tol, "le", span=span), ewise_mult(fa, fb, "eq", span=span), "lor", span=span)
    return _all_of(close, a, b, span)
