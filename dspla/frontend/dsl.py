"""The embedded DSL: ``Expr`` wraps an IR node and gives it Python operators; the functions
below build nodes. The expression-file frontend calls the same functions, so both produce
the same IR.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NoReturn, Protocol, TypeVar, Union, overload
from typing import cast as _cast  # (dsl.cast is the dspla op)

from .. import algebra
from .._types import (
    BinaryOpLike,
    DTypeLike,
    KindLike,
    MonoidLike,
    Scalar,
    SelectLike,
    SemiringLike,
    ShapeLike,
    UnaryOpLike,
)
from ..errors import DimensionMismatch, DsplaError, Span
from ..ir import DType, Kind, Node, Op, Program, Type, make
from ..ir.types import MAX_DIM, Dim
from .span import caller_span

if TYPE_CHECKING:
    from typing_extensions import TypeIs

Operand = Union["Expr", Scalar]
"""What an arithmetic or comparison operator takes: an expression, or a scalar that binds to the
operator and applies to the present entries."""


class Expr:
    """A value in a dspla program (symbolic until run). ``@`` is mxm over plus_times."""

    __slots__ = ("node",)
    __array_priority__ = 1000  # numpy scalars defer to our reflected operators

    def __init__(self, node: Node) -> None:
        self.node = node

    # -- inspection
    @property
    def type(self) -> Type:
        return self.node.type

    @property
    def shape(self) -> tuple[Dim, Dim]:
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

    def __bool__(self) -> NoReturn:
        raise TypeError("a dspla expression has no truth value until it is run")

    # -- operators
    def __matmul__(self, other: Expr) -> Expr:
        return mxm(self, other, "plus_times", span=caller_span())

    def __rmatmul__(self, other: Expr) -> Expr:
        return mxm(other, self, "plus_times", span=caller_span())

    def __add__(self, other: Operand) -> Expr:
        return _arith(self, other, "plus", caller_span())

    def __radd__(self, other: Operand) -> Expr:
        return _arith(other, self, "plus", caller_span())

    def __sub__(self, other: Operand) -> Expr:
        return _arith(self, other, "minus", caller_span())

    def __rsub__(self, other: Operand) -> Expr:
        return _arith(other, self, "minus", caller_span())

    def __mul__(self, other: Operand) -> Expr:
        return _arith(self, other, "times", caller_span())

    def __rmul__(self, other: Operand) -> Expr:
        return _arith(other, self, "times", caller_span())

    def __truediv__(self, other: Operand) -> Expr:
        return _arith(self, other, "div", caller_span())

    def __rtruediv__(self, other: Operand) -> Expr:
        return _arith(other, self, "div", caller_span())

    def __pow__(self, other: Scalar) -> Expr:
        return _arith(self, other, "pow", caller_span())

    def __neg__(self) -> Expr:
        return apply(self, "neg", span=caller_span())

    # comparisons build element-wise comparisons (bool values): with a scalar on the present
    # entries, with another expression on the entries both have (GraphBLAS eWiseMult)
    def __lt__(self, other: Operand) -> Expr:
        return _compare(self, other, "lt", caller_span())

    def __le__(self, other: Operand) -> Expr:
        return _compare(self, other, "le", caller_span())

    def __gt__(self, other: Operand) -> Expr:
        return _compare(self, other, "gt", caller_span())

    def __ge__(self, other: Operand) -> Expr:
        return _compare(self, other, "ge", caller_span())

    def __eq__(self, other: object) -> Expr:  # type: ignore[override]  # element-wise, not a bool
        return _compare(self, other, "eq", caller_span())

    def __ne__(self, other: object) -> Expr:  # type: ignore[override]  # element-wise, not a bool
        return _compare(self, other, "ne", caller_span())

    __hash__ = object.__hash__   # expressions stay usable as dict keys (by identity)


def _is_scalar(x: object) -> TypeIs[Scalar]:
    return isinstance(x, (numbers.Number, bool)) and not isinstance(x, complex)


def _scalar(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def _node(x: Expr | Node, what: str = "operand") -> Node:
    if isinstance(x, Expr):
        return x.node
    if isinstance(x, Node):
        return x
    raise TypeError(f"expected a dspla expression as {what}, got {type(x).__name__}")


def _arith(a: Operand, b: Operand, op: str, span: Span | None) -> Expr:
    """Infix arithmetic. Expr-Expr: + is a union, * and / are intersections (Hadamard), and
    X - Y is X + (-Y) over the union (a lone Y entry becomes -Y). A scalar operand binds to the
    operator and applies to the present entries only."""
    if _is_scalar(b):
        if _is_scalar(a):
            raise TypeError("at least one operand must be a dspla expression")
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


_SWAP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _compare(a: Operand, b: object, op: str, span: Span | None) -> Expr:
    # (a and b come from the parser as they were written: apply refuses a scalar as its operand)
    if _is_scalar(b):
        return apply(_cast(Expr, a), op, right=_scalar(b), span=span)
    if _is_scalar(a):   # (reflected: 3 < x arrives as x > 3)
        return apply(_cast(Expr, b), _SWAP[op], right=_scalar(a), span=span)
    if not isinstance(b, Expr):
        return NotImplemented
    return ewise_mult(a, b, op, span=span)


def _span(span: Span | None) -> Span | None:
    return span if span is not None else caller_span()


_Row = TypeVar("_Row")


def _named(lookup: Callable[[Any], _Row], name: Any, span: Span | None) -> _Row:
    """``lookup(name)`` (a semiring, operator, monoid or dtype by name); an unknown name is
    reported where the user wrote the call, as shape errors are."""
    try:
        return lookup(name)
    except DsplaError as e:
        where = _span(span) if e.span is None else None
        if where is None:
            raise
        raise e.at(where) from None


# --------------------------------------------------------------------------- declarations
def _shape(shape: ShapeLike, where: str) -> tuple[Dim, Dim]:
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
        if isinstance(d, int) and d > MAX_DIM:
            raise DimensionMismatch(f"{where}: dim {d} does not fit in 64 bits")
    return shape


def declare(name: str, kind: KindLike, shape: ShapeLike, dtype: DTypeLike = "float64",
            role: Literal["input", "param"] = "input", *, span: Span | None = None) -> Expr:
    if not isinstance(name, str) or not name.isidentifier():
        raise DsplaError(f"an input name must be an identifier, got {name!r}", span)
    if role not in ("input", "param"):
        raise ValueError(f"role is 'input' or 'param', got {role!r}")
    t = Type(Kind(str(kind)), _shape(shape, name), _named(DType.parse, dtype, span))
    return Expr(make(Op.INPUT, (), (("name", name), ("role", role)), type=t, span=_span(span), name=name))


def sparse(name: str, shape: ShapeLike, dtype: DTypeLike = "float64", *, span: Span | None = None) -> Expr:
    """A sparse input matrix: ``sparse("A", ("n", "n"))``; symbolic dims bind from data."""
    return declare(name, Kind.sparse, shape, dtype, span=_span(span))


def dense(name: str, shape: ShapeLike, dtype: DTypeLike = "float64", *, span: Span | None = None) -> Expr:
    """A dense input (every entry present): ``dense("X", ("n", "f"))``."""
    return declare(name, Kind.dense, shape, dtype, span=_span(span))


def param(name: str, shape: ShapeLike, dtype: DTypeLike = "float64", kind: KindLike = "dense", *,
          span: Span | None = None) -> Expr:
    """A parameter: an input a trainer may update (dense by default)."""
    return declare(name, kind, shape, dtype, role="param", span=_span(span))


def vector(name: str, n: Dim, dtype: DTypeLike = "float64", kind: KindLike = "dense", *,
           span: Span | None = None) -> Expr:
    """A column vector input: an n x 1 matrix."""
    return declare(name, kind, (n, 1), dtype, span=_span(span))


def eye(n: Dim, dtype: DTypeLike = "float64", *, span: Span | None = None) -> Expr:
    """The n x n identity matrix (sparse, ones on the diagonal)."""
    t = Type(Kind.sparse, _shape((n, n), "eye"), _named(DType.parse, dtype, span))
    return Expr(make(Op.IDENTITY, (), (), type=t, span=_span(span)))


# ------------------------------------------------------------------------------ operations
def _mask_args(mask: Expr | None, complement: bool,
               structure: bool) -> tuple[tuple[Node, ...], tuple[tuple[str, Any], ...]]:
    """(extra args, mask attrs) of an optionally masked op."""
    if mask is None:
        if complement or structure:
            raise TypeError("complement= and structure= describe a mask: give mask= too")
        return (), (("mask", None), ("complement", False))
    return (_node(mask, "mask"),), (("mask", "structure" if structure else "value"), ("complement", bool(complement)))


def mxm(a: Expr, b: Expr, semiring: SemiringLike = "plus_times", *, mask: Expr | None = None,
        complement: bool = False, structure: bool = False, span: Span | None = None) -> Expr:
    """C = A ⊕.⊗ B over a semiring (by name or ``dp.semiring.NAME``).

    With ``mask=M``: C<M> = A ⊕.⊗ B, only the entries where M's value is true (or, with
    ``structure=True``, where M has an entry; ``complement=True``: where it does not) are
    computed, by SuiteSparse's masked product. The result has no entries outside the mask
    (as a fresh GraphBLAS output; to merge into an existing value use ``update``)."""
    sr = _named(algebra.get_semiring, semiring, span) if not isinstance(semiring, Span) else semiring
    extra, mattrs = _mask_args(mask, complement, structure)
    return Expr(make(Op.MXM, (_node(a), _node(b), *extra), (("semiring", sr), *mattrs), span=_span(span)))


def mxv(a: Expr, v: Expr, semiring: SemiringLike = "plus_times", *, mask: Expr | None = None,
        complement: bool = False, structure: bool = False, span: Span | None = None) -> Expr:
    """A ⊕.⊗ v for an n x 1 column vector v (masks as in ``mxm``)."""
    _vector_check(v, "column", span)
    return mxm(a, v, semiring, mask=mask, complement=complement, structure=structure, span=_span(span))


def vxm(u: Expr, a: Expr, semiring: SemiringLike = "plus_times", *, mask: Expr | None = None,
        complement: bool = False, structure: bool = False, span: Span | None = None) -> Expr:
    """u ⊕.⊗ A for a 1 x n row vector u (transpose a column vector with ``.T``; masks as in ``mxm``)."""
    _vector_check(u, "row", span)
    return mxm(u, a, semiring, mask=mask, complement=complement, structure=structure, span=_span(span))


def update(c: Expr, t: Expr, *, accum: BinaryOpLike | None = None, mask: Expr | None = None,
           complement: bool = False, structure: bool = False, replace: bool = False,
           span: Span | None = None) -> Expr:
    """GraphBLAS's write into an existing value, as a new value: ``C<M, replace> accum= T``.

    Inside the mask (everywhere without one) the result is accum(C, T) where both have an
    entry, else whichever has one (T alone without accum); outside the mask it is C, or
    nothing with ``replace=True``. E.g. BFS levels: ``update(levels, frontier * depth,
    mask=frontier, structure=True)``."""
    extra, mattrs = _mask_args(mask, complement, structure)
    acc = None if accum is None else _named(algebra.get_binary, accum, span)
    return Expr(make(Op.UPDATE, (_node(c), _node(t), *extra), (("accum", acc), *mattrs, ("replace", bool(replace))),
                     span=_span(span)))


def _vector_check(v: Expr, which: str, span: Span | None) -> None:
    shape = _node(v).type.shape
    if (which == "column" and shape[1] != 1) or (which == "row" and shape[0] != 1):
        raise DimensionMismatch(f"expected a {which} vector, got {_node(v).label} of shape {list(shape)}",
                                _span(span))


def ewise_add(a: Expr, b: Expr, op: BinaryOpLike = "plus", *, span: Span | None = None) -> Expr:
    """Element-wise union with a binary operator or monoid; entries present in one operand pass
    through unchanged (GraphBLAS eWiseAdd). A vector or 1 x 1 operand broadcasts."""
    return Expr(make(Op.EWISE_ADD, (_node(a), _node(b)), (("op", _named(algebra.get_binary, op, span)),),
                     span=_span(span)))


def ewise_mult(a: Expr, b: Expr, op: BinaryOpLike = "times", *, span: Span | None = None) -> Expr:
    """Element-wise intersection with a binary operator (GraphBLAS eWiseMult)."""
    return Expr(make(Op.EWISE_MULT, (_node(a), _node(b)), (("op", _named(algebra.get_binary, op, span)),),
                     span=_span(span)))


def apply(x: Expr, op: UnaryOpLike | BinaryOpLike, *, left: Scalar | None = None, right: Scalar | None = None,
          span: Span | None = None) -> Expr:
    """A unary operator on present entries, or a binary operator with a bound scalar
    (``apply(X, "times", left=2.0)`` is 2.0 * X)."""
    span = _span(span)
    if left is None and right is None:
        return Expr(make(Op.APPLY, (_node(x),), (("op", _named(algebra.get_unary, op, span)),), span=span))
    if left is not None and right is not None:
        raise TypeError("apply binds one scalar: left= or right=, not both")
    side, scalar = ("left", left) if left is not None else ("right", right)
    scalar = _scalar(scalar)
    if not _is_scalar(scalar):
        raise TypeError(f"the bound operand must be a scalar, got {type(scalar).__name__}")
    return Expr(make(Op.APPLY_BIND, (_node(x),), (("op", _named(algebra.get_binary, op, span)), ("scalar", scalar),
                                                   ("side", side)), span=span))


class ElementwiseFunction(Protocol):
    """``relu``, ``exp``, ...: a unary operator applied to an expression's present entries."""

    def __call__(self, x: Expr, *, span: Span | None = None) -> Expr: ...


