"""An independent dense-numpy oracle for GraphBLAS semantics.

A matrix is ``Mat(values, present)``: two dense numpy arrays of the same 2-D shape. Where
``present`` is False the entry is *missing* and its slot in ``values`` means nothing (it is
kept at 0 only so arrays print nicely). A missing entry is not a zero: a product term exists
only where both factors are present, a monoid reduces only present terms, and a reduction
over no terms gives a missing entry, never the monoid's identity.

Nothing here imports dspla or python-graphblas. The type rules are written from the
documented contract (numpy promotion restricted to float64/float32/int64/bool; arithmetic
refuses bool; division is always floating; comparisons give bool; logical operators work on
bool), not read from the code under test.

Operators named ``any`` accept any present candidate: the oracle then returns, next to the
values, ``choices`` — for each output entry the tuple of acceptable values.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

F64, F32, I64, BOOL = (np.dtype("float64"), np.dtype("float32"), np.dtype("int64"), np.dtype("bool"))
DTYPES = {"float64": F64, "float32": F32, "int64": I64, "bool": BOOL}


class OracleDomainError(TypeError):
    """The operation does not apply to these dtypes (dspla must raise DomainMismatch)."""


class OracleOverflow(ValueError):
    """An int64 sum, difference or product whose true value leaves int64: numpy wraps it
    silently, while dspla raises IntegerOverflow by default, so no test expects the wrapped value."""


def _checked(values: np.ndarray, shadow: np.ndarray, what: str) -> np.ndarray:
    """``values`` (int64, numpy's wrapped arithmetic) unless the float64 ``shadow`` of the same
    arithmetic says one wrapped (OracleOverflow): a wrapped value is off by a multiple of 2^64,
    while the shadow's rounding moves it by far less than 2^62."""
    with np.errstate(all="ignore"):
        wrapped = ~(np.abs(values.astype(np.float64) - shadow) < 2.0 ** 62)
    if wrapped.any():
        raise OracleOverflow(f"int64 {what} leaves int64 (a true value of about {shadow[wrapped].flat[0]:.3g})")
    return values


@dataclass
class Mat:
    values: np.ndarray
    present: np.ndarray
    # for results of an ``any`` operator: an object array of tuples of acceptable values
    choices: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self):
        self.present = np.asarray(self.present, dtype=bool)
        assert self.values.shape == self.present.shape and self.values.ndim == 2
        self.values = np.where(self.present, self.values, np.zeros((), self.values.dtype))

    @property
    def shape(self):
        return self.values.shape

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    def __repr__(self) -> str:
        rows = []
        for i in range(self.shape[0]):
            rows.append(" ".join(f"{self.values[i, j]!s:>6}" if self.present[i, j] else "     ."
                                 for j in range(self.shape[1])))
        return f"Mat {self.shape} {self.dtype}\n" + "\n".join(rows)


def mat(values, present=None) -> Mat:
    values = np.asarray(values)
    if values.ndim == 1:
        values = values.reshape(-1, 1)
    if present is None:
        present = np.ones(values.shape, bool)
    return Mat(values, np.asarray(present, bool))


# ------------------------------------------------------------------------------- dtypes
def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """numpy promotion restricted to the four dtypes (int64 + float32 -> float64)."""
    r = np.result_type(a, b)
    if r == BOOL:
        return BOOL
    if r.kind in "iu":
        return I64
    if r == F32:
        return F32
    return F64


def _floating(d: np.dtype) -> np.dtype:
    return d if d in (F32, F64) else F64


def scalar_type(scalar, like: np.dtype) -> np.dtype:
    """Python scalars are weak (numpy 2, NEP 50): they take the array's dtype when it can
    hold their kind. bool -> bool; int -> like unless like is bool; float -> like if floating."""
    if isinstance(scalar, (bool, np.bool_)):
        return BOOL
    if isinstance(scalar, (int, np.integer)):
        return like if like != BOOL else I64
    return like if like in (F32, F64) else F64


