"""Local pieces as GraphBLAS matrices <-> numpy buffers, without copies where possible.

A full (every entry present) fullr matrix exposes its values array through unpack/pack
(ownership moves, nothing is copied). Pieces with missing entries travel as values plus a
presence bitmap packed into one byte buffer.
"""
from __future__ import annotations

from contextlib import contextmanager

import graphblas as gb
import numpy as np
import scipy.sparse as sp

from ..ir.types import DType
from . import item, lend


# An n x 1 value is held by column, as SuiteSparse holds the results of operations on one: held
# by row, its element-wise kernels ran 3-5x slower. Its values array is the same either way
# (one column is both C- and Fortran-contiguous), so packing and unpacking copy nothing.
def _full(ncols: int) -> str:
    return "fullc" if ncols == 1 else "fullr"


def pack_full(M, values: np.ndarray):
    """Give M the C-contiguous ``values`` (nrows x ncols), in the orientation that suits it."""
    if values.shape[1] == 1:
        M.ss.pack_fullc(values, take_ownership=True)
    else:
        M.ss.pack_fullr(values, take_ownership=True)


def pack_bitmap(M, bitmap: np.ndarray, values: np.ndarray, nvals: int | None = None):
    """``nvals``: the bitmap's count when the caller knows it (else it is counted)."""
    if values.shape[1] == 1:
        M.ss.pack_bitmapc(bitmap=bitmap, values=values, nvals=nvals, take_ownership=True)
    else:
        M.ss.pack_bitmapr(bitmap=bitmap, values=values, nvals=nvals, take_ownership=True)


def unpack_full(M) -> np.ndarray:
    """M's values as a C-contiguous array (M is left empty: pack_full gives them back)."""
    nrows, ncols = M.shape
    d = M.ss.unpack(_full(ncols))
    values = d["values"]
    if d.get("is_iso") or values.shape != (nrows, ncols):  # iso-valued: one value stands for all
        values = np.full((nrows, ncols), values.reshape(-1)[0], dtype=values.dtype)
    return values


@contextmanager
def values_of(M):
    """The C-ordered values array of a full matrix, lent for the duration of the block."""
    with lend.full(M) as values:
        if values is not None:   # its own array, by the C calls (kernels/lend.py)
            yield values
            return
    values = unpack_full(M)
    try:
        yield values
    finally:
        pack_full(M, values)


def from_values(values: np.ndarray, dtype: DType):
    """A full matrix owning ``values`` (a C-contiguous 2-D array the caller gives up)."""
    nrows, ncols = values.shape
    M = gb.Matrix(dtype.gb, nrows, ncols)
    if values.size:
        pack_full(M, np.ascontiguousarray(values, dtype=dtype.np))
    return M


def from_values_presence(values: np.ndarray, present: np.ndarray, dtype: DType):
    nrows, ncols = values.shape
    if nrows == ncols == 1:   # a reduced scalar (every loop iteration has some): the typed C call
        return item.scalar(values[0, 0] if present[0, 0] else None, dtype)
    if present.all():
        return from_values(values, dtype)
    M = gb.Matrix(dtype.gb, nrows, ncols)
    if values.size:
        pack_bitmap(M, np.ascontiguousarray(present, dtype=bool), np.ascontiguousarray(values, dtype=dtype.np))
    return M


def dense_parts(M, fill=0):
    """(values, present) dense arrays of any matrix (copies; no coordinate lists)."""
    shape = M.shape
    if shape == (1, 1):
        v = item.item(M)
        return np.array([[fill if v is None else v]], dtype=M.dtype.np_type), np.array([[v is not None]])
    if M.nvals == M.shape[0] * M.shape[1]:
        return (M.to_dense() if M.nvals else np.full(shape, fill, dtype=M.dtype.np_type)), np.ones(shape, dtype=bool)
    if not M.nvals:
        return np.full(shape, fill, dtype=M.dtype.np_type), np.zeros(shape, dtype=bool)
    if shape[0] * shape[1] <= 256:   # a few entries (reductions): one coordinate export, no bitmap round trip
        values, present = np.full(shape, fill, dtype=M.dtype.np_type), np.zeros(shape, dtype=bool)
        r, c, v = M.to_coo()
        values[r, c], present[r, c] = v, True
        return values, present
    d = M.dup().ss.export("bitmapc" if M.shape[1] == 1 else "bitmapr", give_ownership=True)
    present = d["bitmap"].astype(bool, copy=False).reshape(shape)
    values = d["values"]
    if d.get("is_iso"):
        values = np.full(shape, values.reshape(-1)[0], dtype=values.dtype)
    values = values.reshape(shape)
    values[~present] = fill
    return values, present


