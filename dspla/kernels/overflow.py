"""What an int64 sum or product does when its true value leaves int64 (docs/user-guide.md).

Three modes, chosen per function (``dp.function(..., overflow=)``, ``f.configure(overflow=)``;
the command line reads ``DSPLA_INT_OVERFLOW``):

- ``error`` (the default): an error naming the value (its name or op, and where it is written);
- ``wrap``: GraphBLAS's own arithmetic, two's complement modulo 2^64, unchecked;
- ``float64``: integer inputs are computed in float64 (function.py promotes them; results are
  float64, exact up to 2^53).

The check costs almost nothing when it cannot fire: from the operands' largest magnitudes (a max
and a min reduction each, in GraphBLAS) a bound on every result entry proves that most integer
arithmetic stays in range. Only an op the bound cannot clear is computed again in float64 and the
two compared: int64 arithmetic is exact modulo 2^64, so a result whose true value is in range is
exact, and one that wrapped is off by a multiple of 2^64, far more than the float64 value's
rounding (an entry more than 2^62 from its float64 value wrapped). Float paths are never checked.
A product accumulated in parts (a row's received blocks one after another) is checked at each
accumulation: a running total that leaves int64 is reported even if later terms would bring it
back."""
from __future__ import annotations

import math
import weakref
from typing import Any, Callable

import graphblas as gb
import numpy as np
from suitesparse_graphblas import ffi, lib

from ..algebra import BinaryOp, Semiring
from ..errors import DsplaError
from ..ir import Node, Op
from ..ir.types import DType
from . import gbops
from .item import check, item

MODES = ("error", "wrap", "float64")
LIMIT = 2**63                 # a bound below this proves no entry leaves int64
WRAPPED = float(2**62)        # an int64 entry this far from its float64 value wrapped
ARITH = frozenset({"plus", "minus", "rminus", "times"})
UNARY = frozenset({"neg", "abs", "square"})


