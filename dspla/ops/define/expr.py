"""``Expr``: the Python front end's handle on an IR node, with Python's operators, and what the
ops' builders share (operands, names, masks, spans). Operators reach the builders through the
spelling registry, so this module depends on no op."""
from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, Union
from typing import cast as _cast

from ..._types import Scalar
from ...errors import DimensionMismatch, DsplaError, Span
from ...ir.node import Node, Op
from ...ir.types import Dim, DType, Kind, Type
from .methods import CALLS, Methods
from .span import caller_span
from .spelling import builder

if TYPE_CHECKING:
    from typing_extensions import TypeIs

Operand = Union["Expr", Scalar]
"""What an arithmetic or comparison operator takes: an expression, or a scalar that binds to the
operator and applies to the present entries."""


class Expr(Methods):
    """A value in a dspla program (symbolic until run). ``@`` is mxm over plus_times; python-graphblas's
    method names (``.mxm``, ``.ewise_add``, ``.reduce_rowwise``, ...) build the same nodes (methods.py)."""

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
        return _cast(Expr, builder("transpose")(self, span=caller_span()))

    @property
    def nvals(self) -> "Expr":
        """The number of present entries, a 1 x 1 int64 value (``dp.nvals``)."""
        return _cast(Expr, builder("nvals")(self, span=caller_span()))

    def __repr__(self) -> str:
        return f"Expr({self.node.label} : {self.node.type})"

    def __bool__(self) -> NoReturn:
        raise TypeError("a dspla expression has no truth value until it is run")

    # -- operators
    def __matmul__(self, other: Expr) -> Expr:
        return _cast(Expr, builder("mxm")(self, other, "plus_times", span=caller_span()))

    def __rmatmul__(self, other: Expr) -> Expr:
        return _cast(Expr, builder("mxm")(other, self, "plus_times", span=caller_span()))

    def __add__(self, other: Operand) -> Expr:
        return arith(self, other, "plus", caller_span())

    def __radd__(self, other: Operand) -> Expr:
        return arith(other, self, "plus", caller_span())

    def __sub__(self, other: Operand) -> Expr:
        return arith(self, other, "minus", caller_span())

    def __rsub__(self, other: Operand) -> Expr:
        return arith(other, self, "minus", caller_span())

    def __mul__(self, other: Operand) -> Expr:
        return arith(self, other, "times", caller_span())

    def __rmul__(self, other: Operand) -> Expr:
        return arith(other, self, "times", caller_span())

    def __truediv__(self, other: Operand) -> Expr:
        return arith(self, other, "div", caller_span())

    def __rtruediv__(self, other: Operand) -> Expr:
        return arith(other, self, "div", caller_span())

    def __pow__(self, other: Scalar) -> Expr:
        return arith(self, other, "pow", caller_span())

    def __neg__(self) -> Expr:
        return _cast(Expr, builder("apply")(self, "neg", span=caller_span()))

    # comparisons build element-wise comparisons (bool values): with a scalar on the present
    # entries, with another expression on the entries both have (GraphBLAS eWiseMult)
    def __lt__(self, other: Operand) -> Expr:
        return compare(self, other, "lt", caller_span())

    def __le__(self, other: Operand) -> Expr:
        return compare(self, other, "le", caller_span())

    def __gt__(self, other: Operand) -> Expr:
        return compare(self, other, "gt", caller_span())

    def __ge__(self, other: Operand) -> Expr:
        return compare(self, other, "ge", caller_span())

    def __eq__(self, other: object) -> Expr:  # type: ignore[override]  # element-wise, not a bool
        return compare(self, other, "eq", caller_span())

    def __ne__(self, other: object) -> Expr:  # type: ignore[override]  # element-wise, not a bool
        return compare(self, other, "ne", caller_span())

    def __getitem__(self, key: Any) -> Expr:
        """``A[I, J]``, ``v[I]`` (``A[I]``: the rows I): extract (ints, slices, lists of ints)."""
        rows, cols = key if isinstance(key, tuple) and len(key) == 2 else (key, None)
        return _cast(Expr, builder("extract")(self, rows, cols, span=caller_span()))

    def __iter__(self) -> NoReturn:
        # (without it Python iterates by __getitem__(0), (1), ... until an IndexError, which an
        # extract from a dim of unknown size never raises: list(A) built extracts forever)
        raise TypeError("a dspla expression is not iterable: index it (A[i], A[I, J]) or read its .shape")

    __hash__ = object.__hash__   # expressions stay usable as dict keys (by identity)


