"""2d — CAGNET's 2D SUMMA SpMM (§IV-C) on a sqrt(P) x sqrt(P) grid.

Rank r = (i, j) = (r // s, r % s). Row block i of A and C is the union of the 1D rows of
process row i; block k of A's columns / B's rows the union of the 1D rows of process row k;
the K columns of B and C are split into s ranges J_j. Redistribution is explicit: an all-to-all
inside each process row turns B's 1D rows into blocks B_kj (and C_ij back into 1D rows at the
end). Stage k: P(i, k) broadcasts the sparse A_ik along row i, P(k, j) broadcasts B_kj down
column j, and C_ij ⊕= A_ik ⊗ B_kj. The sparse matrix moves every product, as in the paper.
Non-square P is rejected (the rectangular-grid variant is not implemented).
"""
from __future__ import annotations

import math

import numpy as np

from ...instr import Alltoall, Bcast, BcastSparse, DropRows, Fill, Free, MxM
from ...kernels.buffers import csr_pack
from . import register_plan
from .p2p1d import column_groups, narrow_only, split_by_owner


def _check(ctx):
    if ctx.masked:
        return "2d does not run masked products (its blocks of C span other processes' rows)"
    if ctx.b_wide:
        return narrow_only(ctx)
    s = math.isqrt(ctx.P)
    if s * s != ctx.P:
        return (f"2d needs a square process count (s x s grid); P={ctx.P} is not square: "
                "use p2p1d, 15d or shift1d (with a replication c dividing P)")
    return None


def k_ranges(K: int, s: int) -> list:
    cuts = np.linspace(0, K, s + 1).round().astype(int)
    return [(int(cuts[j]), int(cuts[j + 1])) for j in range(s)]


@register_plan("2d", check=_check, spmd=True)
def lower(ctx):
    """CAGNET 2D SUMMA on a square grid: A and B broadcast along rows and columns."""
    rows, cols, K, P = ctx.rows, ctx.cols, ctx.K, ctx.P
    s = math.isqrt(P)
    J = k_ranges(K, s)
    prow = ctx.add_split([r // s for r in range(P)])
    pcol = ctx.add_split([r % s for r in range(P)])
    blk_cols, blk_rows = column_groups(cols, s)
    dtype, presence = ctx.b_dtype.value, not ctx.b_full
    in_place = ctx.in_place
    def dest(sender):   # SPMD planning: an entry of column block j goes to rank (sender's row, j)
        return (sender // s) * s + cols.parts // s

    def block_row(i: int, r: int):
        """(I, the blocks A_ik rank r needs: all of them, or under SPMD planning its own A_ij)."""
        I = np.concatenate([rows.owned[m] for m in range(i * s, (i + 1) * s)])
        return I, split_by_owner(ctx.block_rows(r, I, dest), list(enumerate(blk_cols)))

    blocks_of_row = {i: block_row(i, i * s) for i in range(s)} if ctx.me is None else \
        {ctx.me // s: block_row(ctx.me // s, ctx.me)}
    # what every rank needs of the others' blocks A_ik: their entries, for the broadcasts' buffers
    nnz = ctx.per_rank(lambda r: int(blocks_of_row[r // s][1][r % s].nnz))
    for r in ctx.ranks:
        i, j = divmod(r, s)
        I, blocks = blocks_of_row[i]
        width = J[j][1] - J[j][0]
        prog = []
        # B: 1D rows -> block (row block i... of B's rows, columns J_j), inside process row i
        Bij = ctx.slot()
        nmine = int(cols.counts[r])
        prog.append(Alltoall(Bij, ctx.b, tuple(np.arange(nmine) for _ in range(s)), tuple(J),
                             tuple((int(cols.counts[i * s + m]), width) for m in range(s)), "rows", dtype, j,
                             presence=presence, group=prow, product=ctx.index))
        C = ctx.slot()
        if in_place:
            prog.append(Fill(C, I.size, width, ctx.semiring.monoid, ctx.compute.value, product=ctx.index))
        for k in range(s):
            Aik, Bkj = ctx.slot(), ctx.slot()
            blk = blocks[k]
            if j == k:  # this rank owns A_ik: it broadcasts along its process row
                src, own = ctx.const(r, csr_pack(blk, ctx.compute)), ctx.const(r, ctx.gb(blk))
            else:
                src = own = None
            prog.append(BcastSparse(Aik, src, own, k, blk.shape[0], blk.shape[1], nnz[i * s + k], ctx.compute.value,
                                    group=prow, product=ctx.index))
            prog.append(Bcast(Bkj, Bij if i == k else None, k, int(blk_rows[k]), width, dtype, presence=presence,
                              group=pcol, product=ctx.index))
            prog.append(MxM(C, Aik, Bkj, ctx.semiring, accumulate=in_place or k > 0, product=ctx.index))
            prog.append(Free((Aik, Bkj)))
        prog.append(Free((Bij,)))
        # C_ij -> this process row's 1D rows, all K columns
        offs = np.r_[0, np.cumsum(rows.counts[i * s:(i + 1) * s])]
        prog.append(Alltoall(ctx.out, C, tuple(np.arange(offs[m], offs[m + 1]) for m in range(s)),
                             tuple((0, width) for _ in range(s)),
                             tuple((int(rows.counts[r]), J[m][1] - J[m][0]) for m in range(s)), "cols",
                             ctx.compute.value, j, presence=not in_place, group=prow, product=ctx.index))
        prog.append(Free((C,)))
        A_r_rows = np.diff(ctx.rows_of(r).indptr)
        empty = np.flatnonzero(A_r_rows == 0)
        if in_place and empty.size:
            prog.append(DropRows(ctx.out, empty, product=ctx.index))
        ctx.emit_rank(r, prog)
