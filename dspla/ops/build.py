"""build: a matrix from (row, column, value) triples held in three vectors (attributes: the shape,
dup_op, a binary operator combining repeated positions, or None: repeats are an error). Python:
``dp.build(rows, cols, values, shape, dup_op=)``; files: ``build(I, J, X, nrows, ncols, dup_op)``.
A triple is used where all three vectors have an entry. Distributed: the triples are gathered
(an exchange explain shows and the stats count) and every rank keeps its part of the result."""
from __future__ import annotations

import numpy as np

from .. import algebra
from .._types import BinaryOpLike, ShapeLike
from ..errors import DimensionMismatch, DomainMismatch, InputError, NoGradient, Span
from ..instr.layout import REP
from ..ir.types import Dim, Kind, Type, concrete
from .define import BINARY, DIM, EXPR, NOTHING, Expr, define, make, named, node_of, span_or_caller, spelling, touched
from .define.lazy import kernel, library
from .input import shape_of

gb = library("graphblas")
gbops = kernel("gbops")
buffers = kernel("buffers")


BUILD = define("build", attrs=("nrows", "ncols", "dup_op"))


@BUILD.type_rule
def _type(args, attrs, given, where, span):
    i, j, x = args
    for v in args:
        if v.type.ncols != 1:
            raise DimensionMismatch(f"{where}: build takes three vectors, got {v.label} of shape "
                                    f"{list(v.type.shape)}", span)
    if not (i.type.nrows == j.type.nrows == x.type.nrows):
        raise DimensionMismatch(f"{where}: the rows, columns and values have different lengths", span)
    for v in (i, j):
        if v.type.dtype.is_float or v.type.dtype.value == "bool":
            raise DomainMismatch(f"{where}: indices are integers, {v.label} is {v.type.dtype}", span)
    return Type(Kind.sparse, (attrs["nrows"], attrs["ncols"]), x.type.dtype)


@BUILD.eval_rule()
def _evaluate(node, args, env):
    i, j, x = args[:3]   # (the runtime passes the result's sizes after them)
    nr, nc = args[3:5] if len(args) == 5 else (concrete(d, env.dims, "build") for d in node.type.shape)
    length = i.nrows
    dup = node.attr("dup_op")
    dt = node.type.dtype
    full = length and i.nvals == j.nvals == x.nvals == length
    # (a column whose repeats combine by min / max: numpy's scatter, below)
    ufunc = _SCATTER.get(dup.name) if nc == 1 and dup is not None and dup.func is None else None
    if full and ufunc is not None:
        return _scatter_full(i, j, x, nr, ufunc, dt)
    if full:   # their values, in order (lent and copied)
        rows, cols, vals = (_values(v) for v in (i, j, x))
    else:   # the positions every vector has, by counting (no sort: a vector's rows are unique)
        (ri, _, vi), (rj, _, vj), (rx, _, vx) = i.to_coo(), j.to_coo(), x.to_coo()
        seen = np.zeros(length, dtype=np.int8)
        for r in (ri, rj, rx):
            seen[r] += 1
        both = np.flatnonzero(seen == 3)
        rows, cols, vals = (v[np.searchsorted(r, both)] for r, v in ((ri, vi), (rj, vj), (rx, vx)))
    rows, cols = rows.astype(np.int64, copy=False), cols.astype(np.int64, copy=False)
    _inside(rows, cols, nr, nc)
    if ufunc is not None:
        return _scatter(rows, vals, nr, ufunc, dt)
    try:
        return gb.Matrix.from_coo(rows, cols, vals, nrows=nr, ncols=nc, dtype=dt.gb,
                                  dup_op=None if dup is None else gbops.binary(dup, dt))
    except (ValueError, gb.exceptions.InvalidValue):
        raise InputError("build: a position is given more than once and no dup_op says how to combine them") \
            from None


def _values(M) -> np.ndarray:
    with buffers.values_of(M) as v:
        return v[:, 0].copy()


