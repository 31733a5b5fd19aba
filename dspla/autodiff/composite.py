"""Rules for composites the DSL builds from primitives (``softmax``, ``log_softmax``): recognised
by their shape in the IR, differentiated as a whole. The primitives' rules would give the same
values up to rounding, in about four times as many element-wise ops (the max shift alone
routes a cotangent that is zero in exact arithmetic through a winner computation).

    log_softmax: L = y - log(Σ_row exp y), y = x - max_row x      dx = g - exp(L) Σ_row g
    softmax:     S = e / Σ_row e,         e = exp(x - max_row x)   dx = S (g - Σ_row g S)
"""
from __future__ import annotations

from ..ir import Node, Op
from .builders import Builder


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
    """('log_softmax' | 'softmax', x) when n is one of the composites of x, else None."""
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


def vjp(kind: str, n: Node, g: Node, b: Builder) -> Node:
    if kind == "log_softmax":
        return b.add(g, b.neg(b.mul(b.un(n, "exp"), b.reduce(g, "plus", "rows"))))
    return b.mul(n, b.add(g, b.neg(b.reduce(b.mul(g, n), "plus", "rows"))))