# ---------------------------------------------------------------------- binary operators
ARITH = ("plus", "minus", "rminus", "times", "pow")
DIV = ("div", "rdiv")
SELECTING = ("first", "second", "any", "min", "max")
LOGICAL = ("land", "lor", "lxor")
COMPARE = ("eq", "ne", "gt", "ge", "lt", "le")
BINARY_OPS = ARITH + DIV + SELECTING + ("pair",) + LOGICAL + COMPARE


def binop_types(op: str, a: np.dtype, b: np.dtype) -> tuple[np.dtype, np.dtype]:
    """(compute dtype, result dtype) of a binary operator on operands of dtypes a, b."""
    if op in LOGICAL:
        return BOOL, BOOL
    c = promote(a, b)
    if op in COMPARE:
        return c, BOOL
    if op in DIV:
        c = _floating(c)
        return c, c
    if op in ARITH and c == BOOL:
        raise OracleDomainError(f"{op} on bool")
    return c, c


def _sat_int64(x: np.ndarray) -> np.ndarray:
    """float -> int64 as C GraphBLAS casts it: NaN -> 0, saturate, truncate toward zero."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape, dtype=np.int64)
    big = x >= 9.223372036854775807e18
    small = x <= -9.223372036854775808e18
    ok = ~(np.isnan(x) | big | small)
    out[ok] = np.trunc(x[ok]).astype(np.int64)
    out[big] = np.iinfo(np.int64).max
    out[small] = np.iinfo(np.int64).min
    return out


def cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Typecast values the way C does (float -> bool is x != 0; float -> int truncates)."""
    x = np.asarray(x)
    if x.dtype == dtype:
        return x
    if dtype == BOOL:
        return x != 0
    if dtype == I64 and x.dtype.kind == "f":
        return _sat_int64(x)
    return x.astype(dtype)


def _pow(a, b, c):
    if c == I64:  # integer pow is computed in double and cast back (saturating)
        af, bf = a.astype(np.float64), b.astype(np.float64)
        r = np.power(af, bf)
        r = np.where(bf == 0, 1.0, r)
        return _sat_int64(r)
    r = np.power(a, b)
    return np.where(b == 0, np.ones((), c), r)


_ARITH = {"plus": np.add, "minus": np.subtract, "rminus": lambda a, b: b - a, "times": np.multiply}


def binop(op: str, a: np.ndarray, b: np.ndarray, compute: np.dtype, checked: bool = True) -> np.ndarray:
    """f(a, b) on arrays already cast to the compute dtype. For 'any' returns a's value (the
    caller records both as acceptable). ``checked``: an int64 value that wrapped raises
    OracleOverflow (a product's terms are not: only the entry they sum to counts)."""
    with np.errstate(all="ignore"):
        arith = _ARITH.get(op)
        if arith is not None:
            r = arith(a, b)
            if compute != I64 or not checked:
                return r
            # (the same arithmetic in float64 beside it, to see a value numpy wrapped)
            return _checked(r, arith(a.astype(np.float64), b.astype(np.float64)), op)
        if op == "pow":
            return _pow(a, b, compute)
        if op == "div":
            return a / b
        if op == "rdiv":
            return b / a
        if op in ("first", "any"):
            return np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)).copy()
        if op == "second":
            return np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)).copy()
        if op == "min":
            return np.fmin(a, b) if compute.kind == "f" else np.minimum(a, b)
        if op == "max":
            return np.fmax(a, b) if compute.kind == "f" else np.maximum(a, b)
        if op == "pair":
            return np.ones(np.broadcast_shapes(a.shape, b.shape), compute)
        if op == "land":
            return a & b
        if op == "lor":
            return a | b
        if op == "lxor":
            return a ^ b
        if op in COMPARE:
            return {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
                    "lt": np.less, "le": np.less_equal}[op](a, b)
    raise KeyError(op)


# ------------------------------------------------------------------------------ monoids
MONOIDS = ("plus", "times", "min", "max", "any", "lor", "land", "lxor")
BOOL_MONOIDS = ("lor", "land", "lxor")
NUMERIC_MONOIDS = ("plus", "times")


def monoid_type(m: str, d: np.dtype) -> np.dtype:
    if m in BOOL_MONOIDS:
        return BOOL
    if m in NUMERIC_MONOIDS and d == BOOL:
        raise OracleDomainError(f"monoid {m} on bool")
    return d


