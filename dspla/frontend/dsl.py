"""The embedded DSL: ``Expr`` wraps an IR node and gives it Python operators; the functions
below build nodes. The expression-file frontend calls the same functions, so both produce
the same IR.
"""
from __future__ import annotations

import numbers

from .. import algebra
from ..errors import DimensionMismatch, DsplaError, Span
from ..ir import DType, Kind, Node, Op, Type, make
from .span import caller_span


class Expr:
    """A value in a dspla program (symbolic until run). ``@`` is mxm over plus_times."""

    __slots__ = ("node",)
    __array_priority__ = 1000  # numpy scalars defer to our reflected operators

    def __init__(self, node: Node):
        self.node = node

    # -- inspection
    @property
    def type(self) -> Type:
        return self.node.type

    @property
    def shape(self):
        return self.node.type.shape

    @property
    def dtype(self) -> DType:
        return self.node.type.dtype

    @property
    def kind(self) -> Kind:
        return self.node.type.kind

    @property
    def T(self) -> "Expr":
        return transpose(self, span=caller_span())

    def __repr__(self) -> str:
        return f"Expr({self.node.label} : {self.node.type})"

    def __bool__(self):
        raise TypeError("a dspla expression has no truth value until it is run")

    # -- operators
    def __matmul__(self, other):
        return mxm(self, other, "plus_times", span=caller_span())

    def __rmatmul__(self, other):
        return mxm(other, self, "plus_times", span=caller_span())

    def __add__(self, other):
        return _arith(self, other, "plus", caller_span())

    def __radd__(self, other):
        return _arith(other, self, "plus", caller_span())

    def __sub__(self, other):
        return _arith(self, other, "minus", caller_span())

    def __rsub__(self, other):
        return _arith(other, self, "minus", caller_span())

    def __mul__(self, other):
        return _arith(self, other, "times", caller_span())

    def __rmul__(self, other):
        return _arith(other, self, "times", caller_span())

    def __truediv__(self, other):
        return _arith(self, other, "div", caller_span())

    def __rtruediv__(self, other):
        return _arith(other, self, "div", caller_span())

    def __pow__(self, other):
        return _arith(self, other, "pow", caller_span())

    def __neg__(self):
        return apply(self, "neg", span=caller_span())


def _is_scalar(x) -> bool:
    return isinstance(x, (numbers.Number, bool)) and not isinstance(x, complex)


def _scalar(x):
    return x.item() if hasattr(x, "item") else x


def _node(x, what: str = "operand") -> Node:
    if isinstance(x, Expr):
        return x.node
    if isinstance(x, Node):
        return x
    raise TypeError(f"expected a dspla expression as {what}, got {type(x).__name__}")


def _arith(a, b, op: str, span: Span | None) -> Expr:
    """Infix arithmetic. Expr-Expr: + is a union, * and / are intersections (Hadamard), and
    X - Y is X + (-Y) over the union (a lone Y entry becomes -Y). A scalar operand binds to the
    operator and applies to the present entries only."""
    if _is_scalar(a) and _is_scalar(b):
        raise TypeError("at least one operand must be a dspla expression")
    if _is_scalar(b):
        return apply(a, op, right=_scalar(b), span=span)
    if _is_scalar(a):
        return apply(b, op, left=_scalar(a), span=span)
    if op == "plus":
        return ewise_add(a, b, "plus", span=span)
    if op == "minus":
        return ewise_add(a, apply(b, "neg", span=span), "plus", span=span)
    if op == "pow":
        raise TypeError("** takes a scalar exponent")
    return ewise_mult(a, b, op, span=span)


def _span(span):
    return span if span is not None else caller_span()


# --------------------------------------------------------------------------- declarations
def _shape(shape, where) -> tuple:
    if isinstance(shape, (int, str)):
        shape = (shape,)
    shape = tuple(shape)
    if len(shape) == 1:
        shape = (shape[0], 1)
    if len(shape) != 2:
        raise DimensionMismatch(f"{where}: a shape has one or two dims, got {shape!r}")
    for d in shape:
        if isinstance(d, bool) or not (isinstance(d, str) and d.isidentifier() or isinstance(d, int) and d >= 0):
            raise DimensionMismatch(f"{where}: dims are non-negative ints or symbol names, got {d!r}")
    return shape