# a column built with one of these: numpy's unbuffered ufunc.at on a dense column (GraphBLAS's build
# sorts the triples: 14 against 0.2 ms for 82K of them, FastSV's hooking)
_SCATTER = {"min": np.minimum, "max": np.maximum}


def _inside(rows: np.ndarray, cols: np.ndarray, nr: int, nc: int):
    if rows.size and (rows.min() < 0 or cols.min() < 0 or rows.max() >= nr or cols.max() >= nc):
        raise InputError(f"build: an index is outside the {nr}x{nc} result")


def _scatter_full(i, j, x, nr: int, ufunc, dt):
    """_scatter on full vectors, read where they lie (each lent once: i may be x)."""
    with buffers.values_of(j) as cols:
        with buffers.values_of(i) as rows:
            _inside(rows, cols, nr, 1)
            if x is i:
                return _scatter(rows[:, 0], rows[:, 0], nr, ufunc, dt)
            with buffers.values_of(x) as vals:
                return _scatter(rows[:, 0], vals[:, 0], nr, ufunc, dt)


def _scatter(rows: np.ndarray, vals: np.ndarray, nr: int, ufunc, dt):
    """The nr x 1 column of ``vals`` at ``rows``, repeats combined by ``ufunc`` (idempotent: each
    position starts from one of its own values)."""
    vals = vals.astype(dt.np, copy=False)
    out = np.zeros(nr, dtype=dt.np)
    present = np.zeros(nr, dtype=bool)
    out[rows] = vals
    present[rows] = True
    ufunc.at(out, rows, vals)
    return buffers.from_values_presence(out.reshape(-1, 1), present.reshape(-1, 1), dt)


@BUILD.fact_rule
def _facts(n, a):
    return NOTHING


@BUILD.lower_rule
def _lower(pl, n):
    sizes = tuple(pl.const_all(lambda r, d=d: pl.concrete(d)) for d in n.type.shape)
    rep = pl.slot()   # the triples gathered (an exchange explain shows), the result replicated
    pl.emit_local(rep, n, tuple(pl.value(a, REP) for a in n.args) + sizes, (REP,) * 3, REP)
    pl.set(n, rep, REP)
    if pl.layout(n) != REP:
        pl.set(n, pl.value(n, pl.layout(n)), pl.layout(n))


@BUILD.work_rule
def _work(n, args, out):
    return touched(args, out)


@BUILD.vjp_rule()
def _vjp(n, g, needs, b):
    raise NoGradient("build has no gradient rule")


@spelling(file=(("rows", EXPR), ("cols", EXPR), ("values", EXPR), ("nrows", DIM), ("ncols", DIM),
                ("dup_op", BINARY)))
def build(rows: Expr, cols: Expr, values: Expr, nrows: Dim | tuple[Dim, Dim], ncols: Dim | None = None, *,
          dup_op: BinaryOpLike | None = None,
          span: Span | None = None) -> Expr:
    """The matrix with ``values[k]`` at (``rows[k]``, ``cols[k]``), of shape (nrows, ncols) (or
    ``build(I, J, X, (nrows, ncols))``); ``dup_op`` combines repeated positions."""
    span = span_or_caller(span)
    shape: ShapeLike = nrows if ncols is None else (nrows, ncols)
    for v, what in ((rows, "rows"), (cols, "cols"), (values, "values")):
        if not isinstance(v, Expr):
            raise TypeError(f"build: {what} is a vector of the program (dp.vector(...), or computed), got "
                            f"{type(v).__name__}: pass data as an input")
    nr, nc = shape_of(shape, "build")
    dup = None if dup_op is None else named(algebra.get_binary, dup_op, span)
    return Expr(make(BUILD.op, (node_of(rows), node_of(cols), node_of(values)),
                     (("nrows", nr), ("ncols", nc), ("dup_op", dup)), span=span))