def _identity(m: str, d: np.dtype):
    """The start of a reduction: an element that leaves every term as it is, bit for bit (the
    present terms alone are reduced). On floats that is -0.0 for plus (0.0 + -0.0 is 0.0, and a
    sum of one -0.0 is -0.0, which a value mask tells from 0.0) and NaN for min and max (below)."""
    if m == "plus" and d.kind == "f":
        return np.array(-0.0, d)[()]
    if m in ("plus", "lor", "lxor"):
        return np.zeros((), d)[()]
    if m in ("times", "land"):
        return np.ones((), d)[()]
    # min / max on floats ignore a NaN (fmin / fmax): a start of NaN is then neutral too, and keeps
    # a reduction whose every term is NaN at NaN (an infinite start would turn it into +-inf: the
    # present terms alone are reduced, there is no identity term)
    if m == "min":
        return np.nan if d.kind == "f" else (np.iinfo(np.int64).max if d == I64 else True)
    if m == "max":
        return np.nan if d.kind == "f" else (np.iinfo(np.int64).min if d == I64 else False)
    raise KeyError(m)


def monoid_reduce(m: str, terms: np.ndarray, where: np.ndarray, axis: int, checked: bool = True):
    """Reduce ``terms`` along ``axis`` over the positions where ``where`` holds.
    Returns (values, present, choices-or-None); ``checked`` as binop's."""
    d = terms.dtype
    present = where.any(axis=axis)
    if m == "any":
        moved_t, moved_w = np.moveaxis(terms, axis, -1), np.moveaxis(where, axis, -1)
        choices = np.empty(present.shape, dtype=object)
        vals = np.zeros(present.shape, d)
        for idx in np.ndindex(present.shape):
            cands = tuple(moved_t[idx][moved_w[idx]].tolist())
            choices[idx] = cands
            if cands:
                vals[idx] = cands[0]
        return vals, present, choices
    ufunc = {"plus": np.add, "times": np.multiply, "lor": np.logical_or, "land": np.logical_and,
             "lxor": np.logical_xor}.get(m)
    if m == "min":
        ufunc = np.fmin if d.kind == "f" else np.minimum
    if m == "max":
        ufunc = np.fmax if d.kind == "f" else np.maximum
    with np.errstate(all="ignore"):
        vals = ufunc.reduce(terms, axis=axis, where=where, initial=_identity(m, d))
        if checked and m in NUMERIC_MONOIDS and d == I64:
            shadow = ufunc.reduce(terms.astype(np.float64), axis=axis, where=where, initial=float(_identity(m, d)))
            vals = _checked(np.asarray(vals), np.asarray(shadow), f"{m} reduction")
    return np.asarray(vals).astype(d), present, None


# ---------------------------------------------------------------------------- semirings
# name -> (monoid, multiply); the named GraphBLAS-style semirings the product promises
SEMIRINGS = {name: tuple(name.split("_", 1)) for name in (
    "plus_times", "plus_second", "plus_first", "plus_pair", "plus_min", "min_plus", "max_plus", "min_times",
    "max_times", "min_second", "max_second", "min_first", "max_first", "min_max", "max_min", "lor_land",
    "land_lor", "any_pair", "any_second", "any_first", "lxor_land")}


def semiring_types(monoid: str, mult: str, a: np.dtype, b: np.dtype) -> tuple[np.dtype, np.dtype]:
    """(dtype the operands are cast to, result dtype). The operands take the multiply's input
    domain: a comparison compares in the promoted dtype even under a bool monoid (GraphBLAS's
    LOR_EQ_FP64 compares doubles); a logical multiply works on bools; an arithmetic multiply
    under a bool monoid has no numeric meaning and runs on bools."""
    if mult in LOGICAL or (monoid in BOOL_MONOIDS and mult not in COMPARE):
        return BOOL, BOOL
    compute, out = binop_types(mult, a, b)
    if out == BOOL and monoid in NUMERIC_MONOIDS:
        raise OracleDomainError(f"{monoid}_{mult} on bool")
    return compute, out