def declare(name: str, kind: str | Kind, shape, dtype="float64", role: str = "input", *,
            span: Span | None = None) -> Expr:
    if not isinstance(name, str) or not name.isidentifier():
        raise DsplaError(f"an input name must be an identifier, got {name!r}", span)
    if role not in ("input", "param"):
        raise ValueError(f"role is 'input' or 'param', got {role!r}")
    t = Type(Kind(str(kind)), _shape(shape, name), DType.parse(dtype))
    return Expr(make(Op.INPUT, (), (("name", name), ("role", role)), type=t, span=_span(span), name=name))


def sparse(name: str, shape, dtype="float64", *, span=None) -> Expr:
    """A sparse input matrix: ``sparse("A", ("n", "n"))``; symbolic dims bind from data."""
    return declare(name, Kind.sparse, shape, dtype, span=_span(span))


def dense(name: str, shape, dtype="float64", *, span=None) -> Expr:
    """A dense input (every entry present): ``dense("X", ("n", "f"))``."""
    return declare(name, Kind.dense, shape, dtype, span=_span(span))


def param(name: str, shape, dtype="float64", kind="dense", *, span=None) -> Expr:
    """A parameter: an input a trainer may update (dense by default)."""
    return declare(name, kind, shape, dtype, role="param", span=_span(span))


def vector(name: str, n, dtype="float64", kind="dense", *, span=None) -> Expr:
    """A column vector input: an n x 1 matrix."""
    return declare(name, kind, (n, 1), dtype, span=_span(span))


def eye(n, dtype="float64", *, span=None) -> Expr:
    """The n x n identity matrix (sparse, ones on the diagonal)."""
    t = Type(Kind.sparse, _shape((n, n), "eye"), DType.parse(dtype))
    return Expr(make(Op.IDENTITY, (), (), type=t, span=_span(span)))


# ------------------------------------------------------------------------------ operations
def mxm(a, b, semiring="plus_times", *, span=None) -> Expr:
    """C = A ⊕.⊗ B over a semiring (by name or ``dp.semiring.NAME``)."""
    sr = algebra.get_semiring(semiring) if not isinstance(semiring, Span) else semiring
    return Expr(make(Op.MXM, (_node(a), _node(b)), (("semiring", sr),), span=_span(span)))


def mxv(a, v, semiring="plus_times", *, span=None) -> Expr:
    """A ⊕.⊗ v for an n x 1 column vector v."""
    _vector_check(v, "column", span)
    return mxm(a, v, semiring, span=_span(span))


def vxm(u, a, semiring="plus_times", *, span=None) -> Expr:
    """u ⊕.⊗ A for a 1 x n row vector u (transpose a column vector with ``.T``)."""
    _vector_check(u, "row", span)
    return mxm(u, a, semiring, span=_span(span))


def _vector_check(v, which, span):
    shape = _node(v).type.shape
    if (which == "column" and shape[1] != 1) or (which == "row" and shape[0] != 1):
        raise DimensionMismatch(f"expected a {which} vector, got {_node(v).label} of shape {list(shape)}",
                                _span(span))


def ewise_add(a, b, op="plus", *, span=None) -> Expr:
    """Element-wise union with a binary operator or monoid; entries present in one operand pass
    through unchanged (GraphBLAS eWiseAdd). A vector or 1 x 1 operand broadcasts."""
    return Expr(make(Op.EWISE_ADD, (_node(a), _node(b)), (("op", algebra.get_binary(op)),), span=_span(span)))


def ewise_mult(a, b, op="times", *, span=None) -> Expr:
    """Element-wise intersection with a binary operator (GraphBLAS eWiseMult)."""
    return Expr(make(Op.EWISE_MULT, (_node(a), _node(b)), (("op", algebra.get_binary(op)),), span=_span(span)))


def apply(x, op, *, left=None, right=None, span=None) -> Expr:
    """A unary operator on present entries, or a binary operator with a bound scalar
    (``apply(X, "times", left=2.0)`` is 2.0 * X)."""
    span = _span(span)
    if left is None and right is None:
        return Expr(make(Op.APPLY, (_node(x),), (("op", algebra.get_unary(op)),), span=span))
    if left is not None and right is not None:
        raise TypeError("apply binds one scalar: left= or right=, not both")
    side, scalar = ("left", left) if left is not None else ("right", right)
    scalar = _scalar(scalar)
    if not _is_scalar(scalar):
        raise TypeError(f"the bound operand must be a scalar, got {type(scalar).__name__}")
    return Expr(make(Op.APPLY_BIND, (_node(x),), (("op", algebra.get_binary(op)), ("scalar", scalar),
                                                   ("side", side)), span=span))


