"""What the indexing ops (extract, assign, diag, kronecker, resize, build) share: index lists as
written (slices, ints, sequences) made into attributes, a rank's share of an index list, the
output written as GraphBLAS writes it (``C<M, replace> accum= T``), and the lowering of an op
whose result each rank computes a disjoint part of (an exchange of the parts, counted)."""
from __future__ import annotations

import numbers

import numpy as np

from ...errors import DimensionMismatch, Span
from ...instr import AllgatherSparse
from ...instr.layout import REP
from .expr import Expr, node_of
from .spelling import builder


def index_attr(ix, dim, what: str, span: Span | None) -> tuple[tuple | None, bool]:
    """(the indices as a tuple of ints, or None for all of the dim; whether one int was given).
    A slice of a symbolic dim needs non-negative explicit bounds (its length is then known)."""
    if ix is None or isinstance(ix, slice) and ix == slice(None):
        return None, False
    if isinstance(ix, (numbers.Integral, np.integer)) and not isinstance(ix, bool):
        ix = int(ix)
        if isinstance(dim, int) and not -dim <= ix < dim:
            raise DimensionMismatch(f"{what}: index {ix} is out of range for a dim of {dim}", span)
        if ix < 0:
            if not isinstance(dim, int):
                raise DimensionMismatch(f"{what}: a negative index needs a dim of known size, not {dim!r}", span)
            ix += dim
        return (ix,), True
    if isinstance(ix, slice):
        if isinstance(dim, int):
            return tuple(range(dim)[ix]), False
        start, stop, step = ix.start or 0, ix.stop, ix.step or 1
        if stop is None or start < 0 or stop < 0 or step < 0:
            raise DimensionMismatch(f"{what}: a slice of dim {dim!r} (its size is known at run time only) needs "
                                    f"non-negative start and stop, got {ix}", span)
        return tuple(range(start, stop, step)), False
    if isinstance(ix, Expr):
        raise TypeError(f"{what}: indices are known when the program is built (ints, slices, lists, numpy "
                        "arrays); a computed index vector is not supported")
    arr = np.asarray(ix)
    if arr.dtype == bool:
        arr = np.flatnonzero(arr)
    if arr.ndim != 1 or arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{what}: indices are an int, a slice or a 1-D sequence of ints, got {ix!r}")
    arr = arr.astype(np.int64)
    if isinstance(dim, int):
        if arr.size and (arr.min() < -dim or arr.max() >= dim):
            raise DimensionMismatch(f"{what}: indices out of range for a dim of {dim}", span)
        arr = np.where(arr < 0, arr + dim, arr)
    elif arr.size and arr.min() < 0:
        raise DimensionMismatch(f"{what}: a negative index needs a dim of known size, not {dim!r}", span)
    return tuple(int(i) for i in arr), False


def size_of(ix: tuple | None, dim):
    return dim if ix is None else len(ix)


def check_range(ix: tuple | None, size: int, what: str) -> None:
    """At run time, when the dim's size is known: every index inside it."""
    if ix is not None and ix and max(ix) >= size:
        raise DimensionMismatch(f"{what}: index {max(ix)} is out of range for a dim of {size}")


def share(ix: tuple | None, ids) -> tuple[np.ndarray, np.ndarray]:
    """(positions in ``ix``, rows of this piece) for the indices this rank holds (``ids``: the
    global ids of its rows, in its order; None: all, in order)."""
    want = np.arange(len(ix) if ix is not None else len(ids), dtype=np.int64)
    glob = np.asarray(ix, dtype=np.int64) if ix is not None else np.asarray(ids, dtype=np.int64)
    if ids is None:
        return want, glob
    ids = np.asarray(ids, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    at = np.searchsorted(ids[order], glob)
    ok = at < ids.size
    ok[ok] = ids[order][at[ok]] == glob[ok]
    return want[ok], order[at[ok]]


def written(t: Expr, c: Expr | None, mask: Expr | None, accum, complement: bool, structure: bool,
            replace: bool, span: Span | None) -> Expr:
    """T written as GraphBLAS writes an output: into ``c`` with ``update`` (mask, accum, replace),
    or fresh, masked (``C<M> = T``)."""
    if c is not None:
        return builder("update")(c, t, accum=accum, mask=mask, complement=complement, structure=structure,
                                 replace=replace, span=span)
    if accum is not None or replace:
        raise TypeError("accum= and replace= write into an existing value: give it as out=")
    if mask is None:
        if complement or structure:
            raise TypeError("complement= and structure= describe a mask: give mask= too")
        return t
    return builder("mask")(t, mask, complement=complement, structure=structure, span=span)


def lower_by_parts(pl, n, axis: str) -> None:
    """n from its first argument distributed by ``axis`` ('row' or 'col'; the others replicated):
    each rank computes the entries its piece gives (the op's rule takes the piece's global ids
    as two more arguments), the parts are disjoint, and one exchange of the entries present
    (counted when it runs) puts them together, replicated; then n's own layout."""
    x = n.args[0]
    xl = pl.layout(x)
    ids = pl.const_all(lambda r: pl.dims[xl.dim].owned[r])
    none = pl.const_all(lambda r: None)
    args = (pl.value(x),) + tuple(pl.value(a, REP) for a in n.args[1:])
    args += (ids, none) if axis == "row" else (none, ids)
    part = pl.slot()
    pl.emit_local(part, n, args, (xl,) + (REP,) * (len(n.args) - 1), REP)
    shape = tuple(pl.concrete(d) for d in n.type.shape)
    out = part
    if pl.P > 1:
        out = pl.slot()
        zeros = np.zeros(pl.P + 1, dtype=np.int64)
        pl.emit(AllgatherSparse(out, part, zeros, np.arange(shape[0], dtype=np.int64), "rows", shape))
    pl.set(n, out, REP)
    lay = pl.layout(n)
    if lay != REP:
        pl.set(n, pl.value(n, lay), lay)




def local_with_ids(pl, n, *consts) -> None:
    """n computed where its result's pieces are: each argument in n's layout when it has it
    (else replicated), and the pieces' global row (column) ids as two more arguments (then
    ``consts``, planning-time values, one more argument each)."""
    lay = pl.layout(n)
    if lay == REP:
        return pl.local(n)
    layouts = tuple(pl.layout(a) if pl.layout(a) == lay else REP for a in n.args)
    args = tuple(pl.value(a, la) for a, la in zip(n.args, layouts))
    ids = pl.const_all(lambda r: pl.dims[lay.dim].owned[r])
    none = pl.const_all(lambda r: None)
    args += (ids, none) if lay.kind == "row" else (none, ids)
    args += tuple(pl.const_all(lambda r, c=c: c) for c in consts)
    out = pl.slot()
    pl.emit_local(out, n, args, layouts, lay)
    pl.set(n, out, lay)


__all__ = ["check_range", "index_attr", "local_with_ids", "lower_by_parts", "node_of", "share", "size_of", "written"]