def _unary(name: str) -> ElementwiseFunction:
    def fn(x: Expr, *, span: Span | None = None) -> Expr:
        return apply(x, name, span=_span(span))
    fn.__name__ = name
    fn.__doc__ = f"Apply {name} to the present entries."
    return fn


relu, relu_grad, sigmoid, tanh, exp, log = (_unary(n) for n in ("relu", "relu_grad", "sigmoid", "tanh", "exp",
                                                                 "log"))
abs_, neg, sqrt, step = (_unary(n) for n in ("abs", "neg", "sqrt", "step"))


def transpose(x: Expr, *, span: Span | None = None) -> Expr:
    return Expr(make(Op.TRANSPOSE, (_node(x),), (), span=_span(span)))


def reduce(x: Expr, monoid: MonoidLike = "plus", axis: Literal["rows", "cols", "all"] = "rows", *,
           span: Span | None = None) -> Expr:
    """Reduce with a monoid: axis 'rows' gives an n x 1 vector (one value per row), 'cols' a
    1 x m vector, 'all' a 1 x 1 scalar. A row with no entries gives a missing entry."""
    if axis not in ("rows", "cols", "all"):
        raise ValueError(f"axis is 'rows', 'cols' or 'all', got {axis!r}")
    return Expr(make(Op.REDUCE, (_node(x),), (("monoid", _named(algebra.get_monoid, monoid, span)), ("axis", axis)),
                     span=_span(span)))


