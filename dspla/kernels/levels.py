"""A traversal's levels written into the values it has reached: ``C<struct(q)> = value`` at each
level, for a bitmap n x 1 ``C`` (held by column, as SuiteSparse holds an n x 1 matrix) and the
pulled levels' bitmap frontiers ``q``, on their own arrays.

SuiteSparse 9.4 writes a bitmap through its generic subassign, 2-3 ns an entry of C whatever q
holds: on soc-Slashdot0902 (82K nodes) 0.7 ms of a 2.4 ms breadth-first search. Here a pulled
level sets C's presence bytes (``Cb |= qb``) and stamps its nodes with the level's number in a
byte array (``stamp |= qb * level``): one branch-free pass over bytes, a few us there. The values
are written once, when the loop ends (or every 255 levels), by ``finish``: each stamped slot
takes its level's value from a table, bit for bit (values seen as 64-bit words), in one pass
compiled by numba (60 us there; numpy's passes over 64-bit words took 310; both kernels are in
kernels/traverse.py). Until then the stamped slots of C hold no values, which nothing reads: the
loop reads C only as the structure of its mask. A level whose frontier is a sparse list (pushed)
goes through ``pattern_writer``'s C call, whose work is its entries. The arrays are taken from
the matrices and handed back (GxB unpack / pack: pointers moved, nothing copied); q never meets
C (the frontier is computed under C's complement), so C's count grows by q's.

numba's first use in a process costs about 0.15 s (its compilation, once per installation, 0.2 s
more): a graph of fewer than ``MIN_NODES`` nodes, whose levels GraphBLAS writes in tens of us at
most, is written by GraphBLAS.
"""
from __future__ import annotations

import numpy as np
from suitesparse_graphblas import ffi, lib

from . import traverse
from .item import check, pattern_writer

_WORDS = {"INT64": np.int64, "FP64": np.float64}
_SPARSITY, _BITMAP = lib.GxB_SPARSITY_STATUS, lib.GxB_BITMAP
MIN_NODES = 1 << 14


class _Arrays:
    """A bitmap n x 1 matrix's arrays, unpacked (its presence bytes, values, sizes, count)."""

    __slots__ = ("b", "x", "b_size", "x_size", "iso", "nvals")

    def __init__(self):
        self.b, self.x = ffi.new("int8_t**"), ffi.new("void**")
        self.b_size, self.x_size = ffi.new("GrB_Index*"), ffi.new("GrB_Index*")
        self.iso, self.nvals = ffi.new("bool*"), ffi.new("GrB_Index*")

    def unpack(self, M):
        check(lib.GxB_Matrix_unpack_BitmapC(M.gb_obj[0], self.b, self.x, self.b_size, self.x_size, self.iso,
                                            self.nvals, ffi.NULL), "unpack")

    def pack(self, M, nvals: int):
        check(lib.GxB_Matrix_pack_BitmapC(M.gb_obj[0], self.b, self.x, self.b_size[0], self.x_size[0],
                                          self.iso[0], nvals, ffi.NULL), "pack")


def _status(M, what, cell=None) -> int:
    cell = cell if cell is not None else ffi.new("int32_t*")
    check(lib.GxB_Matrix_Option_get_INT32(M.gb_obj[0], what, cell), "get")
    return cell[0]


class LevelWriter:
    """``writer(C, q, value)`` for n x 1 matrices C of python-graphblas dtype ``name`` (module
    docstring), made once per loop (its arrays kept: fresh ones fault their pages in at every
    call); ``start(C)`` before a run of the loop, ``finish(C)`` after it, even when it fails."""

    def __init__(self, name: str):   # (INT64 or FP64: the depths a traversal counts)
        self.slow = pattern_writer(name)
        self.c, self.f = _Arrays(), _Arrays()
        self.stamp = np.zeros(0, np.uint8)
        self.values = np.zeros(256, np.int64)   # level number -> its value's bits (0: none)
        self.typed = self.values.view(_WORDS[name])
        self.levels, self.fast, self.cell = 0, False, ffi.new("int32_t*")
        # (for kernels/traverse.py's compiled loop, which writes as this does: its type, SECOND, cells)
        self.kind, self.second, self.cells = name, getattr(lib, f"GrB_SECOND_{name}"), np.zeros(16, np.int64)

    def start(self, C):
        n = C._nrows
        if len(self.stamp) != n:
            self.stamp = np.zeros(n, np.uint8)
        self.levels = 0
        self.fast = n >= MIN_NODES and _bitmap_col(C, self.cell)
        if self.fast:
            kernels = traverse.compiled()   # (None: numba's compiler switched off)
            self.fast = kernels is not None
            if self.fast:
                self.kernels = kernels.stamp, kernels.settle

    def __call__(self, C, q, value):
        if not self.fast or _status(q, _SPARSITY, self.cell) != _BITMAP:
            return self.slow(C, q, value)
        if self.levels == 255:
            self.finish(C)
        c, f, n = self.c, self.f, C._nrows
        c.unpack(C)
        if c.iso[0]:   # (one value for all: GraphBLAS expands it)
            c.pack(C, c.nvals[0])
            return self.slow(C, q, value)
        f.unpack(q)
        try:
            self.levels += 1
            self.typed[self.levels] = value
            self.kernels[0](self.stamp, np.frombuffer(ffi.buffer(c.b[0], n), np.uint8),
                           np.frombuffer(ffi.buffer(f.b[0], n), np.uint8), np.uint8(self.levels))
        finally:
            nq = f.nvals[0]
            f.pack(q, nq)
            c.pack(C, c.nvals[0] + nq)

    def finish(self, C):
        """The stamped levels' values written into C (``_settle``), the stamps cleared."""
        if not self.levels:
            return
        c, n = self.c, C._nrows
        c.unpack(C)
        try:
            self.kernels[1](np.frombuffer(ffi.buffer(c.x[0], 8 * n), np.int64), self.stamp, self.values, self.levels)
        finally:
            c.pack(C, c.nvals[0])
        self.levels = 0


def _bitmap_col(M, cell) -> bool:
    return _status(M, lib.GxB_SPARSITY_STATUS, cell) == lib.GxB_BITMAP and _status(M, lib.GxB_FORMAT, cell) == \
        lib.GxB_BY_COL


__all__ = ["LevelWriter"]
