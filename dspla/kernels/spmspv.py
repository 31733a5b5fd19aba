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

The rule is Beamer's as LAGraph applies it. In one process it weighs edges: while pushing and
growing, pull once the frontier's edges (the sum of its nodes' entries in p, one C call) exceed
the edges not yet explored / ``ALPHA_EDGES``; once pulled, pull again only when the frontier grows
past n / ``BETA1``; back to push when it shrinks to n / ``BETA2`` (LAGraph's constants; the rule is
kernels/traverse.py's ``rule``, compiled there too); never pull once fewer than n
edges are left (on soc-Slashdot0902 this pulls its second level, a hub's 126K edges, 1.9 against
2.7 ms pushed). Across ranks the rule reads counts every rank has alike (the frontier's size over
all ranks, which the loop's test computes): while the frontier grows, pull once it holds more
than n / ``ALPHA`` nodes; while it shrinks, push once it holds at most n / ``BETA``. Each step is
a few C calls: at a BFS level of a few nodes python-graphblas's expressions cost more than the
product."""
from __future__ import annotations

import graphblas as gb
import numpy as np
from suitesparse_graphblas import ffi, lib

from .item import check, new_matrix
from .traverse import rule, wants_edges

ALPHA = 16     # growing: pull once the frontier holds more than n / ALPHA nodes
BETA = 256     # shrinking: push once it holds at most n / BETA
_ORDERLESS = frozenset({"any", "min", "max", "lor", "land"})
_SPARSE = lib.GxB_SPARSE | lib.GxB_HYPERSPARSE
_INT64 = gb.dtypes.INT64
PLUS_FIRST = gb.semiring.plus_first[_INT64]


def exact_either_way(sr, compute) -> bool:
    """Whether push and pull give bitwise the same result: the monoid selects or is logical (a
    float sum's rounding depends on its order). Integer products are left to the checked path
    (kernels/overflow.py)."""
    return sr.monoid.op.name in _ORDERLESS and compute.np.kind in "bf"


class Frontier:
    """One product's pieces: p (pᵀ = a, made at planning), the graph's n, and the rule's state:
    the frontier's size at the last level (the same on every rank) and, in one process, the
    direction, the edges not yet explored and whether any level was pulled (``start`` resets it
    when a loop starts)."""

    __slots__ = ("p", "n", "last", "_n", "typed", "copied", "pushing", "unexplored", "any_pull", "_deg", "_e", "edges")

    def __init__(self, p, n: int, copied: bool = True):
        self.p, self.n, self.copied = p, n, copied
        self._n = ffi.new("GrB_Index*")
        self.typed: tuple | None = None   # the run's (operand signature, typed semiring, dtypes), resolved once
        self._deg = self._e = None        # pushing one node's edges (1 x n), a 1 x 1 for their sum: made once
        self.edges = self.entries(p)      # (p is static: python-graphblas's nvals costs ~10 us a loop)
        self.start()

    def start(self):
        self.last, self.pushing, self.any_pull = 0, True, False
        self.unexplored = self.edges

    @property
    def nvals(self) -> int:
        """The entries it holds apart from a (the cost model's memory count): p's, when a copy."""
        return self.edges if self.copied else 0

    def entries(self, M) -> int:
        check(lib.GrB_Matrix_nvals(self._n, M.gb_obj[0]), "Matrix_nvals")
        return self._n[0]


def pulls(fr: Frontier, nq: int) -> bool:
    """Pull (True) or push, from the frontier's size over all ranks."""
    growing, fr.last = nq > fr.last, nq
    return nq * (ALPHA if growing else BETA) > fr.n


def pulls_by_edges(fr: Frontier, q, nq: int) -> bool:
    """Pull (True) or push the frontier q of nq nodes, in one process (the module's rule)."""
    edges = frontier_edges(fr, q) if wants_edges(fr.pushing, fr.any_pull, fr.unexplored, fr.n) else 0
    fr.pushing, fr.any_pull, fr.unexplored = rule(fr.pushing, fr.any_pull, fr.last, fr.unexplored, fr.n, nq, edges)
    fr.last = nq
    return not fr.pushing


def degrees(fr: Frontier):
    """(p's row counts as a full n x 1 column, a 1 x 1 for their sum), made once: a full column,
    as q is held, so their dot product reads q's entries only."""
    if fr._deg is None:
        counts = fr.p.apply(gb.unary.one[_INT64]).reduce_rowwise(gb.monoid.plus).new().to_dense(fill_value=0)
        fr._deg = gb.Matrix.from_dense(counts.reshape(-1, 1).astype(np.int64))
        fr._e = new_matrix(_INT64, 1, 1)
    return fr._deg, fr._e


def frontier_edges(fr: Frontier, q) -> int:
    """The entries of p's rows that q selects (the edges a push would touch): p's row counts
    times q, one C call."""
    deg, e = degrees(fr)
    check(lib.GrB_mxm(e.gb_obj[0], ffi.NULL, ffi.NULL, PLUS_FIRST.gb_obj, deg.gb_obj[0], q.gb_obj[0],
                      lib.GrB_DESC_T0), "mxm")
    # (into fr's own cell: item() makes one and looks the type up, a few us at every pushed level)
    info = lib.GrB_Matrix_extractElement_UINT64(fr._n, e.gb_obj[0], 0, 0)
    check(info, "extractElement")
    return 0 if info == lib.GrB_NO_VALUE else fr._n[0]


class Handle:
    """A GrB_Matrix without python-graphblas's Matrix around it: a fused traversal's levels, made
    and dropped at every level. It has no reference cycle (a Matrix and its ``ss`` accessor hold
    each other), so it is freed when let go, with no collection (``matrix`` hands it over)."""

    __slots__ = ("gb_obj", "_nrows", "_ncols", "dtype")

    def __init__(self, gdt, nrows: int, ncols: int):
        self.gb_obj = ffi.new("GrB_Matrix*")
        check(lib.GrB_Matrix_new(self.gb_obj, gdt.gb_obj, nrows, ncols), "Matrix_new")
        self._nrows, self._ncols, self.dtype = nrows, ncols, gdt

    def matrix(self) -> gb.Matrix:
        """The same matrix as a python-graphblas Matrix, which owns it from then on."""
        M, self.gb_obj = gb.Matrix._from_obj(self.gb_obj, self.dtype, self._nrows, self._ncols), None
        return M

    def __del__(self):
        if self.gb_obj is not None:
            lib.GrB_Matrix_free(self.gb_obj)


DESC = {(pull, structure, replace): getattr(lib, f"GrB_DESC_{'R' if replace else ''}{'S' if structure else ''}C"
                                                f"{'' if pull else 'T0'}")
         for pull in (True, False) for structure in (True, False) for replace in (True, False)}


def product(fr: Frontier, a, q, semiring, gdt, mask, structure: bool, pull: bool, make=new_matrix, into=None):
    """C<¬mask> = a ⊕.⊗ q, pulled (dot products, q as a bitmap) or pushed (saxpy over p's rows).
    q's storage is set in place, as LAGraph does: its entries stay as they are. C's is the
    direction's. ``make``: C's constructor (new_matrix or Handle); ``into``: a matrix of C's
    dtype and shape written instead, its entries replaced (q itself, as LAGraph writes each
    level into its frontier: GraphBLAS reads the operands before it writes)."""
    sparsity = lib.GxB_BITMAP if pull else _SPARSE
    check(lib.GxB_Matrix_Option_set_INT32(q.gb_obj[0], lib.GxB_SPARSITY_CONTROL, sparsity), "set")
    if into is None:
        C = make(gdt, a._nrows, q._ncols)
        # C kept as the product makes it (a pull's bitmap, a push's sparse list): left to choose, SuiteSparse
        # converts a small pulled level to a sparse list, and the next level's pull converts it back
        check(lib.GxB_Matrix_Option_set_INT32(C.gb_obj[0], lib.GxB_SPARSITY_CONTROL, sparsity), "set")
    else:
        C = into
        if into is not q:
            check(lib.GxB_Matrix_Option_set_INT32(C.gb_obj[0], lib.GxB_SPARSITY_CONTROL, sparsity), "set")
    A = a if pull else fr.p
    check(lib.GrB_mxm(C.gb_obj[0], mask.gb_obj[0], ffi.NULL, semiring.gb_obj, A.gb_obj[0], q.gb_obj[0],
                      DESC[pull, structure, into is not None]), "mxm")
    return C