def reduce_rows(x: Expr, monoid: MonoidLike = "plus", *, span: Span | None = None) -> Expr:
    return reduce(x, monoid, "rows", span=_span(span))


def reduce_cols(x: Expr, monoid: MonoidLike = "plus", *, span: Span | None = None) -> Expr:
    return reduce(x, monoid, "cols", span=_span(span))


def reduce_all(x: Expr, monoid: MonoidLike = "plus", *, span: Span | None = None) -> Expr:
    return reduce(x, monoid, "all", span=_span(span))


def nvals(x: Expr, *, span: Span | None = None) -> Expr:
    """The number of entries present in x, as a 1 x 1 int64 that is always present (0 for an
    empty x; ``reduce_all(apply(x, one))`` is missing there). GraphBLAS keeps the count, so
    it costs nothing locally and one summed word across processes: a loop's test for growth
    (``nvals(new) > nvals(old)``) or for an empty frontier."""
    return Expr(make(Op.NVALS, (_node(x),), (), span=_span(span)))


def select(x: Expr, op: SelectLike, thunk: Scalar = 0, *, span: Span | None = None) -> Expr:
    """Keep entries where a predicate holds: ``select(X, ">", 0)``, ``select(A, "tril")``."""
    return Expr(make(Op.SELECT, (_node(x),), (("op", _named(algebra.get_select, op, span)),
                                              ("thunk", _scalar(thunk))),
                     span=_span(span)))