def packed_nbytes(nrows: int, k: int, dtype: DType, with_presence: bool) -> int:
    return nrows * k * (dtype.np.itemsize + (1 if with_presence else 0))


def pack_rows(M, rows: np.ndarray, dtype: DType, with_presence: bool, out: np.ndarray | None = None) -> np.ndarray:
    """Rows ``rows`` of M in one contiguous buffer: values (nrows x k), then, with_presence,
    one byte per entry. Without presence, M must be full, or at least its rows ``rows`` (the
    planner proved it). ``out``: a free buffer of an earlier pack, written into when it has the
    size."""
    n, k = len(rows), M.shape[1]
    if not with_presence:
        if not (n and k):
            return np.empty((n, k), dtype=dtype.np)
        free = out if out is not None and out.shape == (n, k) and out.dtype == dtype.np else None
        if M.nvals != M.shape[0] * k:   # (full where it is read, plan/facts.covers: rows sent are)
            return _present_rows(M, rows, dtype, free)
        with values_of(M) as v:
            # the rows were planned in range; mode="clip" skips the bounds pass that made
            # take(..., out=) twice as slow
            if free is not None and v.dtype == dtype.np:
                return np.take(v, rows, axis=0, mode="clip", out=free)
            return np.take(v, rows, axis=0, mode="clip").astype(dtype.np, copy=False)
    size = packed_nbytes(n, k, dtype, True)
    buf = out if out is not None and out.size == size and out.dtype == np.uint8 else np.empty(size, dtype=np.uint8)
    if not (n and k):   # (nothing to copy; numpy's take into an empty out, rows of no columns, raises)
        return buf
    nb = n * k * dtype.np.itemsize
    bv, bp = buf[:nb].view(dtype.np).reshape(n, k), buf[nb:].view(np.int8).reshape(n, k)
    with bitmap_of(M) as held:
        if held is not None and held[0].dtype == dtype.np:   # lent, not copied: only the rows sent are read
            vals, pres = held
            np.take(pres, rows, axis=0, mode="clip", out=bp)
            np.take(vals, rows, axis=0, mode="clip", out=bv)
            np.copyto(bv, bv.dtype.type(0), where=bp == 0)   # (a missing entry's slot holds whatever was there)
            return buf
    vals, pres = dense_parts(M)
    bv[:] = vals[rows]
    bp[:] = pres[rows]
    return buf


def _present_rows(M, rows: np.ndarray, dtype: DType, out: np.ndarray | None) -> np.ndarray:
    """Rows ``rows`` of M, every entry of them present (the planner proved it), values only
    (into ``out`` when given)."""
    with bitmap_of(M) as held:
        if held is not None and held[0].dtype == dtype.np:
            return np.take(held[0], rows, axis=0, mode="clip", out=out)
    vals = dense_parts(M)[0]
    if out is not None and vals.dtype == dtype.np:
        return np.take(vals, rows, axis=0, mode="clip", out=out)
    return vals[rows].astype(dtype.np, copy=False)


def unpack_bitmap(M):
    """(values, presence as int8, entry count, format) of a matrix SuiteSparse holds as a bitmap,
    M left empty (nothing is copied); None, M untouched, for other formats."""
    fmt = M.ss.format
    if fmt not in ("bitmapr", "bitmapc"):
        return None
    nvals = M.nvals
    d = M.ss.unpack(fmt)
    return d["values"], d["bitmap"], nvals, fmt


@contextmanager
def bitmap_of(M):
    """(values, presence as int8) of a matrix SuiteSparse holds as a bitmap, lent for the block
    (nothing is copied); None for other formats and iso-valued bitmaps."""
    with lend.bitmap(M) as lent:
        if lent is not None:   # its own arrays, by the C calls (kernels/lend.py)
            yield lent.values, lent.present
            return
    held = None if M.ss.is_iso else unpack_bitmap(M)
    if held is None:
        yield None
        return
    values, bitmap, nvals, fmt = held
    try:
        yield values, bitmap
    finally:
        (M.ss.pack_bitmapr if fmt == "bitmapr" else M.ss.pack_bitmapc)(
            bitmap=bitmap, values=values, nvals=nvals, take_ownership=True)


