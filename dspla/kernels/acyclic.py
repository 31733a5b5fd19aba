"""Matrices freed by their reference count, not by the cyclic collector.

python-graphblas gives every Matrix an accessor, ``M.ss``, that holds M (twice: the accessor and
its ``config``), so every matrix is a reference cycle and a dead one waits for the cyclic
collector. That is cheap for a run's temporaries, which the session collects with the young
generations after each run (runtime/process.py). It is not for what outlives a run (the results
handed to the caller, the conversions of the inputs kept for the next call): they are in the
oldest generation by the time they die, and only a full collection, which scans every object
the program holds, frees them; until then each one keeps its n x K values.

``acyclic(M)`` replaces M's accessor by one that reaches M through a weak reference and makes
python-graphblas's accessor afresh on each use, so M has no cycle and is freed the moment its
last holder lets go.
"""
from __future__ import annotations

import weakref

import graphblas as gb
from graphblas.core.ss.matrix import ss as _SS


class WeakSS:
    """``M.ss`` for an acyclic M: python-graphblas's accessor, made for each attribute read."""

    __slots__ = ("_matrix",)

    def __init__(self, M: gb.Matrix):
        self._matrix = weakref.ref(M)

    def __getattr__(self, name: str):
        M = self._matrix()
        if M is None:   # (only reachable through a reference to this accessor kept past M)
            raise ReferenceError("the matrix of this accessor has been freed")
        return getattr(_SS(M), name)


def acyclic(M):
    """M (a python-graphblas Matrix) without its reference cycle; other values as they are."""
    if type(M) is gb.Matrix and type(M.ss) is _SS:
        M.ss = WeakSS(M)
    return M


def is_acyclic(M) -> bool:
    return type(M.ss) is WeakSS