def _unary(name):
    def fn(x, *, span=None) -> Expr:
        return apply(x, name, span=_span(span))
    fn.__name__ = name
    fn.__doc__ = f"Apply {name} to the present entries."
    return fn


relu, relu_grad, sigmoid, tanh, exp, log = (_unary(n) for n in ("relu", "relu_grad", "sigmoid", "tanh", "exp",
                                                                 "log"))
abs_, neg, sqrt, step = (_unary(n) for n in ("abs", "neg", "sqrt", "step"))


def transpose(x, *, span=None) -> Expr:
    return Expr(make(Op.TRANSPOSE, (_node(x),), (), span=_span(span)))


def reduce(x, monoid="plus", axis="rows", *, span=None) -> Expr:
    """Reduce with a monoid: axis 'rows' gives an n x 1 vector (one value per row), 'cols' a
    1 x m vector, 'all' a 1 x 1 scalar. A row with no entries gives a missing entry."""
    if axis not in ("rows", "cols", "all"):
        raise ValueError(f"axis is 'rows', 'cols' or 'all', got {axis!r}")
    return Expr(make(Op.REDUCE, (_node(x),), (("monoid", algebra.get_monoid(monoid)), ("axis", axis)),
                     span=_span(span)))


def reduce_rows(x, monoid="plus", *, span=None) -> Expr:
    return reduce(x, monoid, "rows", span=_span(span))


def reduce_cols(x, monoid="plus", *, span=None) -> Expr:
    return reduce(x, monoid, "cols", span=_span(span))


def reduce_all(x, monoid="plus", *, span=None) -> Expr:
    return reduce(x, monoid, "all", span=_span(span))


def select(x, op, thunk=0, *, span=None) -> Expr:
    """Keep entries where a predicate holds: ``select(X, ">", 0)``, ``select(A, "tril")``."""
    return Expr(make(Op.SELECT, (_node(x),), (("op", algebra.get_select(op)), ("thunk", _scalar(thunk))),
                     span=_span(span)))


def mask(x, m, *, complement=False, structure=False, span=None) -> Expr:
    """Keep entries of x where the mask m holds: its value is true (or, with structure=True,
    it is present); complement=True keeps the others."""
    return Expr(make(Op.MASK, (_node(x), _node(m)), (("complement", bool(complement)),
                                                     ("structure", bool(structure))), span=_span(span)))


def cast(x, dtype, *, span=None) -> Expr:
    return Expr(make(Op.CAST, (_node(x),), (("dtype", DType.parse(dtype)),), span=_span(span)))


def dropout_mask(x, p: float, seed, *, span=None) -> Expr:
    """Inverted-dropout mask over x's present entries: 1/(1-p) where an entry is kept, missing
    where dropped. ``seed`` is a 1 x 1 int64 input, so each call can draw a new mask; the mask
    depends only on (seed, global row, global column), never on the number of processes.
    Multiply by it (``H * D``) in the forward pass and again in the backward pass."""
    return Expr(make(Op.DROPOUT_MASK, (_node(x), _node(seed)), (("p", float(p)),), span=_span(span)))


# ------------------------------------------------------------- composites (on primitives)
def softmax(x, *, span=None) -> Expr:
    """Row-wise softmax over the present entries of each row (shifted by the row max)."""
    span = _span(span)
    e = exp(ewise_mult(x, reduce_rows(x, "max", span=span), "minus", span=span), span=span)
    return ewise_mult(e, reduce_rows(e, "plus", span=span), "div", span=span)


def log_softmax(x, *, span=None) -> Expr:
    """Row-wise log-softmax over the present entries of each row."""
    span = _span(span)
    y = ewise_mult(x, reduce_rows(x, "max", span=span), "minus", span=span)
    lse = log(reduce_rows(exp(y, span=span), "plus", span=span), span=span)
    return ewise_mult(y, lse, "minus", span=span)
