"""Small IR builders for the VJP rules: every node is made with ``ir.make`` (so it is type-checked
like any other) and carries the span of the forward node it differentiates, so explain and error
messages point at the line the user wrote.
"""
from __future__ import annotations

from ..algebra import BINARY, MONOIDS, SEMIRINGS, UNARY
from ..errors import NoGradient, Span
from ..ir import Node, Op
from ..ir.types import DType, Kind, Type
from ..ops import make


def one(dtype: DType = DType.float64) -> Node:
    """The cotangent of the loss: a 1 x 1 value 1 (an identity matrix of size 1)."""
    return make(Op.IDENTITY, (), (), type=Type(Kind.sparse, (1, 1), dtype))


def is_one(n: Node) -> bool:
    return n.op is Op.IDENTITY and tuple(n.type.shape) == (1, 1)


def constant(n: Node) -> float | None:
    """The value of a constant cotangent (the loss's 1, scaled: ``-loss``, ``loss / m``), else None."""
    if is_one(n):
        return 1.0
    if n.op is Op.APPLY_BIND and n.attr("op").name == "times" and is_one(n.args[0]):
        return float(n.attr("scalar"))
    return None


class Builder:
    def __init__(self, span: Span | None):
        self.span = span

    def _make(self, op, args, attrs=()):
        return make(op, args, attrs, span=self.span)

    make = _make

    def mxm(self, a: Node, b: Node, semiring: str = "plus_times", mask: Node | None = None) -> Node:
        extra = (mask,) if mask is not None else ()
        attrs = (("semiring", SEMIRINGS[semiring]), ("mask", None if mask is None else "structure"),
                 ("complement", False))
        return self._make(Op.MXM, (a, b, *extra), attrs)

    def through(self, defn, node: Node, g: Node, needs, what: str) -> tuple:
        """Another op's rule on ``node`` (an op written as that one on derived operands); its
        NoGradient says which op was differentiated: ``what``."""
        try:
            return defn.vjp(node, g, needs, self)
        except NoGradient as e:
            raise NoGradient(f"{what}: {e}") from None

    def as_form(self, g: Node, like: Node) -> Node:
        """g in like's form (a vector's cotangent for an n x 1 matrix, or back)."""
        return g if g.type.form == like.type.form else self._make(Op.AS, (g,), (("form", like.type.form),))

    def eye(self, n, dtype: DType = DType.float64) -> Node:
        """The n x n identity (n a size or a dim name)."""
        return make(Op.IDENTITY, (), (), type=Type(Kind.sparse, (n, n), dtype), span=self.span)

    def ones_row(self, n, dtype: DType = DType.float64) -> Node:
        """A 1 x n row of ones: the column sums of the identity."""
        return self.reduce(self.eye(n, dtype), "plus", "cols")

    def T(self, x: Node) -> Node:
        if x.op is Op.TRANSPOSE:
            return x.args[0]
        return self._make(Op.TRANSPOSE, (x,))

    def const(self, value: float, like: Node) -> Node:
        base = one(like.type.dtype)
        return base if value == 1.0 else self._make(Op.APPLY_BIND, (base,), (("op", BINARY["times"]),
                                                                              ("scalar", value), ("side", "right")))

    def mul(self, a: Node, b: Node, op: str = "times") -> Node:
        """Element-wise intersection (a vector or 1 x 1 operand broadcasts); a constant 1 x 1
        operand of a product is bound as a scalar instead."""
        for x, c in ((a, constant(b)), (b, constant(a))):
            if op == "times" and c is not None and x.type.dtype.is_float and tuple(x.type.shape) != (1, 1):
                return x if c == 1.0 else self.bind(x, "times", c)
        return self._make(Op.EWISE_MULT, (a, b), (("op", BINARY[op]),))

    def add(self, a: Node, b: Node, op: str = "plus") -> Node:
        """Element-wise union."""
        return self._make(Op.EWISE_ADD, (a, b), (("op", BINARY[op]),))

    def un(self, x: Node, op: str) -> Node:
        return self._make(Op.APPLY, (x,), (("op", UNARY[op]),))

    def neg(self, x: Node) -> Node:
        c = constant(x)
        return self.const(-c, x) if c is not None else self.un(x, "neg")

    def bind(self, x: Node, op: str, scalar, side: str = "right") -> Node:
        c = constant(x)
        if c is not None and op == "times":
            return self.const(c * float(scalar), x)
        if c is not None and op == "div" and side == "right":
            return self.const(c / float(scalar), x)
        return self._make(Op.APPLY_BIND, (x,), (("op", BINARY[op]), ("scalar", scalar), ("side", side)))

    def reduce(self, x: Node, monoid: str, axis: str) -> Node:
        return self._make(Op.REDUCE, (x,), (("monoid", MONOIDS[monoid]), ("axis", axis)))

    def mask(self, x: Node, m: Node, *, structure: bool = False, complement: bool = False) -> Node:
        return self._make(Op.MASK, (x, m), (("complement", complement), ("structure", structure)))

    def cast(self, x: Node, dtype: DType) -> Node:
        return x if x.type.dtype is dtype else self._make(Op.CAST, (x,), (("dtype", dtype),))

    def spread(self, x: Node, g: Node) -> Node:
        """g (a vector or 1 x 1 value) broadcast onto x's present entries."""
        c = constant(g)
        if c is not None and x.type.dtype.is_float:
            return self.bind(x, "second", c)
        return self.mul(x, g, "second")

    def unbroadcast(self, g: Node, arg: Node, out: Node) -> Node:
        """g (of out's shape) summed over the axes ``arg`` was broadcast along."""
        rows = arg.type.shape[0] == 1 and out.type.shape[0] != 1
        cols = arg.type.shape[1] == 1 and out.type.shape[1] != 1
        if rows and cols:
            return self.reduce(g, "plus", "all")
        if rows:
            return self.reduce(g, "plus", "cols")
        if cols:
            return self.reduce(g, "plus", "rows")
        return g