def stack_column(own, bufs: list, dtype: DType, into=None):
    """An n x 1 matrix of ``dtype``: own's rows, then the rows each received buffer carries
    (``bufs``: (buffer, nrows, with presence, sparse)), written into one bitmap: one copy of each
    part (SuiteSparse's concat of the unpacked arrivals took 3-4x as long). A sparse buffer holds
    present entries only (pack_sparse_rows); own may then be sparse too (a BFS frontier), its
    entries written where they belong. ``into``: the matrix the last stack returned, whose arrays
    are written again where they lie (handing SuiteSparse fresh arrays cost 5x more than the
    copies). None when own is not a column of ``dtype`` (the caller stacks by concat)."""
    n_own = own.shape[0]
    gdt = gb.dtypes.lookup_dtype(dtype.gb)
    if own.shape[1] != 1 or own.dtype != gdt:
        return None
    total = n_own + sum(b[1] for b in bufs)
    if into is not None and into._nrows == total and into._ncols == 1 and into.dtype == gdt:
        with lend.bitmap(into) as lent:
            if lent is not None:
                n = _stack(own, bufs, dtype, lent.values, lent.present)
                if n is not None:
                    lent.nvals = n
                    return into
    vals, bits = np.empty((total, 1), dtype=dtype.np), np.empty((total, 1), dtype=np.int8)
    n = _stack(own, bufs, dtype, vals, bits)
    if n is None:
        return None
    M = gb.Matrix(dtype.gb, total, 1)
    if total:
        pack_bitmap(M, bits, vals, n)
    return M


def stack_values(own, bufs: list, dtype: DType, into=None):
    """A full n x 1 matrix of ``dtype``: own's values, then those of each received values-only
    buffer (``bufs``: (buffer, nrows)), for an operand full wherever the product reads it
    (plan/facts.covers): own's missing entries are rows no product term reads, so whatever
    its values array holds there is copied as it is. ``into``: the last stack, written again.
    (stack_column's bitmap would do, read by the full-output route as covered, but SuiteSparse
    then checks the bitmap at every entry: PageRank at P = 2 took 0.18-0.27 ms more per
    iteration on soc-Slashdot0902.)"""
    total = own.shape[0] + sum(m for _, m in bufs)
    gdt = gb.dtypes.lookup_dtype(dtype.gb)
    if into is not None and into._nrows == total and into._ncols == 1 and into.dtype == gdt:
        with lend.full(into) as vals:
            if vals is not None:
                _stack_values(own, bufs, dtype, vals)
                return into
    vals = np.empty((total, 1), dtype=dtype.np)
    _stack_values(own, bufs, dtype, vals)
    return from_values(vals, dtype)


def values_into(own, out: np.ndarray):
    """own's values written into ``out`` (its shape, C-ordered): a full own's; one with missing
    entries (full wherever the product reads it: plan/facts.covers) as its values array holds
    them, whatever lies at the missing ones."""
    if not own.shape[0]:
        return
    if own.nvals == own.shape[0] * own.shape[1]:
        with values_of(own) as held:
            out[...] = held.reshape(out.shape)
        return
    with bitmap_of(own) as held:
        if held is not None:
            out[...] = held[0].reshape(out.shape)
    if held is None:
        out[...] = dense_parts(own)[0]


def _stack_values(own, bufs: list, dtype: DType, vals: np.ndarray):
    off = own.shape[0]
    values_into(own, vals[:off])
    for buf, m in bufs:
        vals[off:off + m] = buf.reshape(m, 1)
        off += m


def _stack(own, bufs: list, dtype: DType, vals: np.ndarray, bits: np.ndarray) -> int | None:
    """stack_column's copies into (vals, bits); the number of entries, None when own is not
    readable as a column."""
    n_own = own.shape[0]
    nv = own.nvals
    b1, v1 = bits[:, 0], vals[:, 0]
    if nv == n_own:
        with values_of(own) as held:
            if held is None:
                return None
            vals[:n_own] = held
            bits[:n_own] = 1
    else:
        with bitmap_of(own) as held:
            if held is not None:
                vals[:n_own], bits[:n_own] = held
        if held is None:   # held sparse (a frontier): its entries where they belong
            r, _, v = own.to_coo()
            # (1-D views and intp positions: numpy's (rows, 0) and uint64 indexing, as to_coo
            # gives, are each 2-3x slower)
            r = r.astype(np.intp)
            bits[:n_own] = 0
            b1[r] = 1
            v1[r] = v
    off = n_own
    for buf, m, presence, sparse in bufs:
        if sparse:
            bits[off:off + m] = 0
            n = sparse_count(buf)
            if n:
                pos = buf[8:8 + 8 * n].view(np.int64) + off   # (one column: an entry's row)
                b1[pos] = 1
                v1[pos] = buf[8 + 8 * n:8 + n * (8 + dtype.np.itemsize)].view(dtype.np)
        elif presence:
            nb = m * dtype.np.itemsize
            vals[off:off + m, 0] = buf[:nb].view(dtype.np)
            bits[off:off + m, 0] = buf[nb:].view(bits.dtype)
        else:
            vals[off:off + m] = buf.reshape(m, 1)
            bits[off:off + m] = 1
        off += m
    return int(np.count_nonzero(bits))


