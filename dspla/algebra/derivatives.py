"""How a cotangent passes back through each built-in binary operator: the derivative facts of the
operator rows (``BinaryOp.grad``), which reverse mode reads (autodiff/vjp.py and the ops'
gradient rules), never an operator's name. ``b`` is the builder the rules build IR with
(autodiff/builders.py)."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import NoGradient


@dataclass(frozen=True)
class Derivatives:
    """How a cotangent ``g`` passes back through a binary operator z = x op y: facts of its row
    that reverse mode (autodiff/vjp.py) reads; ``b`` builds the IR (autodiff/builders.py).
    Each is None where the operator has none (the gradient rule then says so).

    intersection: (for x, for y), each (b, g, x, y, z) -> x's (y's) cotangent where both are present
    union: (b, g, x, y) -> (x's, y's) over a union (eWiseAdd: a lone entry passes unchanged);
        ``union_same_shape``: it holds for operands of one shape only
    bound: (b, g, x, z, s, right) -> x's cotangent in z = x op s (right) or s op x
    constant: (s, right) -> whether x op s (s op x) does not depend on x at all (x * 0)
    product: the multiplies of the transposed products of C = A plus.op B: (A's: G plus.m Bᵀ,
        B's: Aᵀ plus.m G, B's written (Gᵀ plus.m A)ᵀ)
    term: d(x op y)/dx in a min/max product: "one", or "other" (y)

    An operator with ``selects`` (min, max) is differentiated by where it routes the cotangent: to
    the operand it keeps (ties: the first), so it needs no rules here."""
    intersection: tuple | None = None
    union: Callable[..., Any] | None = None
    union_same_shape: bool = False
    bound: Callable[..., Any] | None = None
    constant: Callable[[Any, bool], bool] | None = None
    product: tuple[str, str, str] | None = None
    term: str | None = None


def _union_minus(b: Any, g: Any, x: Any, y: Any) -> tuple[Any, Any]:
    # GraphBLAS eWiseAdd minus: x - y where both are present, a lone y entry passes unchanged
    return g, b.add(b.mask(g, x, structure=True, complement=True), b.neg(b.mask(g, x, structure=True)))


def _union_keep(first: bool) -> Callable[..., tuple[Any, Any]]:
    """first (second) over a union: the kept operand gets g; the other only where it is alone."""
    def rule(b: Any, g: Any, x: Any, y: Any) -> tuple[Any, Any]:
        other = b.mask(g, x if first else y, structure=True, complement=True)
        return (g, other) if first else (other, g)
    return rule


def _div_bound(divides: bool) -> Callable[..., Any]:
    """x / s (``divides``: x is the dividend) or s / x: -s / x^2 = -z / x."""
    def rule(b: Any, g: Any, x: Any, z: Any, s: Any, right: bool) -> Any:
        if right == divides:
            return b.bind(g, "div", s)
        return b.neg(b.mul(b.mul(g, z), x, "div"))
    return rule


def _pow_bound(b: Any, g: Any, x: Any, z: Any, s: Any, right: bool) -> Any:
    if right and s == 2:
        return b.mul(g, b.bind(x, "times", 2.0))
    if right:                                                  # x ** s
        return b.mul(g, b.bind(b.bind(x, "pow", s - 1), "times", s))
    if s <= 0:                                                 # s ** x
        raise NoGradient(f"{s} ** x has no gradient for a base <= 0")
    return b.mul(g, b.bind(z, "times", math.log(s)))


def _sign(positive: bool) -> Callable[..., Any]:
    return (lambda b, g, *_: g) if positive else (lambda b, g, *_: b.neg(g))


_PLUS = Derivatives(intersection=(_sign(True), _sign(True)), union=lambda b, g, x, y: (g, g),
                    bound=lambda b, g, *_: g, term="one")
_TIMES = Derivatives(intersection=(lambda b, g, x, y, z: b.mul(g, y), lambda b, g, x, y, z: b.mul(g, x)),
                     bound=lambda b, g, x, z, s, right: b.bind(g, "times", s), constant=lambda s, right: s == 0,
                     product=("times", "times", "times"), term="other")
_MINUS = Derivatives(intersection=(_sign(True), _sign(False)), union=_union_minus, union_same_shape=True,
                     bound=lambda b, g, x, z, s, right: g if right else b.neg(g))
_RMINUS = Derivatives(intersection=(_sign(False), _sign(True)), bound=lambda b, g, x, z, s, right: b.neg(g) if right
                      else g)
_DIV = Derivatives(intersection=(lambda b, g, x, y, z: b.mul(g, y, "div"),
                                 lambda b, g, x, y, z: b.neg(b.mul(b.mul(g, z), y, "div"))), bound=_div_bound(True))
_RDIV = Derivatives(intersection=(lambda b, g, x, y, z: b.neg(b.mul(b.mul(g, z), x, "div")),   # z = y / x
                                  lambda b, g, x, y, z: b.mul(g, x, "div")), bound=_div_bound(False))
# x ** y: d/dx = y x^(y-1) = z y / x, d/dy = z log x
_POW = Derivatives(intersection=(lambda b, g, x, y, z: b.mul(b.mul(g, z), b.mul(y, x, "div")),
                                 lambda b, g, x, y, z: b.mul(b.mul(g, z), b.un(x, "log"))),
                   bound=_pow_bound, constant=lambda s, right: right and s == 0)
_FIRST = Derivatives(intersection=(_sign(True), _sign(True)), union=_union_keep(True), union_same_shape=True,
                     bound=lambda b, g, *_: g, product=("first", "second", "first"), term="one")
_SECOND = Derivatives(intersection=(_sign(True), _sign(True)), union=_union_keep(False), union_same_shape=True,
                      bound=lambda b, g, *_: g, product=("first", "second", "first"), term="one")
_SELECTS = Derivatives()   # min, max: by ``selects``
