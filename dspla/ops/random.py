"""random: a uniform number in [0, 1) at each present entry of x (arguments: x and a 1 x 1 integer
seed), float64. The number depends only on (seed, global row, global column) — the counter-based
hash dropout_mask draws with — so P = 1, 2, 4 processes draw the same ones, and a new seed (seed +
iteration in a loop) draws new ones. What randomised algorithms such as Luby's maximal independent
set need. Python: ``dp.random(x, seed)``; files: ``random(x, seed)``."""
from __future__ import annotations

import numpy as np

from ..errors import DimensionMismatch, DomainMismatch, Span
from ..ir.types import DType
from .define import EXPR, Expr, define, make, node_of, span_or_caller, spelling, touched
from .define.lazy import kernel, library
from .dropout import entries, hash53

gb = library("graphblas")
_item = kernel("item")

RANDOM = define("random")


@RANDOM.type_rule
def _type(args, attrs, given, where, span):
    x, seed = args
    if tuple(seed.type.shape) != (1, 1):
        raise DimensionMismatch(f"{where}: the seed is a 1 x 1 value, got {seed.type}", span)
    if seed.type.dtype.is_float or seed.type.dtype is DType.bool:
        raise DomainMismatch(f"{where}: the seed is an integer, got {seed.type.dtype}", span)
    return x.type.with_(dtype=DType.float64)


def uniform(seed: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The number at each (row, col): its hash53 over 2^53."""
    return hash53(seed, rows, cols).astype(np.float64) * (1.0 / (1 << 53))


@RANDOM.eval_rule()
def _evaluate(node, args, env):
    # a distributed piece passes its global row/column ids as two extra arguments (None: identity)
    x, seed, row_ids, col_ids = (list(args) + [None, None])[:4]
    s = int(_item.item(seed) or 0)   # (a missing seed draws as seed 0, as dropout_mask's does)
    if x.shape[1] == 1:   # a column (Luby's scores): its rows alone, one column id for all of them
        r = x.to_coo(columns=False, values=False)[0]
        gr = r if row_ids is None else np.asarray(row_ids)[r]
        gc = np.uint64(0 if col_ids is None else np.asarray(col_ids)[0])
        return _on_pattern(r, None, uniform(s, gr, gc), x.shape)
    r, c, gr, gc = entries(x, row_ids, col_ids)
    return _on_pattern(r, c, uniform(s, gr, gc), x.shape)


def _on_pattern(r: np.ndarray, c: np.ndarray, values: np.ndarray, shape: tuple):
    """The matrix of ``values`` at x's entries (r, c), as to_coo gave them. A column's (or a
    row's) entries come sorted and distinct, so they are its compressed form as they are:
    imported, its arrays handed over, where building them (sorting, checking for duplicates) took
    0.6 ms of a Luby iteration's 1 ms at 82K candidates."""
    nr, nc = shape
    if nc == 1 or nr == 1:
        ids = np.require(r if nc == 1 else c, np.uint64, "C")
        ptr = np.array([0, ids.size], dtype=np.uint64)
        if nc == 1:
            return gb.Matrix.ss.import_csc(nrows=nr, ncols=1, indptr=ptr, row_indices=ids, values=values,
                                           sorted_rows=True, take_ownership=True)
        return gb.Matrix.ss.import_csr(nrows=1, ncols=nc, indptr=ptr, col_indices=ids, values=values,
                                       sorted_cols=True, take_ownership=True)
    return gb.Matrix.from_coo(r, c, values, nrows=nr, ncols=nc, dtype=gb.dtypes.FP64)


@RANDOM.fact_rule
def _facts(n, a):
    return a[0]   # an entry exactly where x has one


@RANDOM.lower_rule
def _lower(pl, n):
    """Local, with this rank's global row (or column) ids, so the numbers do not depend on P."""
    pl.with_global_ids(n)


@RANDOM.work_rule
def _work(n, args, out):
    return touched(args, out)


@RANDOM.vjp_rule(linked=lambda n: (False,) * len(n.args))
def _vjp(n, g, needs, b):
    return (None,) * len(n.args)


@spelling(file=(("x", EXPR), ("seed", EXPR)))
def random(x: Expr, seed: Expr, *, span: Span | None = None) -> Expr:
    """A uniform float64 in [0, 1) at each present entry of ``x``, a function of (seed, global
    row, global column) only: the same on any number of processes. ``seed`` is a 1 x 1 integer
    value (a scalar input, or ``seed + i`` in a loop for new numbers each iteration)."""
    return Expr(make(RANDOM.op, (node_of(x), node_of(seed)), span=span_or_caller(span)))