def recv_buffer(nrows: int, k: int, dtype: DType, with_presence: bool) -> np.ndarray:
    if not with_presence:
        return np.empty((nrows, k), dtype=dtype.np)
    return np.empty(packed_nbytes(nrows, k, dtype, True), dtype=np.uint8)


def unpack_rows(buf: np.ndarray, nrows: int, k: int, dtype: DType, with_presence: bool):
    if not with_presence:
        return from_values(buf, dtype)  # takes ownership: the buffer was allocated for this message
    nb = nrows * k * dtype.np.itemsize
    vals = buf[:nb].view(dtype.np).reshape(nrows, k).copy()
    pres = buf[nb:].astype(bool).reshape(nrows, k)
    return from_values_presence(vals, pres, dtype)


def csr_piece(A, dtype: DType):
    """A scipy CSR piece as a GraphBLAS matrix of ``dtype``."""
    A = sp.csr_array(A)
    M = gb.io.from_scipy_sparse(A) if A.nnz else gb.Matrix(dtype.gb, *A.shape)
    return M if M.dtype == gb.dtypes.lookup_dtype(dtype.gb) else M.dup(dtype=dtype.gb)


# ------------------------------------------------------------------ one-sided window rows
# A window row is the K values of one dense row as bytes, followed (with presence) by K bytes
# of presence flags, so runs of rows can be fetched with one indexed datatype.
def window_row_bytes(k: int, dtype: DType, with_presence: bool) -> int:
    return k * (dtype.np.itemsize + (1 if with_presence else 0))


def write_window_rows(region: np.ndarray, M, dtype: DType, with_presence: bool):
    """Write the local dense piece M into its window rows (region: nrows x row_bytes bytes)."""
    nb = M.shape[1] * dtype.np.itemsize
    if not with_presence:
        with values_of(M) as v:
            region[:, :nb] = np.ascontiguousarray(v, dtype=dtype.np).view(np.uint8).reshape(M.shape[0], nb)
        return
    vals, pres = dense_parts(M)
    region[:, :nb] = np.ascontiguousarray(vals, dtype=dtype.np).view(np.uint8).reshape(M.shape[0], nb)
    region[:, nb:] = pres


def window_recv_buffer(nrows: int, k: int, dtype: DType, with_presence: bool) -> np.ndarray:
    if not with_presence:
        return np.empty((nrows, k), dtype=dtype.np)
    return np.empty((nrows, window_row_bytes(k, dtype, True)), dtype=np.uint8)


def unpack_window_rows(buf: np.ndarray, nrows: int, k: int, dtype: DType, with_presence: bool):
    if not with_presence:
        return from_values(buf, dtype)
    nb = k * dtype.np.itemsize
    vals = np.ascontiguousarray(buf[:, :nb]).view(dtype.np).reshape(nrows, k)
    return from_values_presence(vals, buf[:, nb:].astype(bool), dtype)


# ------------------------------------------------------------------ sparse pieces as bytes
def csr_nbytes(nrows: int, nnz: int, dtype: DType) -> int:
    return 8 * (nrows + 1) + 8 * nnz + dtype.np.itemsize * nnz


def csr_pack(A, dtype: DType) -> np.ndarray:
    """A scipy CSR piece as one byte buffer: indptr, column indices (int64), values."""
    A = sp.csr_array(A)
    A.sort_indices()
    return np.concatenate([A.indptr.astype(np.int64).view(np.uint8), A.indices.astype(np.int64).view(np.uint8),
                           np.ascontiguousarray(A.data, dtype=dtype.np).view(np.uint8)])


def csr_unpack(buf: np.ndarray, nrows: int, ncols: int, nnz: int, dtype: DType):
    a = 8 * (nrows + 1)
    b = a + 8 * nnz
    indptr = buf[:a].view(np.int64)
    indices = buf[a:b].view(np.int64)
    values = buf[b:].view(dtype.np)
    if nnz == 0:
        return gb.Matrix(dtype.gb, nrows, ncols)
    return gb.Matrix.ss.import_csr(nrows=nrows, ncols=ncols, indptr=indptr.copy(), col_indices=indices.copy(),
                                   values=values.copy(), dtype=dtype.gb, sorted_cols=True, take_ownership=True)