def mask(x: Expr, m: Expr, *, complement: bool = False, structure: bool = False, span: Span | None = None) -> Expr:
    """Keep entries of x where the mask m holds: its value is true (or, with structure=True,
    it is present); complement=True keeps the others."""
    return Expr(make(Op.MASK, (_node(x), _node(m)), (("complement", bool(complement)),
                                                     ("structure", bool(structure))), span=_span(span)))


def cast(x: Expr, dtype: DTypeLike, *, span: Span | None = None) -> Expr:
    return Expr(make(Op.CAST, (_node(x),), (("dtype", _named(DType.parse, dtype, span)),), span=_span(span)))


def full(like: Expr, value: Scalar, dtype: DTypeLike | None = None, *, span: Span | None = None) -> Expr:
    """A constant of ``like``'s shape with every entry present and equal to ``value``.

    GraphBLAS has no implicit zero: ``x + 1`` adds to x's present entries only, and an entry x
    lacks stays missing; ``dp.ewise_add(x, dp.full(x, 1.0))`` (or ``x + dp.full(x, 0) + 1``)
    reaches every entry. ``dtype``: by default like's; bool for a bool value, float64 for a
    float value and an integer or bool like. Built from existing ops (an empty matrix of like's shape, united with a
    1 x 1 constant that broadcasts), so every stage handles it already."""
    span = _span(span)
    value = _scalar(value)
    if not _is_scalar(value):
        raise TypeError(f"full(): the value is a number or a bool, got {type(value).__name__}")
    x = _node(like, "like")
    if dtype is None:   # like's, unless the value says otherwise (a bool, or a float for integer values)
        dtype = DType.bool if isinstance(value, bool) else \
            DType.float64 if isinstance(value, float) and not x.type.dtype.is_float else x.type.dtype
    dt = _named(DType.parse, dtype, span)
    one = eye(1, dt.value, span=span)
    if dt is DType.bool:
        c = one if bool(value) else apply(one, "lnot", span=span)
    else:
        c = one if value == 1 else apply(one, "times", right=dt.np.type(value).item(), span=span)
    empty = mask(Expr(x), Expr(x), complement=True, structure=True, span=span)
    if x.type.dtype is not dt:
        empty = cast(empty, dt, span=span)
    return ewise_add(empty, c, "second", span=span)


