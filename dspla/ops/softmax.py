"""softmax and log_softmax: row-wise, over the present entries of each row, built from ewise_mult,
reduce and apply (no op of their own). Reverse mode recognises them by their shape in the IR and
differentiates each as a whole: the primitives' rules give the same values up to rounding in
about four times as many element-wise ops (the max shift alone routes a cotangent that is zero in
exact arithmetic through a winner computation).

    log_softmax: L = y - log(Σ_row exp y), y = x - max_row x      dx = g - exp(L) Σ_row g
    softmax:     S = e / Σ_row e,         e = exp(x - max_row x)   dx = S (g - Σ_row g S)

Python: ``dp.softmax``, ``dp.log_softmax``; files: the same."""
from __future__ import annotations

from ..errors import Span
from ..ir.node import Node, Op
from ..ir.types import DType
from .apply import exp, log
from .cast import cast
from .define import EXPR, Expr, composite, node_of, span_or_caller, spelling
from .ewise import ewise_mult
from .reduce import reduce_rows


def _floating(x: Expr, span: Span | None) -> Expr:
    """x, or x in float64 when it holds integers: the shift by the row max is made there (an
    int64 x - max(x) can leave int64 where the softmax itself is plain)."""
    return cast(x, "float64", span=span) if node_of(x).type.dtype is DType.int64 else x


@spelling(file=(("x", EXPR),))
def softmax(x: Expr, *, span: Span | None = None) -> Expr:
    """Row-wise softmax over the present entries of each row (shifted by the row max)."""
    span = span_or_caller(span)
    x = _floating(x, span)
    e = exp(ewise_mult(x, reduce_rows(x, "max", span=span), "minus", span=span), span=span)
    return ewise_mult(e, reduce_rows(e, "plus", span=span), "div", span=span)


@spelling(file=(("x", EXPR),))
def log_softmax(x: Expr, *, span: Span | None = None) -> Expr:
    """Row-wise log-softmax over the present entries of each row."""
    span = span_or_caller(span)
    x = _floating(x, span)
    y = ewise_mult(x, reduce_rows(x, "max", span=span), "minus", span=span)
    lse = log(reduce_rows(exp(y, span=span), "plus", span=span), span=span)
    return ewise_mult(y, lse, "minus", span=span)


# ---------------------------------------------------------------- differentiated whole
def _is(n: Node, op: Op, name: str | None = None) -> bool:
    if n.op is not op:
        return False
    if name is None:
        return True
    key = "monoid" if op is Op.REDUCE else "op"
    return n.attr(key).name == name


def _rows(n: Node, monoid: str) -> bool:
    return _is(n, Op.REDUCE, monoid) and n.attr("axis") == "rows"


def _shifted(y: Node) -> Node | None:
    """x when y = x - max_row(x) (an intersection with the row maximum), else None."""
    if _is(y, Op.EWISE_MULT, "minus"):
        x, m = y.args
        if _rows(m, "max") and m.args[0] is x:
            return x
    return None


def match(n: Node):
    """('log_softmax' | 'softmax', x) when n is one of the composites of x (as built above), else None."""
    if _is(n, Op.EWISE_MULT, "minus"):
        y, lse = n.args
        x = _shifted(y)
        if x is not None and _is(lse, Op.APPLY, "log") and _rows(lse.args[0], "plus"):
            e = lse.args[0].args[0]
            if _is(e, Op.APPLY, "exp") and e.args[0] is y:
                return "log_softmax", x
    if _is(n, Op.EWISE_MULT, "div"):
        e, s = n.args
        if _is(e, Op.APPLY, "exp") and _rows(s, "plus") and s.args[0] is e:
            x = _shifted(e.args[0])
            if x is not None:
                return "softmax", x
    return None


def vjp(kind: str, n: Node, g: Node, b) -> Node:
    if kind == "log_softmax":
        return b.add(g, b.neg(b.mul(b.un(n, "exp"), b.reduce(g, "plus", "rows"))))
    return b.mul(n, b.add(g, b.neg(b.reduce(b.mul(g, n), "plus", "rows"))))


composite(match, vjp)