class IntegerOverflow(DsplaError):
    """An integer result whose true value is outside int64 (mode 'error')."""


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise DsplaError(f"overflow must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def is_int(M) -> bool:
    return M.dtype.np_type.kind == "i" if hasattr(M.dtype, "np_type") else False


def maxabs(M) -> int:
    """The largest magnitude of M's entries, exactly (a Python int: |int64 min| is 2^63)."""
    if M._nrows == 1 and M._ncols == 1:   # a loop's counter: one typed read, not two reductions (~40 us)
        v = item(M)
        return 0 if v is None else abs(int(v))
    if M.nvals == 0:
        return 0
    calls = _REDUCE.get(M.dtype.name)
    if calls is not None:   # (the typed C calls: python-graphblas's scalars cost ~40 us a reduction)
        call, hi, lo, ctype = calls
        cell = ffi.new(ctype)   # (its own: simulated ranks are threads, and the C call releases the GIL)
        check(call(cell, ffi.NULL, hi, M.gb_obj[0], ffi.NULL), "reduce")
        top = int(cell[0])
        check(call(cell, ffi.NULL, lo, M.gb_obj[0], ffi.NULL), "reduce")
        return max(abs(top), abs(int(cell[0])))
    hi = M.reduce_scalar(gb.monoid.max).new().value
    lo = M.reduce_scalar(gb.monoid.min).new().value
    return max(abs(int(hi)), abs(int(lo)))


# dtype name -> (GrB_Matrix_reduce_<T>, its max and min monoids, the result cell's C type)
_REDUCE = {name: (getattr(lib, f"GrB_Matrix_reduce_{name}"), getattr(lib, f"GrB_MAX_MONOID_{name}"),
                  getattr(lib, f"GrB_MIN_MONOID_{name}"), f"{ctype}*")
           for name, ctype in (("INT8", "int8_t"), ("INT16", "int16_t"), ("INT32", "int32_t"),
                               ("INT64", "int64_t"))}


def _needs(mult: str) -> tuple[bool, bool]:
    """Which operands' magnitudes bound a term of ``mult`` (pair and comparisons need neither)."""
    if mult in ("plus", "minus", "rminus", "times", "min", "max", "any"):
        return True, True
    return mult == "first", mult in ("second", "pow")


def _term_of(mult: str, x, y, mag=maxabs) -> int:
    """_term over the operands themselves, reading only the magnitudes the term needs (``mag``:
    maxabs, or a Magnitudes' bound where one is known)."""
    nx, ny = _needs(mult)
    return _term(mult, mag(x) if nx else 0, mag(y) if ny else 0)


def _term(mult: str, ma: int, mb: int) -> int:
    if mult in ("plus", "minus", "rminus"):
        return ma + mb
    if mult == "times":
        return ma * mb
    if mult in ("first", "min", "max", "any"):
        return max(ma, mb) if mult != "first" else ma
    if mult == "second":
        return mb
    if mult == "pow":   # (GraphBLAS's int64 power saturates at int64's limits; x^0 is 1)
        return 1 if mb == 0 else LIMIT - 1
    return 1   # pair, comparisons, logical: 0 or 1


def _folded(monoid: str, term: int, count: int) -> int:
    """A bound on ⊕ of ``count`` terms each at most ``term`` in magnitude."""
    if monoid == "plus":
        return term * count
    if monoid == "times":
        if term <= 1 or count <= 1:
            return term
        return LIMIT if count * math.log2(term) >= 63 else term ** count
    return term


def risky(node: Node) -> bool:
    """Whether ``node`` computes int64 values by arithmetic that can leave int64 (its operators
    are built in: a user's operator is the user's arithmetic)."""
    if getattr(node.type, "dtype", None) is not DType.int64:
        return False
    op = node.op
    if op in (Op.EWISE_ADD, Op.EWISE_MULT, Op.APPLY_BIND, Op.EWISE_UNION, Op.KRONECKER):
        o = node.attr("op")
        if op is Op.APPLY_BIND and _keeps_magnitude(o.name, node.attr("scalar"), node.attr("side")):
            return False
        return o.func is None and o.name in ARITH
    if op is Op.APPLY:
        return node.attr("op").name in UNARY
    if op is Op.REDUCE:
        return node.attr("monoid").name in ("plus", "times")
    if op is Op.MXM:
        return _checked_semiring(node.attr("semiring"))
    if op in (Op.UPDATE, Op.ASSIGN):
        acc = node.attr("accum")
        return acc is not None and acc.func is None and acc.name in ARITH
    return False


def _keeps_magnitude(name: str, k, side: str) -> bool:
    """x * 0, x * 1, x + 0, x - 0: no entry grows (BFS's ``levels = s * 0``); not 0 - x, whose
    negation of -2^63 leaves int64."""
    if type(k) not in (int, float) or k not in (0, 1):
        return False
    return (name == "times") or (k == 0 and (name == "plus" or (name == "minus" and side == "right")))


def bound(node: Node, args: list, mag=maxabs) -> int:
    """A bound on the magnitude of every entry of ``node`` over ``args`` (exact integers; ``mag``
    as _term_of's)."""
    op = node.op
    if op in (Op.EWISE_ADD, Op.EWISE_MULT, Op.UPDATE, Op.KRONECKER):
        x, y = args[0], args[1]
        name = node.attr("accum" if op is Op.UPDATE else "op").name
        return _term_of(name, x, y, mag)
    if op is Op.ASSIGN:   # (C accum= A over the region, C as it was elsewhere)
        value, c = node.attr("value"), mag(args[0])
        a = _scalar_magnitude(value) if value is not None else mag(args[1])
        return max(c, _term(node.attr("accum").name, c, a))
    if op is Op.EWISE_UNION:   # (an operand missing on one side takes that side's default)
        left, right = (_scalar_magnitude(node.attr(k)) for k in ("left", "right"))
        return _term(node.attr("op").name, max(mag(args[0]), left), max(mag(args[1]), right))
    if op is Op.APPLY_BIND:
        s, name = node.attr("scalar"), node.attr("op").name
        if name == "times" and s == 0:
            return 0   # (x * 0: nothing to read)
        return _term(name, mag(args[0]), _scalar_magnitude(s))
    if op is Op.APPLY:
        m = mag(args[0])
        return m * m if node.attr("op").name == "square" else m
    if op is Op.REDUCE:
        x, axis = args[0], node.attr("axis")
        count = min(x.nvals, x.ncols if axis == "rows" else x.nrows if axis == "cols" else x.nvals)
        return _folded(node.attr("monoid").name, mag(x), count)
    if op is Op.MXM:
        sr = node.attr("semiring")
        return product_bound(args[0], args[1], sr, mag=mag)
    return LIMIT


def _scalar_magnitude(v) -> int:
    """|v| of a scalar attribute as int64 arithmetic sees it (a fraction: no bound)."""
    return abs(int(v)) if float(v).is_integer() else LIMIT


def product_bound(a, b, sr, inner: int | None = None, mag=maxabs) -> int:
    """A bound on a ⊕.⊗ b's entries (``inner``: the inner dim, when b is given untransposed)."""
    return _folded(sr.monoid.name, _term_of(sr.mult.name, a, b, mag),
                   min(a.ncols, b.nrows) if inner is None else inner)


def _checked_semiring(sr) -> bool:
    """Whether an int64 product over ``sr`` can leave int64 by GraphBLAS's own arithmetic: its
    monoid sums or multiplies, or its multiply does arithmetic, and neither is a user's Python
    function (a semiring defined from built-in operators is checked as a built-in one)."""
    return gbops.builtin_ops(sr.monoid, sr.mult) and (sr.monoid.name in ("plus", "times") or sr.mult.name in ARITH)


def int_product(sr, compute: DType) -> bool:
    """Whether a product over ``sr`` computing in ``compute`` is checked at all."""
    return compute is DType.int64 and _checked_semiring(sr)


def _fold2(monoid: str, x: int, y: int) -> int:
    return x + y if monoid == "plus" else x * y if monoid == "times" else max(x, y)


def _saturated_pow(x, y):
    """x^y in float64 as GraphBLAS's int64 power leaves it: cut at int64's limits (kept within
    2^62 of them, as float64 holds no value just below 2^63), 0^-k as the largest."""
    top = 9223372036854774784.0   # (2^63 - 1024: the largest float64 below 2^63)
    if x == 0.0 and y < 0.0:
        return top
    r = x ** y
    if r != r:
        return 0.0
    return min(max(r, -top), top)


_SATURATED_POW = BinaryOp("int64_pow_shadow", "arith", "int64_pow_shadow", func=_saturated_pow)


def _float_product(pairs: list, sr, mask=None):
    """⊕ over pairs of a ⊕.⊗ b, in float64 (the check's shadow; an int64 power's terms saturated
    as GraphBLAS saturates them: a sum of them that leaves int64 still wrapped)."""
    if sr.mult.name == "pow":
        sr = Semiring(f"{sr.monoid.name}_int64_pow_shadow", sr.monoid, _SATURATED_POW, builtin=False)
    fsr = gbops.semiring(sr, DType.float64)
    acc = gbops.binary(sr.monoid.op, DType.float64)
    out = None
    for a, b in pairs:
        P = _as_float(a).mxm(_as_float(b), fsr).new()
        if out is None:
            out = P
        else:
            out(accum=acc) << P
    if mask is not None:
        kept = gb.Matrix(gb.dtypes.FP64, out.nrows, out.ncols)
        kept(mask=mask) << out
        out = kept
    return out


class Shadows:
    """The float64 true values of a rank's int64 slots that may have wrapped and are not yet
    complete: a product's running total (its parts arrive one after another; int64 arithmetic
    is exact modulo 2^64, so only the complete value tells), a partial reduction on its way to
    the other ranks. ``flush`` compares a complete one with its int64 value; a reduction over
    ranks combines the partials' shadows (``take``)."""

    def __init__(self) -> None:
        self.by_slot: dict[int, tuple[Any, str]] = {}

    def product(self, slot: int, pairs: list, sr, what: str, mask=None, mag=maxabs) -> int:
        """``slot`` now holds ⊕ over pairs of a ⊕.⊗ b (int64; a fresh value): the bound on its
        entries (LIMIT when it is followed in float64)."""
        nx, ny = _needs(sr.mult.name)
        term = _term(sr.mult.name, max(mag(a) for a, _ in pairs) if nx else 0,
                     max(mag(b) for _, b in pairs) if ny else 0)
        got = _folded(sr.monoid.name, term, sum(a.ncols for a, _ in pairs))
        if got < LIMIT:
            self.by_slot.pop(slot, None)
            return got
        if mag is not maxabs:   # (a known bound too loose: the exact magnitudes)
            return self.product(slot, pairs, sr, what, mask)
        self.by_slot[slot] = (_float_product(pairs, sr, mask), what)
        return LIMIT

    def before_accumulating(self, slot: int, C, a, b, sr, what: str) -> bool:
        """Before ``C ⊕= a ⊕.⊗ b`` into ``slot``: whether to follow it in float64 (a shadow
        already, or the bound cannot clear the total: C is exact so far, its copy starts one)."""
        if slot in self.by_slot:
            return True
        if _fold2(sr.monoid.name, maxabs(C), product_bound(a, b, sr)) < LIMIT:
            return False
        self.by_slot[slot] = (C.dup(dtype=gb.dtypes.FP64), what)
        return True

    def accumulated(self, slot: int, a, b, sr, mask=None, rows=None) -> None:
        """After it: the shadow accumulates the same product in float64."""
        S = self.by_slot[slot][0]
        acc = gbops.binary(sr.monoid.op, DType.float64)
        P = _float_product([(a, b)], sr)
        if rows is not None:
            S[rows, :](accum=acc) << P
        else:
            S(accum=acc, mask=mask) << P

    def partial(self, slot: int, shadow, what: str) -> None:
        self.by_slot[slot] = (shadow, what)

    def take(self, slot: int):
        """The shadow of ``slot`` (None: its int64 value is exact), forgotten."""
        got = self.by_slot.pop(slot, None)
        return None if got is None else got[0]

    def flush(self, slot: int, value) -> None:
        """``slot`` is complete (or about to be replaced): raise if its int64 value wrapped."""
        got = self.by_slot.pop(slot, None)
        if got is not None and value is not None and hasattr(value, "nvals"):
            compare(value, got[0], got[1])

    def flush_all(self, slots: list) -> None:
        for slot in list(self.by_slot):
            self.flush(slot, slots[slot])


def shadow_of(node: Node, args: list, evaluate: Callable[[Node, list], Any]):
    """``node`` on ``args`` in float64 (the true value of an int64 result), or None when the
    bound proves its int64 value exact."""
    if bound(node, args) < LIMIT:
        return None
    return evaluate(node.replace(type=node.type.with_(dtype=DType.float64)),
                    [_as_float(a) if hasattr(a, "dtype") else a for a in args])


def combines(dtype, ufunc) -> bool:
    """Whether combining partials of ``dtype`` by ``ufunc`` across ranks is checked."""
    return np.dtype(dtype).kind == "i" and ufunc in (np.add, np.multiply)


def verify_combined(got: np.ndarray, shadows: np.ndarray, ufunc, what: str) -> None:
    """``got``: the int64 combination over ranks; ``shadows``: the ranks' partials' true values
    (ranks x entries, float64) combined the same way: raise if the combination wrapped."""
    with np.errstate(over="ignore", invalid="ignore"):
        want = ufunc.reduce(shadows, axis=0)
        bad = ~(np.abs(got.astype(np.float64) - want) <= WRAPPED)
    if bad.any():
        k = int(np.argmax(bad.reshape(-1)))
        _raise(what, (k, 0, float(want.reshape(-1)[k])) if want.size > 1 else None)


def describe(node: Node, output: str | None = None) -> str:
    """The value ``node`` makes, as messages name it: the output it is (``output``), its name or
    op, where it is written."""
    where = f" ({node.span})" if getattr(node, "span", None) is not None else ""
    if output and output != node.label:
        return f"output {output} = {node.label}{where}"
    return f"{node.label}{where}"


def raise_wrapped(what: str, at: tuple | None):
    """Raise IntegerOverflow for ``what`` (``at``: row, column and about the true value)."""
    _raise(what, at)


def _raise(what: str, at: tuple | None):
    spot = f" (row {at[0]}, column {at[1]}: about {at[2]:.6g})" if at is not None else ""
    raise IntegerOverflow(f"{what} overflows int64: its true value is outside -2^63..2^63-1{spot}. Choose what "
                          "integer overflow does: dp.function(..., overflow='wrap') keeps GraphBLAS's wrap-around, "
                          "overflow='float64' computes in float64 (DSPLA_INT_OVERFLOW=wrap|float64 for the command "
                          "line)")


def compare(result, shadow, what: str) -> None:
    """Raise if an entry of the int64 ``result`` wrapped: more than 2^62 from its float64 ``shadow``."""
    r, c, v = result.to_coo()
    if not len(v):
        return
    f = np.full(len(v), np.nan)
    sr, sc, sv = shadow.to_coo()
    if len(sv):   # (the same pattern; aligned by coordinates, whatever order each lists them in)
        key, skey = r.astype(np.int64) * result.ncols + c, sr.astype(np.int64) * result.ncols + sc
        order = np.argsort(skey, kind="stable")
        skey, sv = skey[order], sv[order]
        pos = np.searchsorted(skey, key)
        pos = np.minimum(pos, len(skey) - 1)
        hit = skey[pos] == key
        f[hit] = sv[pos[hit]]
    with np.errstate(invalid="ignore"):   # (an entry the shadow lacks had no terms: a full route's identity)
        bad = ~np.isnan(f) & ~(np.abs(v.astype(np.float64) - f) <= WRAPPED)
    if bad.any():
        k = int(np.argmax(bad))
        _raise(what, (int(r[k]), int(c[k]), float(f[k])))


def _as_float(M):
    return M.dup(dtype=gb.dtypes.FP64) if is_int(M) else M


def verify(node: Node, args: list, result, evaluate: Callable[[Node, list], Any], output: str | None = None,
           mag=maxabs) -> int:
    """Mode 'error' after ``node`` gave ``result`` from ``args``: clear it by the bound, or
    compare it with the same op in float64 (``evaluate(node, args)``: the evaluation rule).
    The bound on the result's entries (LIMIT when it was compared)."""
    if result is None or not is_int(result):
        return LIMIT
    got = clearing_bound(node, args, mag)
    if got < LIMIT:
        return got
    fnode = node.replace(type=node.type.with_(dtype=DType.float64))
    shadow = evaluate(fnode, [_as_float(a) if hasattr(a, "dtype") else a for a in args])
    compare(result, shadow, describe(node, output))
    return LIMIT


def clearing_bound(node: Node, args: list, mag=maxabs) -> int:
    """bound(), from the known magnitudes first and, when those do not clear it, the exact ones."""
    got = bound(node, args, mag)
    return bound(node, args) if got >= LIMIT and mag is not maxabs else got


class Magnitudes:
    """Bounds on the magnitudes of one process's int64 values, by object, so that a check need
    not reduce an operand whose bound is known (a loop's value, from its last step's check). A
    bound holds while its object lives unchanged: whoever writes into an object forgets it
    (the runtime: a reused output, an in-place update, an accumulation). Only a bound below
    LIMIT is kept."""

    __slots__ = ("_by",)

    def __init__(self) -> None:
        self._by: dict[int, tuple] = {}

    def get(self, M) -> int | None:
        got = self._by.get(id(M))
        return got[1] if got is not None and got[0]() is M else None

    def maxabs(self, M) -> int:
        got = self._by.get(id(M))
        return got[1] if got is not None and got[0]() is M else maxabs(M)

    def set(self, M, b: int) -> None:
        if b < LIMIT and isinstance(M, gb.Matrix):
            key, by = id(M), self._by
            # (dropped with M: an entry never outlives its object, so its id is not taken over)
            by[key] = (weakref.ref(M, lambda r: by.pop(key, None) if by.get(key, (None,))[0] is r else None), b)

    def forget(self, M) -> None:
        self._by.pop(id(M), None)


__all__ = ["LIMIT", "MODES", "IntegerOverflow", "Magnitudes", "Shadows", "bound", "check_mode",
           "clearing_bound", "combines", "compare", "describe",
           "int_product", "maxabs", "product_bound", "raise_wrapped", "risky", "shadow_of", "verify", "verify_combined"]
