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

The rule is Beamer's as LAGraph applies it, on counts every rank has alike (the frontier's
size over all ranks, which the loop's test computes, and its size at the last level): while the
frontier grows, pull once it holds more than n / ``ALPHA`` nodes; while it shrinks, push once it
holds at most n / ``BETA``. Each step is a few C calls: at a BFS level of a few nodes
python-graphblas's expressions cost more than the product."""
from __future__ import annotations

from suitesparse_graphblas import ffi, lib

from .item import check, new_matrix

ALPHA = 16     # growing: pull once the frontier holds more than n / ALPHA nodes
BETA = 256     # shrinking: push once it holds at most n / BETA
_ORDERLESS = frozenset({"any", "min", "max", "lor", "land"})
_SPARSE = lib.GxB_SPARSE | lib.GxB_HYPERSPARSE


def exact_either_way(sr, compute) -> bool:
    """Whether push and pull give bitwise the same result: the monoid selects or is logical (a
    float sum's rounding depends on its order). Integer products are left to the checked path
    (kernels/overflow.py)."""
    return sr.monoid.op.name in _ORDERLESS and compute.np.kind in "bf"


class Frontier:
    """One product's pieces: p (pᵀ = a, made at planning), the graph's n, and the frontier's size
    at the last level (the same on every rank: the rule's only state)."""

    __slots__ = ("p", "n", "last", "_n", "typed", "copied")

    def __init__(self, p, n: int, copied: bool = True):
        self.p, self.n, self.last, self.copied = p, n, 0, copied
        self._n = ffi.new("GrB_Index*")
        self.typed: tuple | None = None   # the run's (operand signature, typed semiring, dtypes), resolved once

    @property
    def nvals(self) -> int:
        """The entries it holds apart from a (the cost model's memory count): p's, when a copy."""
        return self.p.nvals if self.copied else 0

    def entries(self, M) -> int:
        check(lib.GrB_Matrix_nvals(self._n, M.gb_obj[0]), "Matrix_nvals")
        return self._n[0]


def pulls(fr: Frontier, nq: int) -> bool:
    """Pull (True) or push, from the frontier's size over all ranks."""
    growing, fr.last = nq > fr.last, nq
    return nq * (ALPHA if growing else BETA) > fr.n


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
