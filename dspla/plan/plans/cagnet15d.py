"""15d — CAGNET's 1.5D block-row algorithm (§IV-B, Algorithm 2) with replication c.

Ranks form a P/c x c grid, rank r = (i, j) = (r // c, r % c). Block row i of A, B and C is the
union of the 1D rows of process row i, replicated on its c members: B's block row by an
Allgather inside the process row (the explicit redistribution step). Process column j owns the
chunk j of block columns: for each block k in it, P(k, j) broadcasts B_k down column j and every
P(i, j) adds A_ik ⊗ B_k to its partial sum; an Allreduce with the semiring's monoid across the
process row completes C_i, of which each rank keeps its own 1D rows.
"""
from __future__ import annotations

import numpy as np

from ...instr import (
    AllgatherRows,
    Allreduce,
    Bcast,
    DropRows,
    Empty,
    Fill,
    Free,
    MxM,
    TakeRows,
)
from . import register_plan
from .p2p1d import column_groups, narrow_only, replication, replication_check, split_by_owner


def chunks(nblocks: int, c: int) -> list:
    """Block columns handled by each process column (CAGNET: p/c^2 each; the remainder to the last)."""
    per = nblocks // c
    out = [list(range(j * per, (j + 1) * per)) for j in range(c)]
    out[-1].extend(range(c * per, nblocks))
    return out


def whole_block(ctx, A, cols_k: np.ndarray):
    """The piece of ``A[:, cols_k]`` when every entry of A lies in those columns (the rows routed
    to a rank whose chunk is one block column), else None. Its columns are renumbered by one
    gather straight into GraphBLAS's index type, in the entries' order (as scipy's column gather
    leaves them), and A's values are handed over, not copied: A is consumed."""
    index = np.full(A.shape[1], np.iinfo(np.uint64).max, dtype=np.uint64)
    index[cols_k] = np.arange(cols_k.size, dtype=np.uint64)
    indices = index[A.indices]
    del index
    if indices.size and indices.max() >= cols_k.size:
        return None
    return ctx.gb_owned(A.indptr.astype(np.uint64), indices, A.data, (A.shape[0], int(cols_k.size)))


def _check(ctx):
    if ctx.masked:
        return "15d does not run masked products (its partial sums cover other processes' rows)"
    return narrow_only(ctx) or replication_check(ctx)


@register_plan("15d", check=_check, spmd=True)
def lower(ctx):
    """CAGNET 1.5D: block rows replicated c-fold, per-column broadcasts, row Allreduce."""
    rows, cols, K, P = ctx.rows, ctx.cols, ctx.K, ctx.P
    c = replication(ctx)
    nb = P // c
    prow = ctx.add_split([r // c for r in range(P)])
    pcol = ctx.add_split([r % c for r in range(P)])
    blk_cols, blk_rows = column_groups(cols, c)
    chunk = chunks(nb, c)
    dtype, presence = ctx.b_dtype.value, not ctx.b_full
    in_place = ctx.in_place
    # SPMD planning: an entry of block column k goes to the member of the sender's process row
    # whose chunk holds k
    chunk_of = np.zeros(nb, dtype=np.int64)
    for j, ks in enumerate(chunk):
        chunk_of[ks] = j

    def dest(sender):
        return (sender // c) * c + chunk_of[cols.parts // c]

    for r in ctx.ranks:
        i, j = divmod(r, c)
        members = range(i * c, (i + 1) * c)
        I = np.concatenate([rows.owned[m] for m in members])   # block row i, in member order
        lo = int(rows.counts[i * c:r].sum())
        mine = np.arange(lo, lo + int(rows.counts[r]))
        A_I = ctx.block_rows(r, I, dest)
        # one block column (and SPMD routing sent this rank only its entries): no column split
        whole = whole_block(ctx, A_I, blk_cols[chunk[j][0]]) if len(chunk[j]) == 1 else None
        blocks = {} if whole is not None else split_by_owner(A_I, [(k, blk_cols[k]) for k in chunk[j]])
        del A_I
        prog = []
        Hi = ctx.slot()
        prog.append(AllgatherRows(Hi, ctx.b, cols.counts[i * c:(i + 1) * c], K, dtype, presence=presence, group=prow,
                                  me=j, product=ctx.index))
        Z = ctx.slot()
        if in_place:
            prog.append(Fill(Z, I.size, K, ctx.semiring.monoid, ctx.compute.value, product=ctx.index))
        elif not chunk[j]:
            prog.append(Empty(Z, I.size, K, ctx.compute.value, product=ctx.index))
        for t, k in enumerate(chunk[j]):
            Hk = ctx.slot()
            prog.append(Bcast(Hk, Hi if k == i else None, k, int(blk_rows[k]), K, dtype, presence=presence,
                              group=pcol, product=ctx.index))
            piece = whole if k not in blocks else ctx.gb(blocks.pop(k))
            prog.append(MxM(Z, ctx.const(r, piece), Hk, ctx.semiring, accumulate=in_place or t > 0,
                            product=ctx.index))
            prog.append(Free((Hk,)))
        prog.append(Free((Hi,)))
        Zi = ctx.slot()
        prog.append(Allreduce(Zi, Z, ctx.semiring.monoid, group=prow, entries=int(I.size) * K,
                                  presence=not in_place, product=ctx.index))
        prog.append(TakeRows(ctx.out, Zi, mine, product=ctx.index))
        prog.append(Free((Z, Zi)))
        empty = np.flatnonzero(np.diff(ctx.rows_of(r).indptr) == 0)   # this rank's rows, all columns
        if in_place and empty.size:
            prog.append(DropRows(ctx.out, empty, product=ctx.index))
        ctx.emit_rank(r, prog)
