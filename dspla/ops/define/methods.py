"""python-graphblas's names as methods, one set shared by ``Expr`` (traced inside ``dp.function``)
and the values (``dspla.Array``: run at once). A python-graphblas user ports a function by changing
the import and dropping ``.new()``: ``A.mxm(B, semiring.plus_times)``, ``A.reduce_rowwise(monoid.plus)``.

Each method calls the ``dp`` function of that name through ``CALLS``: the ops' builders by
default; the eager layer (dspla/eager) registers functions there that run concrete values at
once and build expressions otherwise, so one method serves both. A name no op spells here (an op
this build lacks) is an error naming it, not a silent fallback."""
from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, NoReturn

from ...errors import UnknownNameError
from .spelling import SPELLINGS

CALLS: dict[str, Callable[..., Any]] = {}
"""name -> the function a method calls (filled by registration; a missing one is the builder)."""


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    fn = CALLS.get(name)
    if fn is None:
        spelled = SPELLINGS.get(name)
        if spelled is None:
            raise UnknownNameError("operation", name, sorted(SPELLINGS))
        fn = spelled.fn
    return fn(*args, **kwargs)


def _spelled(name: str, fallback: str) -> str:
    """``name`` when an op spells it, else ``fallback`` (the same operation by its older name)."""
    return name if name in SPELLINGS else fallback


def _shape(x: Any) -> tuple:
    return tuple(getattr(x, "shape", ()))


def _is_row(x: Any) -> bool:
    s = _shape(x)
    return len(s) == 2 and s[0] == 1 and s[1] != 1


def _is_column(x: Any) -> bool:
    s = _shape(x)
    return len(s) == 2 and s[1] == 1 and s[0] != 1


def _column(x: Any) -> Any:
    """A vector as a column (how an n-vector is held as a matrix: python-graphblas's Vector)."""
    return call("transpose", x) if _is_row(x) else x


def _operand(x: Any) -> bool:
    """What == and != compare element-wise with: a number, an expression or a value (anything
    else is not equal, by Python's identity fallback)."""
    return isinstance(x, numbers.Number) or hasattr(x, "shape")


