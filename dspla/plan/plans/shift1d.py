"""shift1d — dense shifting with replication factor c (Two-Face's DS-c baseline, Bharadwaj et
al.): A stays in its 1D rows. Groups of c consecutive ranks Allgather their rows of B, so each
rank holds one "super-block" of c blocks; then P/c steps each multiply the super-block held and
pass it around the ring of ranks with the same position in their group (MPI_Sendrecv)."""
from __future__ import annotations

import numpy as np

from ...instr import AllgatherRows, DropRows, Fill, Free, MxM, SendRecvRows
from . import register_plan
from .p2p1d import column_groups, narrow_only, replication, replication_check, split_by_owner


def _check(ctx):
    return narrow_only(ctx) or replication_check(ctx)


@register_plan("shift1d", check=_check, spmd=True)
def lower(ctx):
    """1D rows; B replicated c-fold by Allgather in groups, super-blocks shifted around a ring."""
    rows, cols, K, P = ctx.rows, ctx.cols, ctx.K, ctx.P
    c = replication(ctx)
    q = P // c
    sb_cols, sb_rows = column_groups(cols, c)      # super-blocks of c ranks' rows
    group = ctx.add_split([r // c for r in range(P)])
    dtype, presence = ctx.b_dtype.value, not ctx.b_full
    in_place = ctx.in_place
    for r in ctx.ranks:   # (every rank, or under SPMD planning this one: it needs its own rows only)
        g = r // c
        A_r = ctx.rows_of(r)
        blocks = split_by_owner(A_r, list(enumerate(sb_cols)))
        prog = []
        cur = ctx.slot()
        prog.append(AllgatherRows(cur, ctx.b, cols.counts[g * c:(g + 1) * c], K, dtype, presence=presence,
                                  group=group, me=r % c, product=ctx.index))
        if in_place:
            prog.append(Fill(ctx.out, int(rows.counts[r]), K, ctx.semiring.monoid, ctx.compute.value,
                             product=ctx.index))
        for t in range(q):
            s = (g + t) % q
            prog.append(MxM(ctx.out, ctx.const(r, ctx.gb(blocks[s])), cur, ctx.semiring, accumulate=in_place or t > 0,
                            **ctx.mask, product=ctx.index))
            if t < q - 1:  # pass the super-block on: to the group before, from the group after
                nxt = ctx.slot()
                prog.append(SendRecvRows(nxt, cur, (r - c) % P, (r + c) % P, int(sb_rows[(g + t + 1) % q]), K, dtype,
                                         ctx.tag, presence=presence, send_nrows=int(sb_rows[s]), product=ctx.index))
                prog.append(Free((cur,)))
                cur = nxt
        prog.append(Free((cur,)))
        empty = np.flatnonzero(np.diff(A_r.indptr) == 0)
        if in_place and empty.size:
            prog.append(DropRows(ctx.out, empty, product=ctx.index))
        ctx.emit_rank(r, prog)
