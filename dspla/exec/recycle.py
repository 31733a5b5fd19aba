"""Output buffers taken back once nothing else holds them.

A product's full output (n x K values) costs a fresh allocation and a fill on every call: at
K = 16 on soc-Slashdot0902 that was a third of the call. Writing into the previous call's output
instead is safe only when no one holds it any more: not the user (an ``Array`` of an earlier
result), not a carried loop value, not another slot. CPython's reference count says so exactly:
a matrix that only the pool holds has a fixed count (python-graphblas's own back-references
from ``M.ss`` included), measured once below. Anything else keeps it: the pool then drops it
and the caller allocates as before.
"""
from __future__ import annotations

import sys

import graphblas as gb

from ..ir.types import DType


class Pool:
    """key (an instruction) -> the matrix it produced last; ``take`` returns it when it is free."""

    __slots__ = ("_held", "hits")

    def __init__(self):
        self._held: dict = {}
        self.hits = 0   # matrices handed back (what the tests and the stats see)

    def keep(self, key, M):
        self._held[key] = M

    def take(self, key):
        M = self._held.pop(key, None)
        if M is not None and sys.getrefcount(M) == _ALONE:
            self.hits += 1
            return M
        return None

    def clear(self):
        self._held.clear()


def _alone() -> int:
    p = Pool()
    p.keep(0, gb.Matrix(float, 2, 2))
    M = p._held.pop(0)
    return sys.getrefcount(M)


_ALONE = _alone()


def refill(M, nrows: int, ncols: int, value, dtype: DType):
    """M made a full nrows x ncols matrix holding ``value`` everywhere; None when M cannot be
    (another shape or dtype: the caller allocates). SuiteSparse's scalar assignment makes M
    iso-valued at once, and the product accumulating into it expands it with all threads
    (measured at K = 16 on soc-Slashdot0902: 0.7 ms over the product, where a numpy fill of
    the values took 1.8 ms)."""
    if M is None or value is None or M.shape != (nrows, ncols) or M.dtype != dtype.gb or nrows * ncols == 0:
        return None
    M[:, :] << dtype.np.type(value)
    return M
