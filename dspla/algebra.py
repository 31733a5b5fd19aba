"""The algebra: binary operators, monoids, semirings, unary operators and select predicates.

Each is a row in a table keyed by its GraphBLAS name. A row says what the operator is
(domain, result dtype, identity) and how SuiteSparse:GraphBLAS computes it (``gb``).
Adding an operator or semiring is adding a row here; nothing else has to change.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, SupportsFloat, SupportsIndex, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from . import udf
from .errors import DomainMismatch, InputError, NoGradient, UnknownNameError
from .ir.types import DType, promote

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from ._types import (
        BinaryFunction,
        BinaryOpLike,
        MonoidLike,
        SelectLike,
        SemiringLike,
        UnaryFunction,
        UnaryOpLike,
    )

F64, F32, I64, BOOL = DType.float64, DType.float32, DType.int64, DType.bool
_Row = TypeVar("_Row")
_F = TypeVar("_F", bound=Callable[..., Any])


# ------------------------------------------------------------------------------ derivatives
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
        return (get_binary, (self.name,))

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
        return dtype.np.type(self.fills[0 if dtype.is_float else 1 if dtype is I64 else 2])


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
        return dtype.np.type(self.identities[0 if dtype.is_float else 1 if dtype is I64 else 2])

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
        return (get_unary, (self.name,))   # by name, as a binary operator's row

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
    the thunk) or 'index' (position relative to the diagonal offset given by the thunk)."""

    name: str
    on: str
    gb: str

    def __str__(self) -> str:
        return self.name


SELECT: dict[str, SelectOp] = {}
for _n in ("gt", "ge", "lt", "le", "eq", "ne"):
    SELECT[_n] = SelectOp(_n, "value", "value" + _n)
SELECT["nonzero"] = SelectOp("nonzero", "value", "valuene")
for _n in ("tril", "triu", "diag", "offdiag"):
    SELECT[_n] = SelectOp(_n, "index", _n)
SELECT_ALIASES = {">": "gt", ">=": "ge", "<": "lt", "<=": "le", "==": "eq", "!=": "ne"}


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


def get_binary(name: BinaryOpLike) -> BinaryOp:
    if isinstance(name, Monoid):
        return name.op
    func = getattr(name, "orig_func", None)
    if func is not None and _graphblas_name(name) not in BINARY:   # a python-graphblas user-defined operator
        return define_binary(cast(str, _graphblas_name(name)), func)
    return _lookup(BINARY, "binary operator", name, BinaryOp)


def get_unary(name: UnaryOpLike) -> UnaryOp:
    func = getattr(name, "orig_func", None)
    if func is not None and _graphblas_name(name) not in UNARY:
        return define_unary(cast(str, _graphblas_name(name)), func)
    return _lookup(UNARY, "unary operator", name, UnaryOp)


def get_select(name: SelectLike) -> SelectOp:
    if isinstance(name, str) and name in SELECT_ALIASES:
        name = SELECT_ALIASES[name]
    return _lookup(SELECT, "select predicate", name, SelectOp)


# ------------------------------------------------------------------ user-defined operators
# A user's operator is a row like the built-ins, holding the Python function; its compiled
# forms are made where they are used (python-graphblas's UDFs in kernels/gbops.py, numba ufuncs in
# udf.py for the reductions across processes, the product kernel in kernels/udfmxm.py).

def _same_function(f: Callable[..., Any], g: Callable[..., Any]) -> bool:
    # a notebook cell run twice defines an equal function anew: the same code is the same operator
    return f is g or (getattr(f, "__code__", None) is not None and getattr(f, "__code__", None) == getattr(
        g, "__code__", None))


_Defined = TypeVar("_Defined", BinaryOp, Monoid, UnaryOp)


def _register(table: dict[str, _Defined], kind: str, row: _Defined, same: Callable[[_Defined], bool]) -> _Defined:
    if not row.name.isidentifier():
        raise InputError(f"a {kind} name must be an identifier, got {row.name!r}")
    old = table.get(row.name)
    if old is not None and not same(old):
        raise InputError(f"{kind} {row.name!r} is already defined"
                         + ("" if getattr(old, "func", None) is not None or not getattr(old, "builtin", True)
                            else " (built in)") + "; choose another name")
    if old is not None:
        return old
    table[row.name] = row
    return row


def _function(func: _F, kind: str, nargs: int) -> _F:
    if not callable(func) or isinstance(func, type):
        raise InputError(f"a user {kind} is a Python function of {nargs} number(s), got {type(func).__name__}")
    udf.check_compiles(func, nargs)
    return func