def mxm(A: Mat, B: Mat, monoid: str, mult: str, holds: np.ndarray | None = None) -> Mat:
    """C(i,j) = monoid over k with A(i,k) and B(k,j) both present of mult(A(i,k), B(k,j));
    missing when there is no such k. ``holds``: only where it holds (a mask's ``holds``: C<M> =
    A ⊕.⊗ B never makes the other entries, so their values cannot overflow either)."""
    assert A.shape[1] == B.shape[0]
    compute, out = semiring_types(monoid, mult, A.dtype, B.dtype)
    where = A.present[:, :, None] & B.present[None, :, :]
    if holds is not None:
        where = where & holds[:, None, :]
    a = np.where(where, cast(A.values, compute)[:, :, None], np.zeros((), compute))
    b = np.where(where, cast(B.values, compute)[None, :, :], np.zeros((), compute))
    terms = cast(binop(mult, a, b, compute, checked=False), out)
    vals, present, choices = monoid_reduce(monoid, terms, where, axis=1, checked=False)
    if out == I64 and monoid != "any" and (monoid in NUMERIC_MONOIDS or mult in _ARITH):
        # the entry's true value: the same product in float64 (terms that wrap may sum into range)
        ft = binop(mult, a.astype(np.float64), b.astype(np.float64), F64) if mult in _ARITH else \
            terms.astype(np.float64)
        fvals = monoid_reduce(monoid, ft, where, axis=1)[0]
        _checked(np.where(present, vals, 0), np.where(present, fvals, 0.0), f"{monoid}_{mult} product")
    return Mat(vals, present, choices)


# ------------------------------------------------------------------------- element-wise
def broadcast_shape(sa, sb):
    shape = []
    for da, db in zip(sa, sb):
        if da == db or db == 1:
            shape.append(da)
        elif da == 1:
            shape.append(db)
        else:
            raise ValueError(f"shapes {sa} and {sb} do not broadcast")
    return tuple(shape)


def _bcast(X: Mat, shape) -> tuple[np.ndarray, np.ndarray]:
    """An n x 1, 1 x m or 1 x 1 operand repeated along its unit axes: a present vector entry
    is present across its whole row/column; a missing one is missing there."""
    return np.broadcast_to(X.values, shape), np.broadcast_to(X.present, shape)


def ewise(A: Mat, B: Mat, op: str, union: bool) -> Mat:
    """eWiseAdd (union) / eWiseMult (intersection). Where both are present: op(a, b); in a
    union, an entry present in one operand only passes through unchanged (typecast to the
    result dtype)."""
    shape = broadcast_shape(A.shape, B.shape)
    compute, out = binop_types(op, A.dtype, B.dtype)
    av, ap = _bcast(A, shape)
    bv, bp = _bcast(B, shape)
    a, b = cast(av, compute), cast(bv, compute)
    both = ap & bp
    f = cast(binop(op, a, b, compute), out)
    if union:
        vals = np.where(both, f, np.where(ap, cast(a, out), cast(b, out)))
        present = ap | bp
    else:
        vals, present = f, both
    choices = None
    if op == "any":
        choices = np.empty(shape, dtype=object)
        for i, j in np.ndindex(shape):
            if both[i, j]:
                choices[i, j] = (cast(a[i, j], out).item(), cast(b[i, j], out).item())
            elif present[i, j]:
                choices[i, j] = (vals[i, j].item(),)
    return Mat(np.asarray(vals, out), present, choices)


def ewise_add(A, B, op="plus"):
    return ewise(A, B, op, union=True)


def ewise_mult(A, B, op="times"):
    return ewise(A, B, op, union=False)


def subtract(A: Mat, B: Mat) -> Mat:
    """dspla's ``X - Y``: X + (-Y) over the union, so a lone Y entry becomes -Y."""
    return ewise_add(A, apply(B, "neg"), "plus")


