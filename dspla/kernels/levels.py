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
goes through the typed apply (``pattern_writer``'s C call), whose work is its entries. The
arrays are taken from the matrices and handed back (GxB unpack / pack: pointers moved, nothing
copied); q never meets C (the frontier is computed under C's complement), so C's count grows by
q's.

numba's first use in a process costs about 0.15 s (its compilation, once per installation, 0.2 s
more): a graph of fewer than ``MIN_NODES`` nodes, whose levels GraphBLAS writes in tens of us at
most, is written by GraphBLAS.
"""
from __future__ import annotations

import numpy as np
from suitesparse_graphblas import ffi, lib

from . import traverse
from .item import check, pattern_writer
from .traverse import address

_WORDS = {"INT64": np.int64, "FP64": np.float64}
MIN_NODES = 1 << 14


def _status(M, what, cell) -> int:
    check(lib.GxB_Matrix_Option_get_INT32(M.gb_obj[0], what, cell), "get")
    return cell[0]


class LevelWriter:
    """``writer(C, q, value)`` for n x 1 matrices C of python-graphblas dtype ``name`` (module
    docstring), made once per loop (its arrays kept: fresh ones fault their pages in at every
    call); ``start(C)`` before a run of the loop, ``finish(C)`` after it, even when it fails. The
    stamps are kernels/traverse.py's compiled ``write`` and ``settle_into``, which its compiled
    loop calls too, on this writer's arrays."""

    def __init__(self, name: str):   # (INT64 or FP64: the depths a traversal counts)
        self.slow = pattern_writer(name)
        self.stamp = np.zeros(0, np.uint8)
        self.values = np.zeros(256, np.int64)   # level number -> its value's bits (0: none)
        self.typed = self.values.view(_WORDS[name])
        self.levels, self.fast, self.cell = 0, False, ffi.new("int32_t*")
        self.kind, self.cells, self.value = name, np.zeros(16, np.int64), int if name == "INT64" else float
        self.second = address(getattr(lib, f"GrB_SECOND_{name}"))   # (the apply of a level not stamped)

    def start(self, C):
        n = C._nrows
        if len(self.stamp) != n:
            self.stamp = np.zeros(n, np.uint8)
        self.levels = 0
        self.fast = n >= MIN_NODES and _bitmap_col(C, self.cell)
        if self.fast:
            self.kernels = traverse.compiled()   # (None: numba's compiler switched off)
            self.fast = self.kernels is not None
            self.calls = traverse.calls(self.kind)

    def __call__(self, C, q, value):
        if not self.fast:
            return self.slow(C, q, value)
        code, where, self.levels = self.kernels.write(
            self.calls, self.cells, address(q.gb_obj[0]), address(C.gb_obj[0]), self.second, self.stamp, self.values,
            self.typed, C._nrows, self.levels, self.value(value))
        check(code, traverse.NAMES[where])

    def finish(self, C):
        """The stamped levels' values written into C, the stamps cleared."""
        if not self.levels:
            return
        code, where = self.kernels.settle_into(self.calls, address(C.gb_obj[0]), self.cells, self.stamp,
                                               self.values, self.levels, C._nrows)
        self.levels = 0
        check(code, traverse.NAMES[where])


def _bitmap_col(M, cell) -> bool:
    return _status(M, lib.GxB_SPARSITY_STATUS, cell) == lib.GxB_BITMAP and _status(M, lib.GxB_FORMAT, cell) == \
        lib.GxB_BY_COL


__all__ = ["LevelWriter"]