def is_scalar(x: object) -> TypeIs[Scalar]:
    return isinstance(x, (numbers.Number, bool)) and not isinstance(x, complex)


def scalar(x: Any) -> Any:
    """A numpy scalar as the Python scalar it holds."""
    return x.item() if hasattr(x, "item") else x


def node_of(x: Expr | Node, what: str = "operand") -> Node:
    if isinstance(x, Expr):
        return x.node
    if isinstance(x, Node):
        return x
    raise TypeError(f"expected a dspla expression as {what}, got {type(x).__name__}")


def arith(a: Operand, b: Operand, op: str, span: Span | None) -> Expr:
    """Infix arithmetic. Expr-Expr: + is a union, * and / are intersections (Hadamard), and
    X - Y is X + (-Y) over the union (a lone Y entry becomes -Y). A scalar operand binds to the
    operator and applies to the present entries only."""
    apply = builder("apply")
    if is_scalar(b):
        if is_scalar(a):
            raise TypeError("at least one operand must be a dspla expression")
        return _cast(Expr, apply(a, op, right=scalar(b), span=span))
    if is_scalar(a):
        return _cast(Expr, apply(b, op, left=scalar(a), span=span))
    if op == "plus":
        return _cast(Expr, builder("ewise_add")(a, b, "plus", span=span))
    if op == "minus":
        return _cast(Expr, builder("ewise_add")(a, apply(b, "neg", span=span), "plus", span=span))
    if op == "pow":
        raise TypeError("** takes a scalar exponent")
    return _cast(Expr, builder("ewise_mult")(a, b, op, span=span))


_SWAP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def compare(a: Operand, b: object, op: str, span: Span | None) -> Expr:
    # (a and b come from the parser as they were written: apply refuses a scalar as its operand)
    if is_scalar(b):
        return _cast(Expr, builder("apply")(_cast(Expr, a), op, right=scalar(b), span=span))
    if is_scalar(a):   # (reflected: 3 < x arrives as x > 3)
        return _cast(Expr, builder("apply")(_cast(Expr, b), _SWAP[op], right=scalar(a), span=span))
    if not isinstance(b, Expr):
        return NotImplemented
    return _cast(Expr, builder("ewise_mult")(a, b, op, span=span))


# what the values' operators call (the eager layer registers its own: dspla/eager)
CALLS.setdefault("arith", lambda a, b, op: arith(a, b, op, caller_span()))
CALLS.setdefault("compare", lambda a, b, op: compare(a, b, op, caller_span()))


def span_or_caller(span: Span | None) -> Span | None:
    return span if span is not None else caller_span()


_Row = TypeVar("_Row")


def named(lookup: Callable[[Any], _Row], name: Any, span: Span | None) -> _Row:
    """``lookup(name)`` (a semiring, operator, monoid or dtype by name); an unknown name is
    reported where the user wrote the call, as shape errors are."""
    try:
        return lookup(name)
    except DsplaError as e:
        where = span_or_caller(span) if e.span is None else None
        if where is None:
            raise
        raise e.at(where) from None


def mask_args(mask: Expr | None, complement: bool,
              structure: bool) -> tuple[tuple[Node, ...], tuple[tuple[str, Any], ...]]:
    """(extra args, mask attrs) of an optionally masked op."""
    if mask is None:
        if complement or structure:
            raise TypeError("complement= and structure= describe a mask: give mask= too")
        return (), (("mask", None), ("complement", False))
    return (node_of(mask, "mask"),), (("mask", "structure" if structure else "value"),
                                      ("complement", bool(complement)))


def bool_mask(n: Node) -> Node:
    """A masked op's node (its mask the last argument) once its type is checked against the mask
    as written. A mask of floats read by value is read as the C API reads it, cast to bool (x !=
    0: -0.0 is false): SuiteSparse tests the value's bits instead (-0.0 true), and whether a sum of
    products that cancels comes out 0.0 or -0.0 depends on its kernel, so on the plan."""
    by_value = n.attr("mask") == "value" if n.op is not Op.MASK else not n.attr("structure")
    m = n.args[-1]
    if not by_value or m.type.dtype.np.kind != "f":
        return n
    return n.replace(args=(*n.args[:-1], node_of(builder("cast")(Expr(m), "bool", span=n.span))))


def vector_check(v: Expr, which: str, span: Span | None) -> None:
    shape = node_of(v).type.shape
    if (which == "column" and shape[1] != 1) or (which == "row" and shape[0] != 1):
        raise DimensionMismatch(f"expected a {which} vector, got {node_of(v).label} of shape {list(shape)}",
                                span_or_caller(span))