# -------------------------------------------------------------------------------- apply
def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# name -> (result rule, function on an array of the compute dtype).
# result rule: 'numeric' keeps the dtype and refuses bool; 'float' computes in float64 for
# non-floating inputs; 'same' keeps the dtype (bool included).
UNARY = {
    "relu": ("numeric", lambda x: np.maximum(x, np.zeros((), x.dtype))),
    "relu_grad": ("numeric", lambda x: (x > 0).astype(x.dtype)),
    "step": ("numeric", lambda x: (x > 0).astype(x.dtype)),
    "sigmoid": ("float", _sigmoid),
    "tanh": ("float", np.tanh),
    "exp": ("float", np.exp),
    "log": ("float", np.log),
    "log1p": ("float", np.log1p),
    "expm1": ("float", np.expm1),
    "sqrt": ("float", np.sqrt),
    "minv": ("float", lambda x: np.ones((), x.dtype) / x),
    "abs": ("numeric", np.abs),
    "neg": ("numeric", np.negative),
    "sign": ("numeric", np.sign),
    "square": ("numeric", lambda x: x * x),
    "one": ("same", lambda x: np.ones(x.shape, x.dtype)),
    "identity": ("same", lambda x: x.copy()),
    "lnot": ("same", lambda x: cast(x == 0, x.dtype)),
}


def unary_types(op: str, d: np.dtype) -> np.dtype:
    rule = UNARY[op][0]
    if rule == "float":
        return _floating(d)
    if rule == "numeric" and d == BOOL:
        raise OracleDomainError(f"{op} on bool")
    return d


def apply(X: Mat, op: str) -> Mat:
    d = unary_types(op, X.dtype)
    with np.errstate(all="ignore"):
        vals = UNARY[op][1](cast(X.values, d))
        if d == I64 and op in ("neg", "abs", "square"):   # (-(-2^63) and 2^32 squared wrap)
            vals = _checked(np.asarray(vals), UNARY[op][1](X.values.astype(np.float64)), op)
    return Mat(np.asarray(vals, d), X.present.copy())


def apply_bind(X: Mat, op: str, scalar, side: str) -> Mat:
    """A binary operator with a bound Python scalar (``side`` 'left': op(s, x); 'right':
    op(x, s)) applied to the present entries only."""
    s = scalar_type(scalar, X.dtype)
    a, b = (s, X.dtype) if side == "left" else (X.dtype, s)
    compute, out = binop_types(op, a, b)
    x = cast(X.values, compute)
    sv = cast(np.full(X.shape, scalar), compute)
    vals = binop(op, sv, x, compute) if side == "left" else binop(op, x, sv, compute)
    return Mat(cast(vals, out), X.present.copy())


# ---------------------------------------------------------------------- structure ops
def transpose(X: Mat) -> Mat:
    return Mat(X.values.T.copy(), X.present.T.copy())


def reduce(X: Mat, monoid: str, axis: str) -> Mat:
    """'rows' -> n x 1, 'cols' -> 1 x m, 'all' -> 1 x 1; a row/column/matrix without entries
    gives a missing entry."""
    d = monoid_type(monoid, X.dtype)
    v = cast(X.values, d)
    if axis == "rows":
        vals, present, ch = monoid_reduce(monoid, v, X.present, axis=1)
        return Mat(vals.reshape(-1, 1), present.reshape(-1, 1), None if ch is None else ch.reshape(-1, 1))
    if axis == "cols":
        vals, present, ch = monoid_reduce(monoid, v, X.present, axis=0)
        return Mat(vals.reshape(1, -1), present.reshape(1, -1), None if ch is None else ch.reshape(1, -1))
    vals, present, ch = monoid_reduce(monoid, v.reshape(1, -1), X.present.reshape(1, -1), axis=1)
    return Mat(vals.reshape(1, 1), present.reshape(1, 1), None if ch is None else ch.reshape(1, 1))


def nvals(X: Mat) -> Mat:
    """The number of present entries: a present 1 x 1 int64 (0 when X is empty)."""
    return mat(np.array([[int(X.present.sum())]], dtype=np.int64))


def mask_value_holds(values: np.ndarray) -> np.ndarray:
    """Where a value mask holds: the value cast to bool, as the C API says (x != 0: -0.0 does
    not hold, NaN does)."""
    return cast(values, BOOL)


def holds(M: Mat, complement=False, structure=False) -> np.ndarray:
    """Where the mask M holds: M present and (structure or M's value is nonzero), or not (complement)."""
    got = M.present if structure else (M.present & mask_value_holds(M.values))
    return ~got if complement else got


