"""Output buffers taken back once nothing else holds them.

A product's full output (n x K values) costs a fresh allocation and a fill on every call: at
K = 16 on soc-Slashdot0902 that was a third of the call. Writing into the previous call's output
instead is safe only when no one holds it any more: not the user (an ``Array`` of an earlier
result), not a carried loop value, not another slot. CPython's reference count says so exactly:
a matrix that only the pool holds has a fixed count, measured once below (with python-graphblas's
own back-references from ``M.ss``, and without them: what the pool keeps is made acyclic,
kernels/acyclic.py, so a result the caller lets go is freed at once). Anything else keeps it: the
caller allocates as before.

A value still held when its instruction runs again keeps it from being reused: a loop-carried
value (the next iteration reads it) or the caller's last result in ``out = f(...)``, which
``out`` holds until the call returns. So an instruction keeps its last two outputs and they
alternate: the one held is left alone, the other written into. A second is kept only after the
latest was found in use, so a caller who drops each result before the next call retains one;
one who holds it across the call already had two alive at that call (the held one and the new
one), and the pool keeps no more than that between calls. (Until 2026-11-27 only outputs of up to
2^20 entries got a second: at K = 16 on soc-Slashdot0902 ``out = f(...)`` then took 3.35 ms a
call against 2.71 with the result dropped, a new output and presence bitmap on every call.)
"""
from __future__ import annotations

import sys

import graphblas as gb

from ..ir.types import DType
from .acyclic import acyclic
from .item import fill


class Pool:
    """key (an instruction) -> the matrices it produced last (the latest first); ``take``
    returns one that is free."""

    __slots__ = ("_held", "hits")

    def __init__(self):
        self._held: dict = {}
        self.hits = 0   # matrices handed back (what the tests and the stats see)

    def keep(self, key, M):
        acyclic(M)   # freed when nothing holds it, not when the collector runs (kernels/acyclic.py)
        held = self._held.get(key)
        if held and held[0] is not M:   # (held: the one take found in use, or the other of two)
            self._held[key] = (M, held[0])
        else:
            self._held[key] = (M,)

    def take(self, key):
        held = self._held.pop(key, None)
        if not held:
            return None
        for k in range(len(held)):   # (not enumerate: its reused result tuple would hold M too)
            M = held[k]
            # (what the pool keeps of python-graphblas's Matrix is acyclic: keep made it so)
            alone = _ALONE_ACYCLIC if type(M) is gb.Matrix else _ALONE
            if sys.getrefcount(M) == alone + 1:   # (+1: the tuple holds it too)
                rest = held[:k] + held[k + 1:]
                if rest:
                    self._held[key] = rest
                self.hits += 1
                return M
        self._held[key] = held[:1]   # still in use (carried, or the caller's): a candidate next time
        return None

    def clear(self):
        self._held.clear()


def _alone(weak: bool) -> int:
    held = {0: acyclic(gb.Matrix(float, 2, 2)) if weak else gb.Matrix(float, 2, 2)}
    M = held.pop(0)
    return sys.getrefcount(M)


_ALONE, _ALONE_ACYCLIC = _alone(False), _alone(True)


def refill(M, nrows: int, ncols: int, value, dtype: DType):
    """M made a full nrows x ncols matrix holding ``value`` everywhere; None when M cannot be
    (another shape or dtype: the caller allocates). SuiteSparse's scalar assignment makes M
    iso-valued at once, and the product accumulating into it expands it with all threads
    (measured at K = 16 on soc-Slashdot0902: 0.7 ms over the product, where a numpy fill of
    the values took 1.8 ms)."""
    if M is None or value is None or M.shape != (nrows, ncols) or M.dtype != dtype.gb or nrows * ncols == 0:
        return None
    return fill(M, dtype.np.type(value).item())
