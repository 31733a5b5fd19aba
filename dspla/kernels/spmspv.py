"""A masked product of a static matrix with a sparse vector, pushed or pulled by the frontier's
size: direction-optimizing breadth-first search (Beamer, Asanović, Patterson, Direction-Optimizing
Breadth-First Search) for any semiring whose result does not depend on the order of its sums.

``a ⊕.⊗ q`` under a complemented mask (the unvisited nodes), ``q`` an n x 1 sparse vector, is
computed either way, with the same entries:

- pull: a dot product per unvisited row of ``a`` (held by row), against ``q`` as a bitmap; its
  work is about the unvisited rows' entries, whatever the frontier's size;
- push: ``pᵀ ⊕.⊗ q`` with ``p`` the transpose of ``a`` held by row (``a`` itself when it is
  symmetric, found at planning), SuiteSparse's saxpy over the rows of ``p`` that ``q`` selects;
  its work is the frontier's edges.

The rule is LAGraph's: pull when the frontier's edges exceed the unexplored ones over ``ALPHA``
(the unexplored ones estimated as the unvisited nodes times the mean degree), push while the
frontier has at most n / ``BETA`` nodes. Given the same counts, every rank decides alike. Each
step is a few C calls: at a BFS level of a few nodes python-graphblas's expressions cost more
than the product."""
from __future__ import annotations

import graphblas as gb
import numpy as np
from suitesparse_graphblas import ffi, lib

from .item import check, new_matrix

ALPHA = 8      # pull once the frontier's edges exceed the unexplored ones / ALPHA
BETA = 512     # push while the frontier holds at most n / BETA nodes
_ORDERLESS = frozenset({"any", "min", "max", "lor", "land"})
_SPARSE = lib.GxB_SPARSE | lib.GxB_HYPERSPARSE


def exact_either_way(sr, compute) -> bool:
    """Whether push and pull give bitwise the same result: the monoid selects or is logical, or
    the arithmetic is on integers (a float sum's rounding depends on its order)."""
    return sr.monoid.op.name in _ORDERLESS or compute.np.kind in "biu"


class Frontier:
    """One product's planning-time pieces: p (pᵀ = a), p's row degrees and their mean."""

    __slots__ = ("p", "deg", "mean", "_n", "_rows", "typed")

    def __init__(self, p):
        self.p = p
        counts = p.reduce_rowwise(gb.agg.count).new()
        deg = np.zeros(p.nrows, dtype=np.int64)
        idx, vals = counts.to_coo()
        deg[idx] = vals
        self.deg = deg
        self.mean = p.nvals / max(p.nrows, 1)
        self._n = ffi.new("GrB_Index*")
        self._rows = np.empty(0, dtype=np.uint64)
        self.typed: tuple | None = None   # the run's (operand signature, typed semiring, dtypes), resolved once

    def rows(self, q, nq: int) -> np.ndarray:
        """q's row indices (its n x 1 pattern) by one C call into a buffer kept between calls."""
        if self._rows.size < nq:
            self._rows = np.empty(max(nq, 2 * self._rows.size), dtype=np.uint64)
        self._n[0] = nq
        check(lib.GrB_Matrix_extractTuples_BOOL(ffi.from_buffer("GrB_Index[]", self._rows), ffi.NULL, ffi.NULL,
                                                self._n, q.gb_obj[0]), "extractTuples")
        return self._rows[:self._n[0]]

    def nvals(self, M) -> int:
        check(lib.GrB_Matrix_nvals(self._n, M.gb_obj[0]), "Matrix_nvals")
        return self._n[0]


def pulls(fr: Frontier, q, mask) -> bool:
    """Pull (True) or push, from the frontier q's size and edges and the mask's (visited) count."""
    n = q._nrows
    nq = fr.nvals(q)
    if nq * BETA <= n:
        return False
    unexplored = (n - fr.nvals(mask)) * fr.mean
    if nq * fr.mean * ALPHA > unexplored * 4:   # clearly pull, even by the mean degree
        return True
    return int(fr.deg[fr.rows(q, nq)].sum()) * ALPHA > unexplored


def product(fr: Frontier, a, q, semiring, gdt, mask, structure: bool, pull: bool):
    """C<¬mask> = a ⊕.⊗ q, pulled (dot products, q as a bitmap) or pushed (saxpy over p's rows).
    q's storage is set in place, as LAGraph does: its entries stay as they are."""
    C = new_matrix(gdt, a._nrows, q._ncols)
    check(lib.GxB_Matrix_Option_set_INT32(q.gb_obj[0], lib.GxB_SPARSITY_CONTROL, lib.GxB_BITMAP if pull else _SPARSE),
          "set")
    if pull:
        desc = lib.GrB_DESC_SC if structure else lib.GrB_DESC_C
        check(lib.GrB_mxm(C.gb_obj[0], mask.gb_obj[0], ffi.NULL, semiring.gb_obj, a.gb_obj[0], q.gb_obj[0], desc),
              "mxm")
    else:
        desc = lib.GrB_DESC_SCT0 if structure else lib.GrB_DESC_CT0
        check(lib.GrB_mxm(C.gb_obj[0], mask.gb_obj[0], ffi.NULL, semiring.gb_obj, fr.p.gb_obj[0], q.gb_obj[0],
                          desc), "mxm")
    return C