class Methods:
    """python-graphblas's ``Matrix``/``Vector`` methods. Operators (semirings, monoids, binary and
    unary operators, select predicates) by name or as ``dp.semiring.NAME`` etc."""

    __slots__ = ()

    # -- products
    def mxm(self, other: Any, op: Any = "plus_times", **kw: Any) -> Any:
        """``self ⊕.⊗ other`` over a semiring (mask=, complement=, structure= as ``dp.mxm``)."""
        return call("mxm", self, other, op, **kw)

    def mxv(self, other: Any, op: Any = "plus_times", **kw: Any) -> Any:
        """``self ⊕.⊗ v`` for a vector v (a column)."""
        return call("mxv", self, _column(other), op, **kw)

    def vxm(self, other: Any, op: Any = "plus_times", **kw: Any) -> Any:
        """``v ⊕.⊗ A`` for this vector v; a column vector gives a column back (as python-graphblas's
        Vector.vxm gives a Vector)."""
        if _is_column(self):
            return call("transpose", call("vxm", call("transpose", self), other, op, **kw))
        return call("vxm", self, other, op, **kw)

    def kronecker(self, other: Any, op: Any = "times", **kw: Any) -> Any:
        return call("kronecker", self, other, op, **kw)

    # -- element-wise
    def ewise_add(self, other: Any, op: Any = "plus", **kw: Any) -> Any:
        """Union: an entry present in one operand only passes through (GraphBLAS eWiseAdd)."""
        return call("ewise_add", self, other, op, **kw)

    def ewise_mult(self, other: Any, op: Any = "times", **kw: Any) -> Any:
        """Intersection (GraphBLAS eWiseMult)."""
        return call("ewise_mult", self, other, op, **kw)

    def ewise_union(self, other: Any, op: Any, left_default: Any, right_default: Any, **kw: Any) -> Any:
        """Union where a lone entry meets the other side's default (GxB eWiseUnion)."""
        return call("ewise_union", self, other, op, left_default, right_default, **kw)

    def apply(self, op: Any, right: Any = None, *, left: Any = None, **kw: Any) -> Any:
        """A unary operator, or a binary one with a bound scalar (``right=`` or ``left=``)."""
        return call("apply", self, op, left=left, right=right, **kw)

    def select(self, op: Any, thunk: Any = 0, **kw: Any) -> Any:
        """The entries a predicate keeps (``"tril"``, ``">"``, ... with its thunk)."""
        return call("select", self, op, thunk, **kw)

    # -- reductions (to a column vector, a column vector, a 1 x 1 value)
    def reduce_rowwise(self, op: Any = "plus", **kw: Any) -> Any:
        return call(_spelled("reduce_rowwise", "reduce_rows"), self, op, **kw)

    def reduce_columnwise(self, op: Any = "plus", **kw: Any) -> Any:
        return _column(call(_spelled("reduce_columnwise", "reduce_cols"), self, op, **kw))

    def reduce_scalar(self, op: Any = "plus", **kw: Any) -> Any:
        return call(_spelled("reduce_scalar", "reduce_all"), self, op, **kw)

    # -- structure
    @property
    def T(self) -> Any:
        return call("transpose", self)

    def diag(self, k: int = 0, **kw: Any) -> Any:
        return call("diag", self, k, **kw)

    def __getitem__(self, key: Any) -> Any:
        """``A[I, J]`` (``v[I]``): I and J are slices, index lists or arrays, or single indices."""
        return call("extract", self, *key) if isinstance(key, tuple) else call("extract", self, key)

    def __iter__(self) -> NoReturn:
        # (Python would iterate by __getitem__(0), (1), ...: one extract per row until one fails)
        raise TypeError("a dspla value is not iterable: index it (A[i], A[I, J]) or convert it (to_numpy(), "
                        "to_coo())")

    def isequal(self, other: Any, **kw: Any) -> Any:
        return call("isequal", self, other, **kw)

    def isclose(self, other: Any, **kw: Any) -> Any:
        return call("isclose", self, other, **kw)

    # -- Python's operators: arithmetic over the present entries, comparisons element-wise (a
    # value, never a Python bool); Expr overrides these to keep where the user wrote them
    def __matmul__(self, other: Any) -> Any:
        return call("mxm", self, other, "plus_times")

    def __rmatmul__(self, other: Any) -> Any:
        return call("mxm", other, self, "plus_times")

    def __add__(self, other: Any) -> Any:
        return call("arith", self, other, "plus")

    def __radd__(self, other: Any) -> Any:
        return call("arith", other, self, "plus")

    def __sub__(self, other: Any) -> Any:
        return call("arith", self, other, "minus")

    def __rsub__(self, other: Any) -> Any:
        return call("arith", other, self, "minus")

    def __mul__(self, other: Any) -> Any:
        return call("arith", self, other, "times")

    def __rmul__(self, other: Any) -> Any:
        return call("arith", other, self, "times")

    def __truediv__(self, other: Any) -> Any:
        return call("arith", self, other, "div")

    def __rtruediv__(self, other: Any) -> Any:
        return call("arith", other, self, "div")

    def __pow__(self, other: Any) -> Any:
        return call("arith", self, other, "pow")

    def __neg__(self) -> Any:
        return call("apply", self, "neg")

    def __abs__(self) -> Any:
        return call("apply", self, "abs")

    def __lt__(self, other: Any) -> Any:
        return call("compare", self, other, "lt")

    def __le__(self, other: Any) -> Any:
        return call("compare", self, other, "le")

    def __gt__(self, other: Any) -> Any:
        return call("compare", self, other, "gt")

    def __ge__(self, other: Any) -> Any:
        return call("compare", self, other, "ge")

    def __eq__(self, other: object) -> Any:  # type: ignore[override]  # element-wise, not a bool
        return call("compare", self, other, "eq") if _operand(other) else NotImplemented

    def __ne__(self, other: object) -> Any:  # type: ignore[override]  # element-wise, not a bool
        return call("compare", self, other, "ne") if _operand(other) else NotImplemented

    __hash__ = object.__hash__   # usable as dict keys and in sets, by identity