# ------------------------------------------------------------ sparse rows as one message
# A sparse piece travels as its present entries only: an int64 count, then each entry's position
# in the rows x k block (int64, row-major), then the values. The count travels first on its own
# (8 bytes), so the receiver allocates just what the entries need.
def sparse_size(n: int, dtype: DType) -> int:
    """Bytes of a buffer holding n entries."""
    return 8 + n * (8 + dtype.np.itemsize)


def row_lookup(rows: np.ndarray, nrows: int) -> np.ndarray | None:
    """For pack_sparse_rows: each of M's ``nrows`` rows' position in ``rows`` (-1: not sent), made
    once per send list; None when it would hold more than four positions per row sent (a short
    list out of many rows: SuiteSparse's extract is cheap there, and the lookup would cost
    memory in proportion to the rows held rather than sent)."""
    if nrows > 4 * max(1, len(rows)):
        return None
    where = np.full(nrows, -1, dtype=np.int32 if len(rows) < 2**31 else np.int64)
    where[rows] = np.arange(len(rows), dtype=where.dtype)
    return where


def pack_sparse_rows(M, rows: np.ndarray, dtype: DType, lookup: np.ndarray | None = None) -> np.ndarray:
    """Rows ``rows`` of M (any matrix) as present entries; returns the used part of the buffer.
    ``lookup`` (row_lookup's): while M has no more entries than rows are sent, M's own entries
    are looked up instead of the rows extracted, so the work follows M's entries (a BFS
    frontier's few): 17K rows of a 41K-row frontier, one thread, 104 -> 18 us with 3 entries,
    108 -> 59 us with 2,500 (the extract: ~170 us per BFS level inside the loop at P = 2)."""
    k = M.shape[1]
    if lookup is not None and M.nvals <= len(rows):   # (past that, SuiteSparse's extract is as fast)
        r, c, v = M.to_coo()
        at = lookup[r.astype(np.intp)]
        sel = np.flatnonzero(at >= 0)   # (then takes: a boolean index per array was 3-5x slower)
        at, c, v = at.take(sel), c.take(sel), v.take(sel)
    else:
        sub = take(M, rows=rows)
        at, c, v = sub.to_coo()
    n = at.size
    buf = np.empty(8 + n * (8 + dtype.np.itemsize), dtype=np.uint8)
    buf[:8].view(np.int64)[0] = n
    pos = buf[8:8 + 8 * n].view(np.int64)
    np.multiply(at.astype(np.int64, copy=False), k, out=pos)
    pos += c.astype(np.int64, copy=False)
    buf[8 + 8 * n:].view(dtype.np)[:] = v
    return buf


def sparse_count(buf: np.ndarray) -> int:
    return int(buf[:8].view(np.int64)[0])


def unpack_sparse_rows(buf: np.ndarray, nrows: int, k: int, dtype: DType):
    n = sparse_count(buf)
    if not n:
        return gb.Matrix(dtype.gb, nrows, k)
    pos = buf[8:8 + 8 * n].view(np.int64)
    vals = buf[8 + 8 * n:8 + n * (8 + dtype.np.itemsize)].view(dtype.np)
    return gb.Matrix.from_coo(pos // k, pos % k, vals, nrows=nrows, ncols=k, dtype=dtype.gb)


def take(M, rows=None, cols=None):
    """``M[rows, cols]`` (None: all of that axis) as a new matrix. An empty selection gives a new
    empty matrix: SuiteSparse (9.4) extracts no rows or no columns of an iso matrix as a 'full'
    matrix of no entries, whose reductions and products then give a full result."""
    nr, nc = (_length(x, n) for x, n in ((rows, M.nrows), (cols, M.ncols)))
    if nr == 0 or nc == 0:
        return gb.Matrix(M.dtype, nr, nc)
    return M[slice(None) if rows is None else rows, slice(None) if cols is None else cols].new()


def _length(index, n: int) -> int:
    if index is None:
        return n
    return len(range(*index.indices(n))) if isinstance(index, slice) else len(index)


def piece(M, layout, dims: dict, rank: int):
    """This rank's piece of a whole matrix M in ``layout`` (an ``instr.layout.Layout``; ``dims``:
    the partitioned dims' ``DimPart``s)."""
    if layout.kind != "rep" and dims[layout.dim].P == 1:
        return M   # one process holds it all, in order
    if layout.kind == "row":
        return take(M, rows=dims[layout.dim].owned[rank])
    if layout.kind == "col":
        return take(M, cols=dims[layout.dim].owned[rank])
    return M