def define_binary(name: str, func: BinaryFunction, *, associative: bool = False, commutative: bool = False,
                  distributes_over: Iterable[str] = ()) -> BinaryOp:
    """A binary operator from a Python function of two numbers (compiled with numba, as
    python-graphblas's ``binary.register_new``); it takes and returns the operands' dtype. The
    facts are the user's word: ``distributes_over`` (monoid names) lets matrix-chain order
    re-parenthesise products of a semiring built on it."""
    func = _function(func, "binary operator", 2)
    row = BinaryOp(name, "arith", name, bool(associative), bool(commutative), tuple(map(str, distributes_over)),
                   func=func)
    return _register(BINARY, "binary operator", row, lambda old: old.func is not None and _same_function(
        old.func, func) and old == row)


def _identities(identity: SupportsFloat) -> tuple[float, int, None]:
    """(float, int64, None): an infinite identity stands for int64's extreme, as for the built-in
    min and max; a bool identity is not offered (user monoids are numeric)."""
    try:
        v = float(identity)
    except (TypeError, ValueError):
        raise InputError(f"a monoid's identity is a number, got {identity!r}") from None
    if np.isnan(v):
        raise InputError("a monoid's identity cannot be NaN")
    i = _I64.max if v == np.inf else _I64.min if v == -np.inf else int(v)
    if np.isfinite(v) and i != v:
        raise InputError(f"a monoid's identity applies to int64 values too: {identity!r} is not a whole number")
    return (v, i, None)


def define_monoid(name: str, op: BinaryOpLike | BinaryFunction, identity: SupportsFloat) -> Monoid:
    """A monoid from a binary operator (a name, a row, a python-graphblas operator or a Python
    function, which becomes the binary operator ``name``) and its identity, which the user
    declares (GraphBLAS cannot infer one). It must be associative and commutative: partial
    results are combined in whatever order processes finish."""
    ids = _identities(identity)   # first: a refused monoid leaves no operator behind
    if callable(op) and not isinstance(op, (BinaryOp, Monoid)) and _graphblas_name(op) is None:
        binop = define_binary(name, op, associative=True, commutative=True)
    else:
        binop = get_binary(cast("BinaryOpLike", op))
    if binop.func is None:
        raise InputError(f"monoid {name!r}: {binop.name!r} is built in; the built-in monoids are "
                         f"{', '.join(sorted(MONOIDS))}")
    red = Reduction(f"udf.{name}", UserUfunc(binop.func), (ids[0], ids[1], False), func=binop.func)
    row = Monoid(name, "numeric", name, ids, (red.name, red.name), opname=binop.name, builtin=False)
    out = _register(MONOIDS, "monoid", row, lambda old: old == row)
    REDUCTIONS.setdefault(red.name, red)
    return out


def define_unary(name: str, func: UnaryFunction) -> UnaryOp:
    """A unary operator from a Python function of one number (numeric values, dtype kept)."""
    func = _function(func, "unary operator", 1)
    row = UnaryOp(name, "numeric", (("udf", name),), func=func)
    return _register(UNARY, "unary operator", row, lambda old: old.func is not None and _same_function(
        old.func, func))


def define_semiring(name: str, monoid: MonoidLike | BinaryFunction, op: BinaryOpLike | BinaryFunction,
                    identity: SupportsFloat | None = None) -> Semiring:
    """A semiring from a monoid and a multiply, usable by name everywhere. Each may be a name, a
    row, a python-graphblas operator object, or a Python function: a function for the monoid
    becomes the monoid ``NAME_add`` (``identity`` required), one for the multiply the binary
    operator ``NAME_mult``."""
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(f"semiring name must be an identifier, got {name!r}")
    if _is_function(monoid):
        if identity is None:
            raise InputError(f"semiring {name!r}: a monoid from a Python function needs its identity "
                             "(identity=...), e.g. math.inf for a minimum")
        monoid = define_monoid(f"{name}_add", monoid, identity)
    elif identity is not None:
        raise InputError(f"semiring {name!r}: identity= is for a monoid given as a function; "
                         f"monoid {getattr(monoid, 'name', monoid)!s} has its own")
    if _is_function(op):
        op = define_binary(f"{name}_mult", op)
    sr = Semiring(name, get_monoid(monoid), get_binary(op), builtin=False)
    old = SEMIRINGS.get(name)
    if old is not None and (old.monoid, old.mult) != (sr.monoid, sr.mult):
        raise InputError(f"semiring {name!r} is already defined as {old.monoid.name}.{old.mult.name}")
    SEMIRINGS.setdefault(name, sr)
    return SEMIRINGS[name]


def _is_function(x: object) -> TypeIs[BinaryFunction]:
    return callable(x) and not isinstance(x, (BinaryOp, Monoid, UnaryOp, Semiring, type)) and \
        _graphblas_name(x) is None
