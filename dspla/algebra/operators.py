"""The algebra's rows: binary operators, reductions, monoids, semirings, unary operators and
select predicates, each a row in a table keyed by its GraphBLAS name. A row says what the
operator is (domain, result dtype, identity; associativity, distributivity, derivatives) and how
SuiteSparse:GraphBLAS computes it (``gb``). Adding an operator or semiring is adding a row here."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, SupportsIndex, TypeVar

import numpy as np
from numpy.typing import NDArray

from .. import udf
from ..errors import DomainMismatch, UnknownNameError
from ..ir.types import DType, promote
from .derivatives import (
    _DIV,
    _FIRST,
    _MINUS,
    _PLUS,
    _POW,
    _RDIV,
    _RMINUS,
    _SECOND,
    _SELECTS,
    _TIMES,
    Derivatives,
)

if TYPE_CHECKING:
    from .._types import BinaryFunction, MonoidLike, SelectLike, SemiringLike

F64, F32, I64, BOOL = DType.float64, DType.float32, DType.int64, DType.bool
_Row = TypeVar("_Row")


# ---------------------------------------------------------------------------- binary operators
@dataclass(frozen=True)
class BinaryOp:
    """kind: arith (numeric), div (always floating), compare (-> bool), logical (bool in/out),
    select (first/second/any/min/max: any dtype, result in the common dtype), pair (-> 1).

    Facts: ``associative``/``commutative`` as usual; ``distributes_over`` names the monoids this
    operator distributes over on both sides (x*(y+z) = x*y + x*z and (y+z)*x = y*x + z*x), which
    makes a semiring of them associative as a matrix product (matrix-chain order relies on it).
    The lists are conservative: a fact left out only forgoes a rewrite. ``selects`` and ``grad``
    are what reverse mode reads (autodiff/vjp.py): see ``Derivatives``."""

    name: str
    kind: str
    gb: str
    associative: bool = False
    commutative: bool = False
    distributes_over: tuple = ()
    reads: tuple = (True, True)   # whether the left / right operand's value is used (not only its presence)
    func: Any = field(default=None, compare=False, repr=False)   # a user's Python function (None: built in)
    # the operand it keeps, by which order (min, max: "min" / "max"; None: it computes a new value)
    selects: str | None = None
    grad: Derivatives | None = field(default=None, compare=False, repr=False)   # how a cotangent passes

    def __str__(self) -> str:
        return self.name

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        # a row travels by name (plans are scattered pickled): every rank defined the same operators
        # (its script, or --plugin), and neither a user's function nor a derivative rule need be picklable
        return (binary_row, (self.name,))

    def dtypes(self, a: DType, b: DType, where: str = "") -> tuple[DType, DType]:
        """(dtype both operands are cast to, result dtype) for operands of dtypes a and b."""
        if self.kind == "logical":
            return BOOL, BOOL
        c = promote(a, b)
        if self.kind == "compare":
            return c, BOOL
        if self.kind == "div":
            c = c if c.is_float else F64
            return c, c
        if self.kind == "arith" and c is BOOL:
            raise DomainMismatch(f"{where or self.name}: operator {self.name!r} does not apply to bool "
                                 "operands; use a logical operator (lor, land, lxor) or cast to int64/float64")
        return c, c


BINARY: dict[str, BinaryOp] = {}


def _binary(name: str, kind: str, gb: str | None = None, assoc: bool = False, comm: bool = False,
            dist: tuple[str, ...] = (), reads: tuple[bool, bool] = (True, True), selects: str | None = None,
            grad: Derivatives | None = None) -> None:
    BINARY[name] = BinaryOp(name, kind, gb or name, assoc, comm, dist, reads, selects=selects, grad=grad)


_binary("plus", "arith", assoc=True, comm=True, dist=("min", "max"), grad=_PLUS)
_binary("times", "arith", assoc=True, comm=True, dist=("plus",), grad=_TIMES)
_binary("minus", "arith", grad=_MINUS)
_binary("rminus", "arith", grad=_RMINUS)
_binary("pow", "arith", grad=_POW)
_binary("div", "div", "truediv", grad=_DIV)
_binary("rdiv", "div", "rtruediv", grad=_RDIV)
_binary("first", "select", assoc=True, reads=(True, False), grad=_FIRST)
_binary("second", "select", assoc=True, reads=(False, True), grad=_SECOND)
_binary("any", "select", assoc=True, comm=True)
_binary("min", "select", assoc=True, comm=True, dist=("max",), selects="min", grad=_SELECTS)
_binary("max", "select", assoc=True, comm=True, dist=("min",), selects="max", grad=_SELECTS)
_binary("pair", "pair", assoc=True, comm=True, dist=("any",), reads=(False, False))
_binary("land", "logical", assoc=True, comm=True, dist=("lor",))
_binary("lor", "logical", assoc=True, comm=True, dist=("land",))
_binary("lxor", "logical", assoc=True, comm=True)
for _n in ("eq", "ne", "gt", "ge", "lt", "le"):
    _binary(_n, "compare", comm=_n in ("eq", "ne"))


# ---------------------------------------------------------------------------- reductions
@dataclass(frozen=True)
class Reduction:
    """How processes combine values element-wise: an MPI built-in reduction by name, the numpy
    ufunc computing the same (the simulated communicator's), and the value a missing entry
    contributes (the reduction's identity, per dtype kind: float, int64, bool). A user monoid's
    reduction (``func`` set) has no MPI built-in: MPI runs it as a user op over whole buffers."""

    name: str
    ufunc: Any
    fills: tuple
    func: Any = field(default=None, compare=False, repr=False)

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        return (REDUCTIONS.__getitem__, (self.name,)) if self.func is not None else super().__reduce_ex__(protocol)

    def fill(self, dtype: DType) -> np.generic:
        return per_dtype(self.fills, dtype)


def per_dtype(values: tuple, dtype: DType) -> np.generic:
    """A monoid's identity (or a reduction's fill) given as (float, int64, bool), in ``dtype``:
    other integers take int64's in their own range (min's is 255 for uint8, max's -128 for int8)."""
    if dtype.is_float or dtype is BOOL:
        return dtype.np.type(values[0 if dtype.is_float else 2])
    info, v = np.iinfo(dtype.np), values[1]
    return dtype.np.type(info.max if v == _I64.max else info.min if v == _I64.min else v)


class UserUfunc:
    """A user's function as a ufunc over any dtype it is called with (one compiled loop per dtype,
    made on first use): ``uf(a, b, out=b)`` and ``uf.reduce(stacked, axis=0)``, as numpy's."""

    def __init__(self, func: BinaryFunction) -> None:
        self.func = func

    def __call__(self, a: NDArray[Any], b: NDArray[Any], out: NDArray[Any] | None = None) -> NDArray[Any]:
        return udf.ufunc(self.func, np.result_type(a, b))(a, b, out=out)

    def reduce(self, arr: NDArray[Any], axis: int = 0) -> NDArray[Any]:
        return udf.ufunc(self.func, arr.dtype).reduce(arr, axis=axis)


_I64 = np.iinfo(np.int64)
REDUCTIONS: dict[str, Reduction] = {r.name: r for r in (
    Reduction("sum", np.add, (0.0, 0, False)),
    Reduction("prod", np.multiply, (1.0, 1, True)),
    # fmin/fmax: a NaN is ignored, as SuiteSparse's min and max do (np.minimum would spread it);
    # so over floats a missing entry contributes NaN, not ±inf: as neutral for every other value,
    # and an entry present only as NaN on one process stays NaN (as GraphBLAS's product gives)
    Reduction("min", np.fmin, (np.nan, _I64.max, True)),
    Reduction("max", np.fmax, (np.nan, _I64.min, False)),
    Reduction("lor", np.logical_or, (0.0, 0, False)),
    Reduction("land", np.logical_and, (1.0, 1, True)),
    Reduction("lxor", np.logical_xor, (0.0, 0, False)),
)}


# ---------------------------------------------------------------------------------- monoids
@dataclass(frozen=True)
class Monoid:
    """An associative, commutative operator with an identity; domain 'numeric', 'any' or 'bool'.

    ``identities``: the identity for (float, int64, bool) values, None where there is none
    (``any``). ``reductions``: the element-wise reduction that combines partial results across
    processes, for (numeric, bool) values: over bool, plus is lor and times land, as in GraphBLAS;
    ``any`` reduces by max (every present value is an acceptable result, and a missing entry,
    filled with the lowest value, never wins)."""

    name: str
    domain: str
    gb: str
    identities: tuple | None
    reductions: tuple
    opname: str | None = None     # a user monoid's binary operator (built-ins share their name)
    builtin: bool = True
    # reverse mode's facts (autodiff/vjp.py): a cotangent of the sum flows unchanged to every term
    # (``linear``); a selecting monoid (min, max: ``selects``) routes it to the term it kept
    linear: bool = False

    def __str__(self) -> str:
        return self.name

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        return (get_monoid, (self.name,)) if not self.builtin else super().__reduce_ex__(protocol)

    @property
    def op(self) -> BinaryOp:
        return BINARY[self.opname or self.name]

    @property
    def selects(self) -> str | None:
        return self.op.selects

    def identity(self, dtype: DType) -> np.generic | None:
        if self.identities is None:
            return None
        return per_dtype(self.identities, dtype)

    def reduction(self, dtype: DType) -> Reduction:
        return REDUCTIONS[self.reductions[1 if dtype is BOOL else 0]]

    def check(self, dtype: DType, where: str = "") -> DType:
        if self.domain == "bool":
            return BOOL
        if self.domain == "numeric" and dtype is BOOL:
            raise DomainMismatch(f"{where or self.name}: monoid {self.name!r} does not apply to bool values; "
                                 "use lor/land/lxor, or cast to int64/float64")
        return dtype


MONOIDS: dict[str, Monoid] = {m.name: m for m in (
    Monoid("plus", "numeric", "plus", (0.0, 0, False), ("sum", "lor"), linear=True),
    Monoid("times", "numeric", "times", (1.0, 1, True), ("prod", "land")),
    Monoid("min", "any", "min", (np.inf, _I64.max, True), ("min", "land")),
    Monoid("max", "any", "max", (-np.inf, _I64.min, False), ("max", "lor")),
    Monoid("any", "any", "any", None, ("max", "lor")),
    Monoid("lor", "bool", "lor", (0.0, 0, False), ("lor", "lor")),
    Monoid("land", "bool", "land", (1.0, 1, True), ("land", "land")),
    Monoid("lxor", "bool", "lxor", (0.0, 0, False), ("lxor", "lxor")),
)}


# -------------------------------------------------------------------------------- semirings
@dataclass(frozen=True)
class Semiring:
    name: str
    monoid: Monoid
    mult: BinaryOp
    builtin: bool = True

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"semiring.{self.name}" if self.builtin else f"Semiring({self.name}: {self.monoid}.{self.mult})"

    @property
    def associative(self) -> bool:
        """(A B) C == A (B C): the multiply is associative and distributes over the monoid."""
        return self.mult.associative and self.monoid.name in self.mult.distributes_over

    def dtypes(self, a: DType, b: DType, where: str = "") -> tuple[DType, DType]:
        """(dtype operands are cast to, result dtype). Operands take the multiply's domain: a
        comparison under a bool monoid compares in the promoted dtype (GraphBLAS LOR_EQ_FP64
        compares doubles), a logical multiply or any other multiply under a bool monoid runs on bool."""
        if self.mult.kind == "logical" or (self.monoid.domain == "bool" and self.mult.kind != "compare"):
            return BOOL, BOOL
        try:
            compute, out = self.mult.dtypes(a, b, where)
        except DomainMismatch:
            raise DomainMismatch(f"{where or self.name}: semiring {self.name!r} does not apply to bool operands "
                                 "(its multiply is arithmetic); use lor_land or any_pair, or cast to int64/float64") \
                from None
        if out is BOOL and self.monoid.domain == "numeric":
            raise DomainMismatch(f"{where or self.name}: semiring {self.name!r} does not apply to bool operands "
                                 f"(monoid {self.monoid.name!r} is numeric); use lor_land or any_pair, or cast")
        return compute, out

    def operand_dtypes(self, a: DType, b: DType, compute: DType) -> tuple[DType, DType]:
        """The dtype each operand is cast to before the product: the compute dtype where the
        multiply reads its values, its own where it only looks at where entries are (first,
        second, pair): GraphBLAS casts such an operand without reading it, so a cast of a large
        static matrix (a bool graph under min_second) would be wasted work."""
        ra, rb = self.mult.reads
        return (compute if ra else a), (compute if rb else b)


SEMIRINGS: dict[str, Semiring] = {}
for _name in ("plus_times", "plus_second", "plus_first", "plus_pair", "plus_min", "min_plus", "max_plus",
              "min_times", "max_times", "min_second", "max_second", "min_first", "max_first", "min_max",
              "max_min", "lor_land", "land_lor", "any_pair", "any_second", "any_first", "lxor_land"):
    _m, _op = _name.split("_", 1)
    SEMIRINGS[_name] = Semiring(_name, MONOIDS[_m], BINARY[_op])


# --------------------------------------------------------------------------- unary operators
@dataclass(frozen=True)
class UnaryOp:
    """``steps`` is how GraphBLAS computes it: ('unary', gb_name) or ('bind', gb_binop, scalar),
    applied in order to the present entries. ``result`` is 'same' (dtype kept), 'float'
    (integers become float64), 'numeric' (same, but bool is refused), or 'index' (the entry's
    global row or column number, int64: ``steps`` is (('index', 'row'|'col'),))."""

    name: str
    result: str
    steps: tuple = field(default=())
    func: Any = field(default=None, compare=False, repr=False)   # a user's Python function (None: built in)
    # the cotangent of x in y = op(x), built by b (autodiff/builders.py): (b, g, x, y) -> node; None: the
    # operator is piecewise constant or an index (its gradient is zero wherever it exists)
    grad: Callable[..., Any] | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.name

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        return (unary_row, (self.name,))   # by name, as a binary operator's row

    def dtypes(self, a: DType, where: str = "") -> tuple[DType, DType]:
        if self.result == "float":
            c = a if a.is_float else F64
            return c, c
        if self.result == "index":
            return a, I64
        if self.result == "numeric" and a is BOOL:
            raise DomainMismatch(f"{where or self.name}: {self.name} does not apply to bool values; cast first")
        return a, a


UNARY: dict[str, UnaryOp] = {}
for _u in (
    UnaryOp("relu", "numeric", (("bind", "max", 0),), grad=lambda b, g, x, y: b.mul(g, b.un(x, "relu_grad"))),
    UnaryOp("relu_grad", "numeric", (("bind", "gt", 0),)),  # step: 1 where x > 0 else 0
    UnaryOp("sigmoid", "float", (("bind", "times", -1), ("unary", "exp"), ("bind", "plus", 1), ("unary", "minv")),
            grad=lambda b, g, x, y: b.mul(g, b.mul(y, b.bind(y, "minus", 1.0, "left")))),
    UnaryOp("tanh", "float", (("unary", "tanh"),), grad=lambda b, g, x, y: b.mul(g, b.bind(b.mul(y, y), "minus", 1.0,
                                                                                          "left"))),
    UnaryOp("exp", "float", (("unary", "exp"),), grad=lambda b, g, x, y: b.mul(g, y)),
    UnaryOp("log", "float", (("unary", "log"),), grad=lambda b, g, x, y: b.mul(g, x, "div")),
    UnaryOp("log1p", "float", (("unary", "log1p"),), grad=lambda b, g, x, y: b.mul(g, b.bind(x, "plus", 1.0), "div")),
    UnaryOp("expm1", "float", (("unary", "expm1"),), grad=lambda b, g, x, y: b.mul(g, b.bind(y, "plus", 1.0))),
    UnaryOp("sqrt", "float", (("unary", "sqrt"),), grad=lambda b, g, x, y: b.mul(g, b.bind(y, "times", 2.0), "div")),
    UnaryOp("minv", "float", (("unary", "minv"),), grad=lambda b, g, x, y: b.neg(b.mul(g, b.mul(y, y)))),
    UnaryOp("abs", "numeric", (("unary", "abs"),), grad=lambda b, g, x, y: b.mul(g, b.un(x, "sign"))),  # sign(0) = 0
    # x * -1, not GraphBLAS's ainv: the same values (-0.0 included) by a kernel 3x faster here
    UnaryOp("neg", "numeric", (("bind", "times", -1),), grad=lambda b, g, x, y: b.neg(g)),
    UnaryOp("sign", "numeric", (("unary", "signum"),)),
    UnaryOp("square", "numeric", (("bind", "pow", 2),), grad=lambda b, g, x, y: b.mul(g, b.bind(x, "times", 2.0))),
    UnaryOp("one", "same", (("unary", "one"),)),
    UnaryOp("identity", "same", (("unary", "identity"),), grad=lambda b, g, x, y: g),
    UnaryOp("lnot", "same", (("unary", "lnot"),)),
    UnaryOp("rowindex", "index", (("index", "row"),)),   # each entry's row number (labels, ids)
    UnaryOp("colindex", "index", (("index", "col"),)),
):
    UNARY[_u.name] = _u
UNARY["step"] = UnaryOp("step", "numeric", UNARY["relu_grad"].steps)


# ------------------------------------------------------------------------ select predicates
@dataclass(frozen=True)
class SelectOp:
    """Keep the entries where the predicate holds. ``on`` is 'value' (compares the entry with
    the thunk), 'index' (position relative to the diagonal offset, or to a row or column,
    given by the thunk) or 'user': ``func(values, rows, cols, thunk)`` of numpy arrays gives the
    bool array of the entries kept (a user's predicate, defined on every rank alike)."""

    name: str
    on: str
    gb: str
    func: Any = field(default=None, compare=False)

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple[Any, ...]:   # a row travels by name (plans are scattered pickled)
        return (select_row, (self.name,))


SELECT: dict[str, SelectOp] = {}
for _n in ("gt", "ge", "lt", "le", "eq", "ne"):
    SELECT[_n] = SelectOp(_n, "value", "value" + _n)
SELECT["nonzero"] = SelectOp("nonzero", "value", "valuene")
for _n in ("tril", "triu", "diag", "offdiag", "rowle", "rowgt", "colle", "colgt"):
    SELECT[_n] = SelectOp(_n, "index", _n)
SELECT_ALIASES = {">": "gt", ">=": "ge", "<": "lt", "<=": "le", "==": "eq", "!=": "ne",
                  **{"value" + _n: _n for _n in ("gt", "ge", "lt", "le", "eq", "ne")}}


def select_row(name: str) -> SelectOp:
    return SELECT[name]


# ------------------------------------------------------------------------------ lookups
def _graphblas_name(obj: object) -> str | None:
    """The name of a python-graphblas operator object (``graphblas.semiring.min_plus``, typed
    or not), or None for anything else: such objects are accepted wherever a name is."""
    mod = type(obj).__module__ or ""
    return getattr(obj, "name", None) if mod.startswith("graphblas.") else None


def _lookup(table: dict[str, _Row], kind: str, name: object, cls: type[_Row]) -> _Row:
    if isinstance(name, cls):
        return name
    gbname = _graphblas_name(name)
    key = gbname or str(name)
    if key not in table and gbname is not None:   # python-graphblas's own spelling (truediv, valuegt)
        key = next((k for k, row in table.items() if getattr(row, "gb", None) == gbname), key)
    if key not in table:
        raise UnknownNameError(kind, key, table)
    return table[key]


def get_semiring(name: SemiringLike) -> Semiring:
    return _lookup(SEMIRINGS, "semiring", name, Semiring)


def get_monoid(name: MonoidLike) -> Monoid:
    return _lookup(MONOIDS, "monoid", name, Monoid)


def binary_row(name: str) -> BinaryOp:
    """The binary operator row of that name (how a row travels pickled)."""
    return _lookup(BINARY, "binary operator", name, BinaryOp)


def unary_row(name: str) -> UnaryOp:
    return _lookup(UNARY, "unary operator", name, UnaryOp)


def get_select(name: SelectLike) -> SelectOp:
    if isinstance(name, str) and name in SELECT_ALIASES:
        name = SELECT_ALIASES[name]
    if callable(name) and not isinstance(name, SelectOp) and _graphblas_name(name) is None:
        return define_select(name)
    return _lookup(SELECT, "select predicate", name, SelectOp)


def define_select(func: Any, name: str | None = None) -> SelectOp:
    """A user's predicate as a select row: ``func(values, rows, cols, thunk)`` on numpy arrays
    (rows and columns global) returns the bool array of the entries to keep."""
    row = _USER_SELECT.get(func)
    if row is not None and (name is None or row.name == name):
        return row
    code = getattr(func, "__code__", None)
    base = name or (f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', repr(func))}"
                    + (f":{code.co_firstlineno}" if code is not None else ""))
    # every rank runs the same script, so a name taken already gets the same next number on each
    key, k = base, 1
    while key in SELECT and SELECT[key].func is not func:
        k += 1
        key = f"{base}#{k}"
    row = _USER_SELECT[func] = SELECT[key] = SelectOp(key, "user", key, func)
    return row


_USER_SELECT: dict = {}   # a user's predicate -> its row (the same function, the same row)