def dropout_mask(x: Expr, p: float, seed: Expr, *, span: Span | None = None) -> Expr:
    """Inverted-dropout mask over x's present entries: 1/(1-p) where an entry is kept, missing
    where dropped. ``seed`` is a 1 x 1 int64 input, so each call can draw a new mask; the mask
    depends only on (seed, global row, global column), never on the number of processes.
    Multiply by it (``H * D``) in the forward pass and again in the backward pass."""
    return Expr(make(Op.DROPOUT_MASK, (_node(x), _node(seed)), (("p", float(p)),), span=_span(span)))


# ------------------------------------------------------------- composites (on primitives)
def softmax(x: Expr, *, span: Span | None = None) -> Expr:
    """Row-wise softmax over the present entries of each row (shifted by the row max)."""
    span = _span(span)
    e = exp(ewise_mult(x, reduce_rows(x, "max", span=span), "minus", span=span), span=span)
    return ewise_mult(e, reduce_rows(e, "plus", span=span), "div", span=span)


def log_softmax(x: Expr, *, span: Span | None = None) -> Expr:
    """Row-wise log-softmax over the present entries of each row."""
    span = _span(span)
    y = ewise_mult(x, reduce_rows(x, "max", span=span), "minus", span=span)
    lse = log(reduce_rows(exp(y, span=span), "plus", span=span), span=span)
    return ewise_mult(y, lse, "minus", span=span)


# ------------------------------------------------------------------------- gradients
@overload
def grad(loss: Expr, wrt: Expr, /, *, span: Span | None = None) -> Expr: ...
@overload
def grad(loss: Expr, wrt: list[Expr] | tuple[Expr, ...], /, *, span: Span | None = None) -> list[Expr]: ...
@overload
def grad(loss: Expr, w1: Expr, w2: Expr, /, *wrt: Expr, span: Span | None = None) -> tuple[Expr, ...]: ...


