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
frontier has at most n / ``BETA`` nodes. Given the same counts, every rank decides alike."""
from __future__ import annotations

import graphblas as gb
import numpy as np

ALPHA = 8      # pull once the frontier's edges exceed the unexplored ones / ALPHA
BETA = 512     # push while the frontier holds at most n / BETA nodes
_ORDERLESS = frozenset({"any", "min", "max", "lor", "land"})


def exact_either_way(sr, compute) -> bool:
    """Whether push and pull give bitwise the same result: the monoid selects or is logical, or
    the arithmetic is on integers (a float sum's rounding depends on its order)."""
    return sr.monoid.op.name in _ORDERLESS or compute.np.kind in "biu"


class Frontier:
    """One product's planning-time pieces: p (pᵀ = a), p's row degrees and their mean."""

    __slots__ = ("p", "deg", "mean")

    def __init__(self, p):
        self.p = p
        counts = p.reduce_rowwise(gb.agg.count).new()
        deg = np.zeros(p.nrows, dtype=np.int64)
        idx, vals = counts.to_coo()
        deg[idx] = vals
        self.deg = deg
        self.mean = p.nvals / max(p.nrows, 1)


def pulls(fr: Frontier, q, mask) -> bool:
    """Pull (True) or push, from the frontier q's size and edges and the mask's (visited) count."""
    n = q.nrows
    nq = q.nvals
    if nq * BETA <= n:
        return False
    unexplored = (n - mask.nvals) * fr.mean
    rows = q.to_coo(values=False)[0]
    edges = int(fr.deg[rows].sum())
    return edges * ALPHA > unexplored


def product(fr: Frontier, a, q, op, compute, mask, pull: bool):
    """C<mask> = a ⊕.⊗ q, pulled (dot products, q as a bitmap) or pushed (saxpy over p's rows)."""
    # q's storage is set in place, as LAGraph does: its entries stay as they are
    C = gb.Matrix(compute.gb, a.nrows, q.ncols)
    if pull:
        q.ss.config["sparsity_control"] = ["bitmap"]
        C(mask=mask) << a.mxm(q, op)
    else:
        q.ss.config["sparsity_control"] = ["sparse", "hypersparse"]
        C(mask=mask) << fr.p.T.mxm(q, op)
    return C