def mask(X: Mat, M: Mat, complement=False, structure=False) -> Mat:
    """Keep X where M holds (``holds``)."""
    assert X.shape == M.shape
    return Mat(X.values.copy(), X.present & holds(M, complement, structure))


def select(X: Mat, op: str, thunk=0) -> Mat:
    """Keep present entries where the predicate holds. Value predicates compare the entry
    with the thunk mathematically (numpy 2 comparison of the array with a Python scalar);
    index predicates look at j - i relative to the diagonal offset k = thunk."""
    n, m = X.shape
    i, j = np.indices((n, m))
    k = int(thunk)
    if op == "tril":
        keep = j - i <= k
    elif op == "triu":
        keep = j - i >= k
    elif op == "diag":
        keep = j - i == k
    elif op == "offdiag":
        keep = j - i != k
    elif op == "nonzero":
        keep = X.values != 0
    else:
        op = {">": "gt", ">=": "ge", "<": "lt", "<=": "le", "==": "eq", "!=": "ne"}.get(op, op)
        if X.dtype == BOOL and not isinstance(thunk, (bool, np.bool_)):
            raise OracleDomainError("comparing bool values with a number")
        keep = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
                "lt": np.less, "le": np.less_equal}[op](X.values, thunk)
    return Mat(X.values.copy(), X.present & keep)


def extract(X: Mat, rows, cols) -> Mat:
    """C(i, j) = X(I(i), J(j)) (I, J: index lists, repeats allowed; None: every index)."""
    I = np.arange(X.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
    J = np.arange(X.shape[1]) if cols is None else np.asarray(cols, dtype=np.int64)
    return Mat(X.values[np.ix_(I, J)], X.present[np.ix_(I, J)])


def kronecker(A: Mat, B: Mat, op: str) -> Mat:
    """C(i mb + k, j nb + l) = op(A(i, j), B(k, l)) where both are present."""
    compute, out = binop_types(op, A.dtype, B.dtype)
    (ma, na), (mb, nb) = A.shape, B.shape
    with np.errstate(all="ignore"):
        vals = cast(binop(op, cast(A.values, compute)[:, None, :, None], cast(B.values, compute)[None, :, None, :],
                          compute), out)
    present = A.present[:, None, :, None] & B.present[None, :, None, :]
    return Mat(vals.reshape(ma * mb, na * nb), present.reshape(ma * mb, na * nb))


def ewise_union(A: Mat, B: Mat, op: str, left, right) -> Mat:
    """GxB_eWiseUnion: op(a, b) where both are present; op(a, right) where A alone; op(left, b)
    where B alone; missing where neither."""
    assert A.shape == B.shape
    compute, out = binop_types(op, A.dtype, B.dtype)
    a = np.where(A.present, cast(A.values, compute), cast(np.asarray(left), compute))
    b = np.where(B.present, cast(B.values, compute), cast(np.asarray(right), compute))
    with np.errstate(all="ignore"):
        vals = cast(binop(op, a, b, compute), out)
    return Mat(vals, A.present | B.present)


def apply_index(X: Mat, op: str, thunk: int) -> Mat:
    """rowindex i + thunk, colindex j + thunk, diagindex j - i + thunk (int64) on X's entries."""
    i, j = np.indices(X.shape)
    vals = {"rowindex": i, "colindex": j, "diagindex": j - i}[op] + thunk
    return Mat(vals.astype(np.int64), X.present.copy())


def update(C: Mat, T: Mat, accum: str | None, M: Mat | None, complement=False, structure=False,
           replace=False) -> Mat:
    """C<M, replace> accum= T: Z = T, or C accum T over their union; where the mask holds C
    becomes Z (an entry Z lacks is deleted), elsewhere C stays (deleted with replace). Z is
    typecast to C's dtype."""
    Z = T if accum is None else ewise(C, T, accum, union=True)
    zv = cast(Z.values, C.dtype)
    if M is None:
        holds = np.ones(C.shape, bool)
    else:
        holds = M.present if structure else M.present & mask_value_holds(M.values)
        holds = ~holds if complement else holds
    return Mat(np.where(holds, zv, C.values), np.where(holds, Z.present, C.present & (not replace)))


def assign_scalar(C: Mat, value, rows, cols, accum: str | None) -> Mat:
    """C(I, J) accum= s (I, J without repeats): every entry of the region becomes s, or
    accum(c, s) where C has one; outside the region C stays."""
    region = np.zeros(C.shape, bool)
    region[np.ix_(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))] = True
    S = Mat(np.full(C.shape, value, C.dtype), region)
    return update(C, S, accum, Mat(region.copy(), region.copy()), structure=True)


