"""Operators by any name a user may give them (a row, its name, a python-graphblas operator, a
Python function), and a user's own operators: a row like the built-ins, holding the Python
function; its compiled forms are made where they are used (python-graphblas's UDFs in
kernels/gbops.py, numba ufuncs in udf.py for the reductions across processes, the product kernel
in kernels/udfmxm.py)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, SupportsFloat, TypeVar, cast

import numpy as np

from .. import udf
from ..errors import InputError
from .operators import (
    _I64,
    BINARY,
    MONOIDS,
    REDUCTIONS,
    SEMIRINGS,
    UNARY,
    BinaryOp,
    Monoid,
    Reduction,
    Semiring,
    UnaryOp,
    UserUfunc,
    _graphblas_name,
    _lookup,
    get_monoid,
)

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from .._types import BinaryFunction, BinaryOpLike, MonoidLike, UnaryFunction, UnaryOpLike

_F = TypeVar("_F", bound=Callable[..., Any])


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
