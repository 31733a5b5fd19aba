"""p2p1d — seed 000 Algorithm 1: 1D rows, point-to-point messages with exact send sets.

Per rank m: the local rows of A split into A_mm (columns m owns) and one block A_mn per peer n
it receives from (columns renumbered to the order of n's send list). Receives are posted first,
then each send list is packed into one contiguous buffer and sent; A_mm ⊗ B_m runs while the
messages are in flight; each arriving block is multiplied and accumulated with the monoid.
The send/receive sets are the analysis layer's (dspla.analysis.comm_plan), so the measured
traffic equals its prediction.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...analysis import comm_plan
from ..planir import DropRows, Fill, MxM, Pack, Recv, RecvMxM, Send, WaitSends
from . import register_plan


def split_by_owner(A_r: sp.csr_array, owner_of_col: np.ndarray, col_index: np.ndarray, groups):
    """Column blocks of a local row block: for each (owner, width) in groups, the entries whose
    column belongs to that owner, columns renumbered by col_index (one sort, no loop per entry)."""
    coo = A_r.tocoo()
    own = owner_of_col[coo.col]
    order = np.argsort(own, kind="stable")
    own_sorted = own[order]
    blocks = {}
    for owner, width in groups:
        lo, hi = np.searchsorted(own_sorted, [owner, owner + 1])
        sel = order[lo:hi]
        blocks[owner] = sp.csr_array((coo.data[sel], (coo.row[sel], col_index[coo.col[sel]])),
                                     shape=(A_r.shape[0], width))
    return blocks


def column_groups(cols, g: int):
    """Columns grouped by blocks of g consecutive ranks (rank // g): each column's group, its
    position inside the group's rows (the ranks' rows concatenated in rank order), and each
    group's row count. The block layout shift1d, 15d and 2d multiply against."""
    group = cols.parts // g
    index = cols.permpos - cols.offsets[group * g]
    rows = np.add.reduceat(cols.counts, np.arange(0, cols.P, g)) if cols.P else np.zeros(0, np.int64)
    return group, index, rows.astype(np.int64)


def replication_check(ctx):
    """check() of the plans with a replication factor c (shift1d, 15d)."""
    c = ctx.opt.replication or 1
    if c < 1 or ctx.P % c:
        return f"replication c={c} must divide P={ctx.P} (use --replication with a divisor of P)"
    return None


def add_remote_block(ctx, r: int, B: sp.csr_array, in_place: bool, blocks: list, row_lists: list):
    """The planned piece for one arriving block: whole when accumulating in place into a full
    output; else compressed to the rows with entries (RecvMxM then writes only those rows)."""
    if in_place:
        blocks.append(ctx.const(r, ctx.gb(B)))
    else:
        rows_q = np.flatnonzero(np.diff(B.indptr))
        blocks.append(ctx.const(r, ctx.gb(B[rows_q])))
        row_lists.append(rows_q)


@register_plan("p2p1d")
def lower(ctx):
    """1D row partition, p2p messages with hypergraph-derived send sets (seed 000)."""
    A, rows, cols, K = ctx.A, ctx.rows, ctx.cols, ctx.K
    plan = comm_plan(A, rows.parts, ctx.P, b_parts=cols.parts)
    ctx.info.predicted = {"volume_rows": plan.volume_total, "words": plan.volume_total * K,
                          "messages": plan.npairs}
    dtype, presence = ctx.b_dtype.value, not ctx.b_full
    # With B full and a monoid identity, C starts full at the identity and every block
    # accumulates into it in place (exact: identity ⊕ x = x); A's empty rows are dropped after.
    in_place = ctx.b_full and ctx.semiring.monoid.identity(ctx.compute) is not None
    for r in range(ctx.P):
        A_r = A[rows.owned[r]]
        recvs = plan.receives(r)
        sends = plan.sends(r)
        # column -> index inside its block: own columns by local position, received ones by
        # position in the sender's list
        col_index = cols.pos.copy()
        for q, lst in recvs.items():
            col_index[lst] = np.arange(lst.size)
        groups = [(r, int(cols.counts[r]))] + [(q, lst.size) for q, lst in recvs.items()]
        blocks = split_by_owner(A_r, cols.parts, col_index, groups)
        prog = []
        recv_slots, block_slots, row_lists, send_slots = [], [], [], []
        for q, lst in recvs.items():
            s = ctx.slot()
            prog.append(Recv(s, q, ctx.tag, lst.size, K, dtype, presence=presence, product=ctx.index))
            recv_slots.append(s)
            add_remote_block(ctx, r, blocks[q], in_place, block_slots, row_lists)
        for q, lst in sends.items():
            s = ctx.slot()
            prog.append(Pack(s, ctx.b, cols.pos[lst], presence=presence, product=ctx.index))
            prog.append(Send(s, q, ctx.tag, lst.size * K, product=ctx.index))
            send_slots.append(s)
        if in_place:
            prog.append(Fill(ctx.out, int(rows.counts[r]), K, ctx.semiring.monoid, ctx.compute.value,
                             product=ctx.index))
        prog.append(MxM(ctx.out, ctx.const(r, ctx.gb(blocks[r])), ctx.b, ctx.semiring, accumulate=in_place,
                        product=ctx.index))
        if recv_slots:
            prog.append(RecvMxM(ctx.out, tuple(recv_slots), tuple(block_slots), ctx.semiring, tuple(row_lists),
                                product=ctx.index))
        if send_slots:
            prog.append(WaitSends(tuple(send_slots), product=ctx.index))
        empty = np.flatnonzero(np.diff(A_r.indptr) == 0)
        if in_place and empty.size:
            prog.append(DropRows(ctx.out, empty, product=ctx.index))
        ctx.emit_rank(r, prog)
