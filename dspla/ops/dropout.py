"""dropout_mask: inverted dropout over x's present entries (attribute: p; arguments: x and a 1 x 1
int64 seed): 1/(1-p) on the kept entries, missing where dropped. The mask depends only on (seed,
global row, global column), never on the number of processes. Python: ``dp.dropout_mask``; files:
the same."""
from __future__ import annotations

import numpy as np

from ..errors import DomainMismatch, Span
from ..ir.types import DType
from .define import EXPR, NOTHING, SCALAR, Expr, define, make, node_of, span_or_caller, spelling, touched
from .define.lazy import kernel, library

gb = library("graphblas")
_item = kernel("item")

DROPOUT_MASK = define("dropout_mask", attrs=("p",))


@DROPOUT_MASK.type_rule
def _type(args, attrs, given, where, span):
    x, seed = args
    if tuple(seed.type.shape) != (1, 1) or seed.type.dtype is not DType.int64:
        raise DomainMismatch(f"{where}: the seed must be a 1 x 1 int64 value, got {seed.type}", span)
    if not 0.0 <= attrs["p"] < 1.0:
        raise DomainMismatch(f"{where}: the drop probability must be in [0, 1), got {attrs['p']}", span)
    dt = x.type.dtype if x.type.dtype.is_float else DType.float64
    return x.type.with_(dtype=dt)


# ------------------------------------------------------------------------ the kernels
_M1, _M2, _M3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place."""
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= _M2
        z ^= z >> np.uint64(27)
        z *= _M3
        z ^= z >> np.uint64(31)
    return z


def _threshold(p: float) -> np.uint64:
    # keep when the top 53 bits, as a fraction of 2^53, are >= p: compared as integers (exact)
    return np.uint64(int(np.ceil(p * (1 << 53))))


def _seeded(seed: int) -> np.uint64:
    """The seed's term of the hash (any int64 seed: a negative one as its two's complement)."""
    return np.uint64(seed & (2 ** 64 - 1)) * _M1


def hash53(seed: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """A counter-based hash (splitmix64) of (seed, global row, global column), its top 53 bits:
    the same at any number of processes, however rows are distributed (dropout, random)."""
    with np.errstate(over="ignore"):
        z = _seeded(seed) + rows.astype(np.uint64) * _M2 + cols.astype(np.uint64) * _M3
    return _mix(z) >> np.uint64(11)


def entries(x, row_ids, col_ids) -> tuple:
    """(rows, cols, global rows, global cols) of x's entries: a distributed piece maps its local
    ids through ``row_ids`` / ``col_ids`` (None: the ids are global already)."""
    r, c, _ = x.to_coo(values=False)
    return (r, c, r if row_ids is None else np.asarray(row_ids)[r], c if col_ids is None else np.asarray(col_ids)[c])


def dropout_keep(seed: int, rows: np.ndarray, cols: np.ndarray, p: float) -> np.ndarray:
    """Whether entry (row, col) survives dropout: its hash53 as a fraction of 2^53 is >= p."""
    return hash53(seed, rows, cols) >= _threshold(p)


def dropout_keep_full(seed: int, rows: np.ndarray, cols: np.ndarray, p: float) -> np.ndarray:
    """dropout_keep for every (rows[i], cols[j]) pair: an len(rows) x len(cols) array, built by
    broadcasting (no coordinate lists; the same values as dropout_keep)."""
    out = np.empty((rows.size, cols.size), dtype=bool)
    thr = _threshold(p)
    with np.errstate(over="ignore"):
        r = _seeded(seed) + rows.astype(np.uint64) * _M2
        c = (cols.astype(np.uint64) * _M3)[None, :]
        step = max(1, (1 << 16) // max(1, cols.size))      # blocks of ~64k entries stay in cache
        z = np.empty((step, cols.size), dtype=np.uint64)
        for lo in range(0, rows.size, step):
            hi = min(rows.size, lo + step)
            zz = z[: hi - lo]
            np.add(r[lo:hi, None], c, out=zz)
            _mix(zz)
            zz >>= np.uint64(11)
            np.greater_equal(zz, thr, out=out[lo:hi])
    return out


@DROPOUT_MASK.eval_rule()
def _evaluate(node, args, env):
    # a distributed piece passes its global row/column ids as two extra arguments (None: identity)
    x, seed, row_ids, col_ids = (list(args) + [None, None])[:4]
    p = node.attr("p")
    dt = node.type.dtype
    s = int(_item.item(seed) or 0)
    scale = dt.np.type(1.0 / (1.0 - p))
    if x.nvals == x.shape[0] * x.shape[1] and x.nvals:   # full (dense features): a bitmap, no coordinates
        gr = np.arange(x.shape[0]) if row_ids is None else np.asarray(row_ids)
        gc = np.arange(x.shape[1]) if col_ids is None else np.asarray(col_ids)
        keep = dropout_keep_full(s, gr, gc, p)
        M = gb.Matrix(dt.gb, x.shape[0], x.shape[1])
        M.ss.pack_bitmapr(bitmap=keep.view(np.int8), values=np.array([scale], dtype=dt.np),
                          nvals=int(np.count_nonzero(keep)), is_iso=True, take_ownership=True)
        return M
    r, c, gr, gc = entries(x, row_ids, col_ids)
    keep = dropout_keep(s, gr, gc, p)
    return gb.Matrix.from_coo(r[keep], c[keep], scale, nrows=x.shape[0], ncols=x.shape[1], dtype=dt.gb)


@DROPOUT_MASK.fact_rule
def _facts(n, a):
    return NOTHING   # it drops entries


@DROPOUT_MASK.lower_rule
def _lower(pl, n):
    """Local, with this rank's global row (or column) ids, so the mask does not depend on P."""
    pl.with_global_ids(n)


@DROPOUT_MASK.work_rule
def _work(n, args, out):
    return touched(args, out)


@DROPOUT_MASK.vjp_rule(linked=lambda n: (False,) * len(n.args))
def _vjp(n, g, needs, b):
    """1/(1-p) on the kept entries: a constant of the step."""
    return (None,) * len(n.args)


@spelling(file=(("x", EXPR), ("p", SCALAR), ("seed", EXPR)))
def dropout_mask(x: Expr, p: float, seed: Expr, *, span: Span | None = None) -> Expr:
    """Inverted-dropout mask over x's present entries: 1/(1-p) where an entry is kept, missing
    where dropped. ``seed`` is a 1 x 1 int64 input, so each call can draw a new mask; the mask
    depends only on (seed, global row, global column), never on the number of processes.
    Multiply by it (``H * D``) in the forward pass and again in the backward pass."""
    return Expr(make(DROPOUT_MASK.op, (node_of(x), node_of(seed)), (("p", float(p)),), span=span_or_caller(span)))
