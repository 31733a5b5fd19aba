"""The IR: one closed set of ops and one immutable, printable node type.

A Node is an op applied to argument nodes with attributes, carrying its inferred Type.
Equality and hashing are structural (op, args, attrs, type); the source span and the
user's name for a value are metadata and do not take part, so the same computation written
in Python or in a .dspla file compares equal.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import Span
from .types import Type


class Op(enum.Enum):
    INPUT = "input"            # name, role ('input' | 'param')
    IDENTITY = "identity"      # the identity matrix of the node's shape (value 1)
    MXM = "mxm"                # semiring, mask (None | 'value' | 'structure'), complement: C<M> = A ⊕.⊗ B
                               # with the mask as a third argument; entries outside the mask are not computed
    EWISE_ADD = "ewise_add"    # op: union of the patterns; a vector/1x1 operand broadcasts
    EWISE_MULT = "ewise_mult"  # op: intersection of the patterns; a vector/1x1 operand broadcasts
    APPLY = "apply"            # op: unary operator on present entries
    APPLY_BIND = "apply_bind"  # op, scalar, side: a binary operator with a bound scalar
    SELECT = "select"          # op, thunk: keep entries where the predicate holds
    MASK = "mask"              # complement, structure: keep entries of arg 0 where mask arg 1 holds
    TRANSPOSE = "transpose"
    REDUCE = "reduce"          # monoid, axis ('rows' -> n x 1, 'cols' -> 1 x m, 'all' -> 1 x 1)
    CAST = "cast"              # dtype
    NVALS = "nvals"            # the number of entries present, as a 1 x 1 int64 (always present; 0 when empty)
    DROPOUT_MASK = "dropout_mask"  # p: args (x, seed 1x1 int64): 1/(1-p) on kept entries of x's pattern
    UPDATE = "update"          # accum, mask, complement, replace: args (c, t[, m]): GraphBLAS C<M, replace> accum= T
    WHILE = "while"            # cond, body (sub-Programs), max_iter, carried: args (init..., captured...) -> a tuple
    ITEM = "item"              # index: one value of a tuple (the results of a while loop)
    # gradients of min/max products (made by dspla.autodiff, not written by users):
    ARGBEST = "argbest"        # semiring: args (a, b, c = a ⊕.⊗ b): on c's entries, the lowest inner index k
                               # whose term a[i,k] ⊗ b[k,j] equals c[i,j] (the winner; int64)
    ROUTE = "route"            # axis ('cols' | 'rows'), factor: args (g, k, f): g[i,j] (times f[k,j], resp.
                               # f[i,k], when factor) summed into [i, k] (cols: n x f.nrows) or [k, j] (rows)


Attrs = tuple  # tuple of (key, value) pairs in a fixed order; values hashable


@dataclass(frozen=True, eq=False)
class Node:
    op: Op
    args: tuple["Node", ...]
    attrs: Attrs
    type: Type
    span: Span | None = field(default=None, repr=False)
    name: str | None = field(default=None, repr=False)  # the user's name for this value, if any
    # dims its type rule bound to sizes, (symbol, size) (ir/typing.py: unify); metadata like the span
    binds: tuple = field(default=(), repr=False)

    def __post_init__(self):
        object.__setattr__(self, "_hash", hash((self.op, self.args, self.attrs, self.type)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, Node) or self._hash != other._hash:
            return False
        # pairwise over both graphs with a stack, not recursion: programs may be thousands deep
        stack, seen = [(self, other)], set()
        while stack:
            a, b = stack.pop()
            if a is b or (id(a), id(b)) in seen:
                continue
            if (a._hash != b._hash or a.op is not b.op or not _same_attrs(a.attrs, b.attrs) or a.type != b.type
                    or len(a.args) != len(b.args)):
                return False
            seen.add((id(a), id(b)))
            stack.extend(zip(a.args, b.args))
        return True

    def attr(self, key: str, default: Any = None) -> Any:
        for k, v in self.attrs:
            if k == key:
                return v
        return default

    def replace(self, **kw) -> "Node":
        d = dict(op=self.op, args=self.args, attrs=self.attrs, type=self.type, span=self.span, name=self.name,
                 binds=self.binds)
        d.update(kw)
        return Node(**d)

    @property
    def label(self) -> str:
        """How messages refer to this value: its name if it has one, else its op."""
        if self.op is Op.INPUT:
            return self.attr("name")
        return self.name or self.op_text()

    def op_text(self) -> str:
        """The op with its attributes, e.g. ``mxm[plus_second]`` or ``apply_bind[times, 2.0, left]``:
        values in order, a true flag by its name, unset (None) and false ones left out."""
        vals = [k if v is True else _fmt(v) for k, v in self.attrs
                if k not in ("name", "role") and v is not None and v is not False and not _is_program(v)]
        return f"{self.op.value}[{', '.join(vals)}]" if vals else self.op.value

    def __repr__(self) -> str:
        args = ", ".join(a.label for a in self.args)
        return f"<{self.op_text()}({args}) : {self.type}>"


def _same_attrs(a: Attrs, b: Attrs) -> bool:
    """Equal attributes, a float's sign included: 0.0 == -0.0 in Python, but X / 0.0 and
    X / -0.0 are different values (+inf and -inf), so they must not become one node."""
    return a == b and all(not isinstance(x, float) or math.copysign(1.0, x) == math.copysign(1.0, y)
                          for (_, x), (_, y) in zip(a, b))


def _is_program(v) -> bool:
    return hasattr(v, "outputs") and hasattr(v, "toposort")


def _fmt(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return repr(v)
    return str(v)
