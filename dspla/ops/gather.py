"""gather: a vector's entries at the positions another vector holds as values, C[i] = x[idx[i]]
(no attributes). C has idx's length; C[i] is present where idx[i] is and x holds an entry at
idx[i]. GraphBLAS's extract with its index list held in a vector: FastSV's grandparents f[f].
Python: ``dp.gather(x, idx)``; files: the same. Distributed by rows: each rank asks the owners of
the positions its part of idx holds for their entries (FetchGather: positions out, entries back),
and no rank holds either vector whole.
"""
from __future__ import annotations

import numpy as np

from ..errors import DimensionMismatch, DomainMismatch, InputError, NoGradient, Span
from ..instr import FetchGather
from ..instr.layout import canonical
from ..ir.types import Kind, Type
from .define import EXPR, Expr, Facts, define, make, node_of, span_or_caller, spelling, touched
from .define.lazy import kernel, library

gb = library("graphblas")
buffers = kernel("buffers")
lend = kernel("lend")
gbops = kernel("gbops")

GATHER = define("gather")


@GATHER.type_rule
def _type(args, attrs, given, where, span):
    x, idx = args
    for v in args:
        if v.type.ncols != 1:
            raise DimensionMismatch(f"{where}: gather takes two vectors (n x 1), got {v.label} of shape "
                                    f"{list(v.type.shape)}", span)
    if idx.type.dtype.is_float or idx.type.dtype.value == "bool":
        raise DomainMismatch(f"{where}: the positions are integers, {idx.label} is {idx.type.dtype}", span)
    kind = Kind.dense if x.type.kind is Kind.dense and idx.type.kind is Kind.dense else Kind.sparse
    return Type(kind, (idx.type.nrows, 1), x.type.dtype, form=idx.type.form)


@GATHER.eval_rule(into=True)
def _evaluate(node, args, env, into=None):
    x, idx = args
    n = x.nrows
    if x.nvals == n and idx.nvals == idx.nrows:   # both full: their values arrays, lent (no copies)
        with buffers.values_of(idx) as at:
            _check(at, n)
            if _writable(into, x, idx):   # (into the last result, its array where it lies)
                with lend.full(into) as out:
                    if out is not None:
                        _take(x, idx, at, out)
                        return into
            got = np.empty((idx.nrows, 1), dtype=x.dtype.np_type)
            _take(x, idx, at, got)
        return buffers.from_values(got, gbops.dtype_of(x))
    rows, _, at = idx.to_coo()
    at = at.astype(np.int64, copy=False)
    _check(at, n)
    xr, _, xv = x.to_coo()
    if xr.size == n:   # (x full: its values in order)
        keep, vals = slice(None), xv[at]
    else:
        where = np.full(n, -1, dtype=np.int64)
        where[xr] = np.arange(xr.size)
        k = where[at]
        keep = k >= 0
        vals = xv[k[keep]]
    rows = rows[keep]
    return gb.Matrix.from_coo(rows, np.zeros(rows.size, dtype=np.int64), vals, nrows=idx.nrows, ncols=1,
                              dtype=x.dtype)


def _writable(into, x, idx) -> bool:
    """Whether the pool's free matrix ``into`` can take C's values: a column of x's dtype and
    idx's length, neither operand (a fresh 656 KB array for soc-Slashdot0902 took 0.25 ms of
    page faults; writing the last one again, none)."""
    return into is not None and into is not x and into is not idx and into._ncols == 1 and \
        into._nrows == idx.nrows and into.dtype == x.dtype


def _take(x, idx, at: np.ndarray, out: np.ndarray):
    """out[:, 0] = x's values at the positions ``at`` (idx's values, lent) holds."""
    if x is idx:   # (f[f]: one matrix, lent once)
        np.take(at[:, 0], at[:, 0], out=out[:, 0], mode="clip")   # (checked: no buffering)
        return
    with buffers.values_of(x) as xv:
        np.take(xv[:, 0], at[:, 0], out=out[:, 0], mode="clip")


def outside(at: np.ndarray, n: int) -> int | None:
    """The first of the positions ``at`` outside 0..n-1, or None."""
    if at.size and (at.min() < 0 or at.max() >= n):
        return int(at[(at < 0) | (at >= n)].reshape(-1)[0])
    return None


def outside_error(bad: int, n: int) -> InputError:
    return InputError(f"gather: position {bad} is outside the vector's {n} entries")


def _check(at: np.ndarray, n: int):
    bad = outside(at, n)
    if bad is not None:
        raise outside_error(bad, n)


@GATHER.fact_rule
def _facts(n, a):
    return Facts(a[0].full and a[1].full)   # (a position outside x is an error, not a missing entry)


@GATHER.lower_rule
def _lower(pl, n):
    """Both vectors distributed by rows: each rank asks the owners of the positions its part of
    idx holds (FetchGather), C laid out as idx; otherwise gathered and computed everywhere."""
    x, idx = n.args
    xl, il = canonical(x.type, pl.dims), canonical(idx.type, pl.dims)
    if pl.P == 1 or xl.kind != "row" or il.kind != "row":
        pl.via_rep(n)
        return
    part, m = pl.dims[xl.dim], pl.concrete(idx.type.nrows)
    out = pl.slot()
    # (at most every position asked elsewhere and every one answered: idx's whole length each way)
    pl.emit(FetchGather(out, pl.value(x, xl), pl.value(idx, il), part.parts, part.pos,
                        presence=not pl.facts[id(x)].full, expect=(m, 2 * (pl.P - 1), m, 2 * (pl.P - 1))))
    pl.set(n, out, il)


@GATHER.work_rule
def _work(n, args, out):
    return touched(args, out)


@GATHER.vjp_rule()
def _vjp(n, g, needs, b):
    raise NoGradient("gather has no gradient rule")


@spelling(file=(("x", EXPR), ("idx", EXPR)))
def gather(x: Expr, idx: Expr, *, span: Span | None = None) -> Expr:
    """The entries of the vector x at the positions idx holds as values: ``C[i] = x[idx[i]]``, of
    idx's length; missing where idx[i] is or x has no entry there (a position outside x is an
    error). Both are vectors of the program (n x 1)."""
    span = span_or_caller(span)
    for v, what in ((x, "x"), (idx, "idx")):
        if not isinstance(v, Expr):
            raise TypeError(f"gather: {what} is a vector of the program (an input or computed), got "
                            f"{type(v).__name__}: pass data as an input")
    return Expr(make(GATHER.op, (node_of(x), node_of(idx)), (), span=span))
