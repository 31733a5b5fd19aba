"""Which values are provably full (every entry present), proved at planning time.

Messages of a full operand carry values only (zero-copy into GraphBLAS); others carry a
presence bitmap too. The receiver must know which before the message arrives, so the proof is
made once, from each op's fact rule (its definition's, ops/define/facts.py says what they
mean) and the actual static data, never per iteration.

A value with missing entries can still be full wherever a product reads it: PageRank's
r / outdeg misses the dangling nodes, whose columns of Aᵀ are empty. ``over`` records which
static values bound its missing rows, and ``covers`` checks, against the static operand
itself, that the product reads no other row.
"""
from __future__ import annotations

import graphblas as gb

from ..ir import Node, Op
from ..kernels.gbops import occupied
from ..ops import table
from ..ops.define import NOTHING, Facts, meet
from ..ops.define.facts import sized, sizes_known

FACTS = table("facts")   # op -> its rule (the op's definition, dspla/ops)


def of_matrix(M, lines: bool = True) -> Facts:
    """M's facts; without ``lines``, whether it is full only (no reductions over it)."""
    if M.nvals == M.nrows * M.ncols:
        return Facts(True)
    if not lines:
        return Facts(False)
    return Facts(False, occupied(M, "rows").nvals == M.nrows, occupied(M, "cols").nvals == M.ncols)


def full_rows(M):
    """The rows of M with every entry present, as a sparse vector of their positions."""
    if M.ncols == 1:
        return occupied(M, "rows")
    counts = M.reduce_rowwise(gb.agg.count).new()
    return counts.select("==", M.ncols).new()


def covers(S, bounds: list) -> bool:
    """Whether every column of S with an entry is a row full in every matrix of ``bounds``: then
    S ⊕.⊗ B reads only present entries of a B whose ``over`` they are."""
    need = occupied(S, "cols")
    for Z in bounds:
        if Z.nrows != S.ncols:
            return False
        if need.ewise_mult(full_rows(Z), gb.binary.first).new().nvals != need.nvals:
            return False
    return True


def prove(order: list[Node], static: dict, given: dict | None = None, lines: bool = True,
          sizes: dict | None = None) -> dict[int, Facts]:
    """``static``: id(node) -> its computed GraphBLAS value, for the nodes computed at planning;
    ``given``: facts of a sub-program's inputs, by name; ``lines``: prove of the static values
    whether every row / column has an entry (two reductions over each), not only fullness;
    ``sizes``: the dims' sizes (default: those of the proof this one is part of)."""
    with sizes_known(sizes) as sizes:
        f: dict[int, Facts] = {}
        for n in order:
            if id(n) in static:
                f[id(n)] = of_matrix(static[id(n)], lines)
                f[id(n)].over = frozenset() if f[id(n)].full else frozenset({id(n)})
            elif given is not None and n.op is Op.INPUT and n.attr("name") in given:
                f[id(n)] = given[n.attr("name")]
            else:
                f[id(n)] = FACTS[n.op](n, [f[id(x)] for x in n.args])
            if isinstance(f[id(n)], Facts):   # (a loop's is a tuple of its carried values')
                f[id(n)] = sized(f[id(n)], n, sizes)
        return f


__all__ = ["FACTS", "NOTHING", "Facts", "covers", "full_rows", "meet", "of_matrix", "prove"]