def grad(loss: Expr, *wrt: Expr | list[Expr] | tuple[Expr, ...],
         span: Span | None = None) -> Expr | list[Expr] | tuple[Expr, ...]:
    """The gradient of a 1 x 1 ``loss`` with respect to parameters, as expressions built by reverse
    mode over the program (docs/autodiff.md): ``dW = grad(loss, W)``, ``dW1, dW2 = grad(loss, W1,
    W2)`` or ``grad(loss, [W1, W2])`` (a list). Each gradient has its parameter's shape and is
    present exactly where the parameter has entries."""
    span = _span(span)
    seq = wrt[0] if len(wrt) == 1 and isinstance(wrt[0], (list, tuple)) else None
    as_list = seq is not None
    params: list[Any] = list(seq) if seq is not None else list(wrt)
    if not params:
        raise DsplaError("grad(loss, W, ...) needs at least one parameter", span)
    from ..autodiff import grad as _grad  # (the VJP table: loaded by the programs that differentiate)
    nodes = _grad(_node(loss, "the loss"), [_node(w, "a parameter") for w in params], span)
    names = [w.attr("name") for w in (_node(p) for p in params)]
    out = [Expr(n.replace(name="d" + nm)) for n, nm in zip(nodes, names)]
    if as_list:
        return out
    return out[0] if len(out) == 1 else tuple(out)


# ------------------------------------------------------------------------------------ loops
LoopBody = Callable[..., Union[Expr, Sequence[Expr]]]
"""A loop body: takes the carried values (expressions), gives their new values (one, or a
tuple/list in the carried order)."""


@overload
def while_loop(cond: Callable[..., Expr], body: LoopBody, init: dict[str, Expr], max_iter: Dim, *,
               count: Literal[False] = False, span: Span | None = None) -> dict[str, Expr]: ...
@overload
def while_loop(cond: Callable[..., Expr], body: LoopBody, init: Sequence[Expr], max_iter: Dim, *,
               count: Literal[False] = False, span: Span | None = None) -> tuple[Expr, ...]: ...
@overload
def while_loop(cond: Callable[..., Expr], body: LoopBody, init: dict[str, Expr], max_iter: Dim, *,
               count: Literal[True], span: Span | None = None) -> tuple[dict[str, Expr], Expr]: ...
@overload
def while_loop(cond: Callable[..., Expr], body: LoopBody, init: Sequence[Expr], max_iter: Dim, *,
               count: Literal[True], span: Span | None = None) -> tuple[tuple[Expr, ...], Expr]: ...


def while_loop(cond: Callable[..., Expr], body: LoopBody, init: dict[str, Expr] | Sequence[Expr],
               max_iter: Dim, *, count: bool = False, span: Span | None = None
               ) -> dict[str, Expr] | tuple[Expr, ...] | tuple[dict[str, Expr] | tuple[Expr, ...], Expr]:
    """Repeat ``body`` while ``cond`` holds, at most ``max_iter`` times, as one loop of the
    program (planned once, run without returning to Python; on P processes every rank runs it).

    ``max_iter``: an integer, or a dim name (``"n"``: as many as that dim's size).
    ``init``: the loop-carried values, a tuple/list of expressions or a dict name -> expression
    (names show in explain). ``cond(*carried)`` gives a 1 x 1 bool value (a missing entry
    counts as false), checked before each iteration; ``body(*carried)`` gives the new values,
    one per carried value, of the same shapes and dtypes. Values the body uses that do not
    change in the loop (the graph, degree vectors, ...) are computed once, outside it.
    Returns the final values (a tuple, or a dict for a dict ``init``), and with
    ``count=True`` also the number of iterations run (1 x 1 int64)."""
    span = _span(span)
    named = isinstance(init, dict)
    if isinstance(init, dict):
        names, carried = list(init), list(init.values())
    else:
        names, carried = [f"x{i}" for i in range(len(init))], list(init)
    values = [_node(v, "a loop-carried value") for v in carried]
    node = loop_node(names, values, lambda *xs: cond(*(Expr(x) for x in xs)),
                     lambda *xs: body(*(Expr(x) for x in xs)), max_iter, span)
    outs = [Expr(make(Op.ITEM, (node,), (("index", i),), span=span, name=nm)) for i, nm in enumerate(names)]
    result = dict(zip(names, outs)) if named else tuple(outs)
    if count:
        return result, Expr(make(Op.ITEM, (node,), (("index", len(names)),), span=span))
    return result


