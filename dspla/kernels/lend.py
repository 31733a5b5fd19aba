"""A matrix's own arrays lent to numpy for a block, by SuiteSparse's unpack and pack calls.

Packing rows to send, stacking a product's operand and reading a full result all need a dense
piece's values (and presence bitmap) as numpy arrays. python-graphblas's ``ss.unpack`` /
``ss.pack_*`` do this without copying but cost 20-40 us of Python each way, several times per
loop iteration. Here the typed C calls are made directly (about 2 us): the arrays are unpacked,
viewed by numpy where they lie, and packed back unchanged when the block ends, so ownership never
moves and nothing is copied. Views must not outlive the block (callers copy what they keep).

Only layouts whose arrays are the C-ordered (nrows x ncols) values are lent: held by row, or one
column; anything else (and iso-valued matrices) yields None and the caller takes
python-graphblas's route.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import numpy as np
from suitesparse_graphblas import ffi, lib
from suitesparse_graphblas.utils import claim_buffer, unclaim_buffer

from .item import check

_NULL = ffi.NULL
_BYTE, _INT8, _BOOL = np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.bool_)


def layout(M) -> tuple[int, bool]:
    """(sparsity status, held by row) of M."""
    out = ffi.new("int32_t[2]")
    obj = M.gb_obj[0]
    check(lib.GxB_Matrix_Option_get_INT32(obj, lib.GxB_SPARSITY_STATUS, out), "Option_get")
    check(lib.GxB_Matrix_Option_get_INT32(obj, lib.GxB_FORMAT, out + 1), "Option_get")
    return out[0], out[1] == lib.GxB_BY_ROW


def is_bitmap(M) -> bool:
    return layout(M)[0] == lib.GxB_BITMAP


def _view(ptr, nbytes: int, dtype, shape: tuple[int, int]) -> np.ndarray:
    return np.frombuffer(ffi.buffer(ffi.cast("char*", ptr), nbytes), dtype=dtype,
                         count=shape[0] * shape[1]).reshape(shape)


class Held:
    """A bitmap's arrays while lent: ``values`` and ``present`` (int8), both (nrows, ncols) and
    C-ordered, and ``nvals``, the count packed back with them (set it when the bitmap changes)."""

    __slots__ = ("values", "present", "nvals")

    def __init__(self, values: np.ndarray, present: np.ndarray, nvals: int):
        self.values, self.present, self.nvals = values, present, nvals


def _calls(M, status: int, by_row: tuple, by_col: tuple):
    """The (unpack, pack) C calls that lend M's arrays when M has this sparsity ``status`` and
    they are the C-ordered (nrows x ncols) values (held by row, or one column); None otherwise."""
    st, row = layout(M)
    if st != status or not (row or M._ncols == 1) or not M._nrows * M._ncols:
        return None
    return by_row if row else by_col


_BITMAP = ((lib.GxB_Matrix_unpack_BitmapR, lib.GxB_Matrix_pack_BitmapR),
           (lib.GxB_Matrix_unpack_BitmapC, lib.GxB_Matrix_pack_BitmapC))
_FULL = ((lib.GxB_Matrix_unpack_FullR, lib.GxB_Matrix_pack_FullR),
         (lib.GxB_Matrix_unpack_FullC, lib.GxB_Matrix_pack_FullC))


def _unpack_bitmap(M, unpack) -> tuple:
    """SuiteSparse's bitmap unpack of M: (M's object, the bitmap and values pointers, their
    sizes in bytes, iso, entry count), M left empty until packed again."""
    Ab, Ax = ffi.new("int8_t**"), ffi.new("void**")
    sizes, iso, nvals = ffi.new("GrB_Index[2]"), ffi.new("bool*"), ffi.new("GrB_Index*")
    obj = M.gb_obj[0]
    check(unpack(obj, Ab, Ax, sizes, sizes + 1, iso, nvals, _NULL), "unpack")
    return obj, Ab, Ax, sizes, iso, nvals


@contextmanager
def bitmap(M) -> Iterator[Held | None]:
    """A bitmap M's arrays (Held); None when M is not such a bitmap. M reads as empty inside the
    block and gets the arrays back, with ``Held.nvals``, at its end."""
    calls = _calls(M, lib.GxB_BITMAP, *_BITMAP)
    if calls is None:
        yield None
        return
    pack = calls[1]
    shape = (M._nrows, M._ncols)
    obj, Ab, Ax, sizes, iso, nvals = _unpack_bitmap(M, calls[0])
    held = None
    try:
        if not iso[0]:
            held = Held(_view(Ax[0], sizes[1], M.dtype.np_type, shape), _view(Ab[0], sizes[0], np.int8, shape),
                        nvals[0])
        yield held
    finally:
        n = nvals[0] if held is None else held.nvals
        check(pack(obj, Ab, Ax, sizes[0], sizes[1], iso[0], n, _NULL), "pack")


@contextmanager
def full(M) -> Iterator[np.ndarray | None]:
    """The (nrows, ncols) C-ordered values of a full M; None when M is not such a full matrix
    (or is iso-valued). M reads as empty inside the block."""
    calls = _calls(M, lib.GxB_FULL, *_FULL)
    if calls is None:
        yield None
        return
    unpack, pack = calls
    Ax, size, iso = ffi.new("void**"), ffi.new("GrB_Index*"), ffi.new("bool*")
    obj = M.gb_obj[0]
    check(unpack(obj, Ax, size, iso, _NULL), "unpack")
    try:
        yield None if iso[0] else _view(Ax[0], size[0], M.dtype.np_type, (M._nrows, M._ncols))
    finally:
        check(pack(obj, Ax, size[0], iso[0], _NULL), "pack")


@contextmanager
def foreign_full(values: np.ndarray, M) -> Iterator[None]:
    """The empty matrix M (of ``values``' shape and dtype) made full with ``values``, memory
    SuiteSparse does not own (a peer wrote it into this rank's shared segment: runtime/interp/
    shm.py), for the block; the array is taken back at its end, so nothing is copied and
    SuiteSparse never frees it. Inside, M may only be read."""
    if not (values.flags.c_contiguous and values.ndim == 2 and values.shape == (M._nrows, M._ncols)
            and values.dtype == np.dtype(M.dtype.np_type) and values.size):
        raise ValueError("foreign_full: a C-ordered 2-D array of the matrix's shape and dtype")
    obj = M.gb_obj[0]
    ptr = ffi.cast("void*", ffi.from_buffer(values))
    Ax = ffi.new("void**", ptr)
    check(lib.GxB_Matrix_pack_FullR(obj, Ax, values.nbytes, False, _NULL), "pack")
    try:
        yield
    finally:
        Ax, size, iso = ffi.new("void**"), ffi.new("GrB_Index*"), ffi.new("bool*")
        check(lib.GxB_Matrix_unpack_FullR(obj, Ax, size, iso, _NULL), "unpack")
        if Ax[0] != ptr:   # (SuiteSparse replaced the array it was lent: it must not have)
            raise RuntimeError("GraphBLAS moved an array it was lent for reading")


_NUMERIC = frozenset({"BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "FP32", "FP64"})


@contextmanager
def csr(M) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """A sparse matrix held by row: its (indptr, column indices, values) lent read-only (int64,
    int64, M's dtype), for planning to read a rank's rows without a copy of them (at R-MAT scale
    20 on two processes, 250 MB of a 1.15 GB peak per rank). None when M is held otherwise
    (hypersparse, by column, bitmap, full), iso-valued or of a user's type: the caller copies.
    M reads as empty inside the block, so nothing may use it there but these arrays, and they
    must not outlive the block."""
    st, row = layout(M)
    if st != lib.GxB_SPARSE or not row or M.dtype.name not in _NUMERIC or M.ss.is_iso:
        yield None
        return
    Ap, Aj, Ax = ffi.new("GrB_Index**"), ffi.new("GrB_Index**"), ffi.new("void**")
    sizes, iso = ffi.new("GrB_Index[3]"), ffi.new("bool*")
    obj = M.gb_obj[0]
    # (jumbled NULL: SuiteSparse sorts each row's columns first, as scipy's canonical form has them)
    check(lib.GxB_Matrix_unpack_CSR(obj, Ap, Aj, Ax, sizes, sizes + 1, sizes + 2, iso, _NULL, _NULL), "unpack")
    try:
        dtype = np.dtype(M.dtype.np_type)
        indptr = np.frombuffer(ffi.buffer(ffi.cast("char*", Ap[0]), (M._nrows + 1) * 8), dtype=np.int64)
        nnz = int(indptr[-1])
        indices = np.frombuffer(ffi.buffer(ffi.cast("char*", Aj[0]), nnz * 8), dtype=np.int64)
        values = np.frombuffer(ffi.buffer(ffi.cast("char*", Ax[0]), nnz * dtype.itemsize), dtype=dtype)
        for a in (indptr, indices, values):
            a.flags.writeable = False
        yield indptr, indices, values
    finally:
        check(lib.GxB_Matrix_pack_CSR(obj, Ap, Aj, Ax, sizes[0], sizes[1], sizes[2], iso[0], False, _NULL), "pack")


def take_bitmap(M) -> tuple[np.ndarray, int] | None:
    """A bitmap M's presence bitmap (int8, (nrows, ncols), C-ordered) and entry count, owned by
    numpy from here on; M is left empty and its values freed. None, M untouched, for other
    layouts and iso-valued bitmaps. ``give_bitmap`` hands such a bitmap back to SuiteSparse: an
    output refilled on every call keeps one bitmap instead of building one per call.
    python-graphblas's unpack and pack cost 20 us each of Python around these C calls (with the
    drop below, 0.1 ms of a 2.5 ms product at K = 16 on soc-Slashdot0902). The values are freed,
    not kept and zeroed: SuiteSparse's expansion of the iso refill, with its threads, measured
    a little faster than a numpy fill of the kept array (1.32-1.38x against 1.35-1.43x full-C)."""
    calls = _calls(M, lib.GxB_BITMAP, *_BITMAP)
    if calls is None:
        return None
    pack = calls[1]
    obj, Ab, Ax, sizes, iso, nvals = _unpack_bitmap(M, calls[0])
    shape = (M._nrows, M._ncols)
    n = shape[0] * shape[1]
    if iso[0] or sizes[0] < n:   # (an iso bitmap's values are one entry)
        check(pack(obj, Ab, Ax, sizes[0], sizes[1], iso[0], nvals[0], _NULL), "pack")
        return None
    # (SuiteSparse allocates with numpy's allocator: numpy can own and free what it allocated)
    claim_buffer(ffi, Ax[0], sizes[1], _BYTE)   # the values: freed when this array goes, right here
    # (small allocations come with slack: the whole block is owned, its first n bytes viewed)
    return claim_buffer(ffi, Ab[0], sizes[0], _INT8)[:n].reshape(shape), nvals[0]


def give_bitmap(M, bitmap: np.ndarray, nvals: int) -> bool:
    """A full M (held by row, or one column) made a bitmap with ``bitmap`` as its presence
    (int8 or bool, (nrows, ncols), C-ordered, owning its memory; SuiteSparse takes it over) and
    ``nvals`` entries. False, M and ``bitmap`` untouched, when either is not so."""
    calls = _calls(M, lib.GxB_FULL, *_FULL)
    # SuiteSparse takes over, and frees, the whole block: the array owning it (``bitmap`` or
    # its base, as take_bitmap's view), which ``bitmap`` must start
    base = bitmap if bitmap.base is None else bitmap.base
    if calls is None or bitmap.dtype not in (_INT8, _BOOL) or bitmap.shape != (M._nrows, M._ncols) or \
            not bitmap.flags.c_contiguous or not isinstance(base, np.ndarray) or not base.flags.owndata or \
            base.__array_interface__["data"][0] != bitmap.__array_interface__["data"][0]:
        return False
    unpack = calls[0]
    pack = lib.GxB_Matrix_pack_BitmapR if calls[0] is lib.GxB_Matrix_unpack_FullR else lib.GxB_Matrix_pack_BitmapC
    Ax, size, iso = ffi.new("void**"), ffi.new("GrB_Index*"), ffi.new("bool*")
    obj = M.gb_obj[0]
    check(unpack(obj, Ax, size, iso, _NULL), "unpack")
    Ab = ffi.new("int8_t**", ffi.from_buffer("int8_t*", base))
    check(pack(obj, Ab, Ax, base.nbytes, size[0], iso[0], nvals, _NULL), "pack")
    unclaim_buffer(base)   # SuiteSparse frees it now
    return True