def cast_mat(X: Mat, dtype) -> Mat:
    return Mat(cast(X.values, np.dtype(dtype)), X.present.copy())


def eye(n: int, dtype="float64") -> Mat:
    return Mat(np.eye(n, dtype=np.dtype(dtype)), np.eye(n, dtype=bool))


# ------------------------------------------------------------------ row-wise composites
def _rowwise_shifted(X: Mat, name: str, f) -> Mat:
    """f(y) on each row's present entries, y = x - max(x) in the result's float type; a row's
    missing entries stay missing, a row with no entries stays empty."""
    if X.dtype == BOOL:
        raise OracleDomainError(f"{name} of bool")
    out_d = _floating(X.dtype)
    vals = np.zeros(X.shape, out_d)
    with np.errstate(all="ignore"):
        for i in range(X.shape[0]):
            p = X.present[i]
            if not p.any():
                continue
            x = X.values[i, p]
            vals[i, p] = f(x.astype(out_d) - x.max().astype(out_d))   # (integers shifted in floats: no wrap)
    return Mat(vals, X.present.copy())


def softmax(X: Mat) -> Mat:
    """Row-wise softmax over the present entries of each row."""
    return _rowwise_shifted(X, "softmax", lambda y: np.exp(y) / np.exp(y).sum())


def log_softmax(X: Mat) -> Mat:
    return _rowwise_shifted(X, "log_softmax", lambda y: y - np.log(np.exp(y).sum()))


# ------------------------------------------------------------------------- comparison
def tolerance(dtype: np.dtype) -> float:
    return 1e-5 if dtype == F32 else 1e-12


def compare(got_present: np.ndarray, got_rows, got_cols, got_values, got_dtype, exp: Mat) -> list[str]:
    """Differences between a result (its present pattern and COO values) and the expectation,
    as readable lines; empty when they agree exactly (floats: to a relative tolerance)."""
    problems = []
    if got_present.shape != exp.shape:
        return [f"shape {got_present.shape} != expected {exp.shape}"]
    if np.dtype(got_dtype) != exp.dtype:
        problems.append(f"dtype {np.dtype(got_dtype)} != expected {exp.dtype}")
    extra = got_present & ~exp.present
    lost = exp.present & ~got_present
    if extra.any():
        problems.append(f"entries present but expected missing at {list(zip(*np.nonzero(extra)))[:8]}")
    if lost.any():
        problems.append(f"entries missing but expected present at {list(zip(*np.nonzero(lost)))[:8]}")
    if problems:
        return problems
    rtol = tolerance(exp.dtype)
    for r, c, v in zip(got_rows.tolist(), got_cols.tolist(), np.asarray(got_values).tolist()):
        want = exp.choices[r, c] if exp.choices is not None else (exp.values[r, c].item(),)
        if not any(_same(v, w, rtol) for w in want):
            problems.append(f"value at ({r}, {c}) is {v!r}, expected {want[0]!r}" if len(want) == 1
                            else f"value at ({r}, {c}) is {v!r}, expected one of {want!r}")
            if len(problems) > 8:
                break
    return problems


def _same(v, w, rtol) -> bool:
    """Values agree: exactly for ints and bools (the dtype is checked separately), to a
    relative tolerance for floats, with NaN equal to NaN and infinities equal by sign."""
    if isinstance(v, float) or isinstance(w, float):
        v, w = float(v), float(w)
        if math.isnan(v) or math.isnan(w):
            return math.isnan(v) and math.isnan(w)
        if math.isinf(v) or math.isinf(w):
            return v == w
        return abs(v - w) <= rtol * max(abs(v), abs(w))
    return v == w