def loop_node(names: list[str], values: list[Node], cond_fn: Callable[..., Expr | Node],
              body_fn: Callable[..., Any], max_iter: Dim, span: Span | None) -> Node:
    """Trace the condition and body on placeholders and build the WHILE node. The functions take
    and return nodes (or expressions). A carried value whose kind the body changes (a dense
    start, a sparse result) is carried sparse."""
    if not (isinstance(max_iter, str) and max_iter.isidentifier()) and \
            (not isinstance(max_iter, int) or isinstance(max_iter, bool) or max_iter < 0):
        raise DsplaError(f"max_iter is a non-negative integer or a dim (such as 'n'), got {max_iter!r}", span)
    types = [v.type for v in values]
    for _ in range(2):   # a second trace only when a carried value's kind must widen
        holders = [make(Op.INPUT, (), (("name", nm), ("role", "loop")), type=t, span=span, name=nm)
                   for nm, t in zip(names, types)]
        c = _node(cond_fn(*holders), "the loop condition")
        new = body_fn(*holders)
        new = [_node(x, "a loop body result") for x in (new if isinstance(new, (tuple, list)) else (new,))]
        if len(new) != len(holders):
            raise DsplaError(f"the loop body gives {len(new)} values for {len(holders)} loop-carried ones "
                             f"({', '.join(names)})", span)
        widened = [t.with_(kind=Kind.sparse) if n.type.kind is Kind.sparse and t.kind is Kind.dense else t
                   for t, n in zip(types, new)]
        if widened == types:
            break
        types = widened
    captured, cond_prog, body_prog = _close_over(holders, names, c, new)
    return make(Op.WHILE, tuple(values) + tuple(captured), (("cond", cond_prog), ("body", body_prog),
                                                            ("max_iter", max_iter), ("carried", len(names))),
                span=span)


def _close_over(holders: list[Node], names: list[str], cond: Node,
                body: list[Node]) -> tuple[list[Node], Program, Program]:
    """Sub-programs for the condition and the body. Their inputs are the carried placeholders and
    one placeholder per value they use from outside the loop: each largest subexpression that
    does not depend on a carried value (computed once, before the loop)."""
    carried = {id(h) for h in holders}
    varies: dict[int, bool] = {}
    order = Program(tuple((f"o{i}", n) for i, n in enumerate([cond, *body]))).toposort()
    for n in order:
        varies[id(n)] = id(n) in carried or any(varies[id(a)] for a in n.args)
    outside: dict[int, Node] = {}       # id(outer node) -> its placeholder
    captured: list[Node] = []
    used = set(names)

    def cap(n: Node) -> Node:
        if id(n) not in outside:
            base = n.attr("name") if n.op is Op.INPUT else (n.name or n.op.value)
            nm, k = base, 2
            while nm in used:
                nm, k = f"{base}_{k}", k + 1
            used.add(nm)
            outside[id(n)] = make(Op.INPUT, (), (("name", nm), ("role", "loop")), type=n.type, span=n.span, name=nm)
            captured.append(n)
        return outside[id(n)]

    memo: dict[int, Node] = {}
    for n in order:   # invariant nodes are captured where a varying node uses them, not before
        if id(n) in carried:
            memo[id(n)] = n
        elif varies[id(n)]:
            args = tuple(memo[id(a)] if varies[id(a)] else cap(a) for a in n.args)
            memo[id(n)] = n if all(x is y for x, y in zip(args, n.args)) else n.replace(args=args)
    declared = tuple(holders) + tuple(outside[id(n)] for n in captured)
    cond_prog = Program((("cond", memo[id(cond)] if varies[id(cond)] else cap(cond)),), declared)
    body_prog = Program(tuple((nm, memo[id(b)] if varies[id(b)] else cap(b)) for nm, b in zip(names, body)),
                        declared)
    # captures found while building the outputs join the declarations
    declared = tuple(holders) + tuple(outside[id(n)] for n in captured)
    return captured, Program(cond_prog.outputs, declared), Program(body_prog.outputs, declared)
