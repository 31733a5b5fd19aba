"""15d_sparse — sparsity-aware 1.5D (Mukhopadhyay, Tripathy, Selvitopi, Yelick, Buluç,
"Sparsity-Aware Communication for Distributed Graph Neural Network Training", ICPP'24): CAGNET's
1.5D grid, where inside each process column only the rows a block row needs move.

Ranks form a P/c x c grid, r = (i, j) = (r // c, r % c), as in 15d: block row i (the 1D rows of
process row i) is replicated on its c members by an all-gather; process column j handles the
block columns of chunk j. Where 15d broadcasts a whole block B_k down column j, here P(i, j)
receives only the rows of B_k that A_ik's nonzeros name (send sets as p2p1d builds them, one
message per pair), and multiplies each as it arrives; a reduce-scatter along the process row (point
to point; an all-reduce for a multiply without a unit) completes each rank's rows of C_i. Every
member of process row k holds B_k after the all-gather, so the sends of B_k are dealt over them
(P(k, i mod c) serves P(i, j)): with P(k, j) alone sending, 1/c of the ranks would send every
message (P/c - 1 each).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...instr import (
    AllgatherRows,
    Allreduce,
    DropRows,
    Empty,
    Fill,
    Free,
    MxM,
    Pack,
    Recv,
    RecvMxM,
    Send,
    TakeRows,
    WaitSends,
)
from ..pricing import count, record, select
from ..spmd import exchange
from . import register_plan
from .cagnet15d import chunks
from .p2p1d import add_remote_block, chunked, column_groups, narrow_only, replication, replication_check
from .vertexcut import multiply_unit, selection


def _check(ctx):
    if ctx.masked:
        return "15d_sparse does not run masked products (its partial sums cover other processes' rows)"
    if ctx.b_sparse:
        return "15d_sparse moves dense rows: a sparse B travels by p2p1d"
    return narrow_only(ctx) or (replication_check(ctx) if ctx.opt.replication is not None else None)


def choices(P: int) -> list[int]:
    """The c weighed when none is asked: the divisors of P with c^2 <= P (each process column
    then handles at least one block column)."""
    return [c for c in range(1, P + 1) if P % c == 0 and c * c <= P]


def by_the_model(ctx, lower_c) -> None:
    """Lower 15d_sparse with each c of ``choices`` into a scratch candidate, price each as choice
    prices a candidate (every rank's counts: under SPMD planning one allgather each; the fastest
    that fits the memory cap), keep its instructions, and say in explain what each c was
    predicted to take."""
    records = []
    for c in choices(ctx.P):
        sub = type(ctx)(ctx.product, ctx.name)   # (a scratch candidate of the same product)
        sub.c = c
        lower_c(sub)
        counts = None
        if ctx.me is not None:
            mine = count(sub, ctx.me)
            counts = ctx.comm.allgather(mine) if ctx.P > 1 else [mine]
        records.append((sub, record(sub, counts, ctx.opt, ctx.P)[1]))
    best, _, _ = select(records)
    for name in ("progs", "consts", "splits", "windows", "c"):
        setattr(ctx, name, getattr(best, name))
    ctx.info = best.info
    ctx.info.notes.append("15d_sparse: c by the model, " + ", ".join(
        f"c={sub.c} {cand['predicted_s'] * 1e3:.3f} ms" + (f" ({cand['skipped']})" if "skipped" in cand else "")
        + (" <- chosen" if sub is best else "") for sub, cand in records))


def _needs(A_I: sp.csr_array, block_of: np.ndarray, ks) -> dict:
    """{k: ascending global columns of block k that the rows A_I name} for k in ks."""
    seen = np.zeros(A_I.shape[1], dtype=bool)
    seen[A_I.indices] = True
    cols = np.flatnonzero(seen)
    blk = block_of[cols]
    return {k: cols[blk == k] for k in ks if np.any(blk == k)}


@register_plan("15d_sparse", check=_check, spmd=lambda ctx: lower_spmd(ctx), auto=False)
def lower(ctx):
    """Sparsity-aware 1.5D: block rows replicated c-fold, only needed rows sent down columns, row Allreduce."""
    if ctx.opt.replication is None and ctx.c is None:
        return by_the_model(ctx, lower)
    P, c = ctx.P, replication(ctx)
    nb = P // c
    chunk = chunks(nb, c)
    block_of = ctx.cols.parts // c
    A_rows, recvs = {}, {}
    for i in range(nb):
        I = np.concatenate([ctx.rows.owned[m] for m in range(i * c, (i + 1) * c)])
        A_I = ctx.A[I]
        for j in range(c):
            r = i * c + j
            A_rows[r] = A_I
            recvs[r] = _needs(A_I, block_of, [k for k in chunk[j] if k != i])
    sends = {r: {} for r in range(P)}
    for r, got in recvs.items():
        for k, ids in got.items():
            sends[sender(k, r, c)][r] = ids
    prow = ctx.add_split([q // c for q in range(P)])
    for r in ctx.ranks:
        rank_program(ctx, r, prow, A_rows[r], {sender(k, r, c): v for k, v in recvs[r].items()}, sends[r])


def sender(k, r, c: int):
    """The member of process row k that sends B_k's rows to rank r = (i, j): P(k, i mod c)."""
    return k * c + (r // c) % c


def lower_spmd(ctx):
    """This rank's program from its own rows: the entries of block row i in chunk j's columns
    arrive by one routing (plan/spmd.py), the needed rows follow from them, and each sender
    learns what to send by one exchange."""
    if ctx.opt.replication is None and ctx.c is None:
        return by_the_model(ctx, lower_spmd)
    P, c, me = ctx.P, replication(ctx), ctx.me
    nb = P // c
    chunk = chunks(nb, c)
    chunk_of = np.zeros(nb, dtype=np.int64)
    for j, ks in enumerate(chunk):
        chunk_of[ks] = j
    i, j = divmod(me, c)
    I = np.concatenate([ctx.rows.owned[m] for m in range(i * c, (i + 1) * c)])
    A_I = ctx.block_rows(me, I, lambda s: (s // c) * c + chunk_of[ctx.cols.parts // c])
    got = _needs(A_I, ctx.cols.parts // c, [k for k in chunk[j] if k != i])
    recvs = {sender(k, me, c): v for k, v in got.items()}
    prow = ctx.add_split([q // c for q in range(P)])
    rank_program(ctx, me, prow, A_I, recvs, exchange(ctx.comm, recvs))


def rank_program(ctx, r: int, prow: int, A_I: sp.csr_array, recvs: dict, sends: dict):
    """Rank (i, j): gather block row i of B, post the receives, send the needed rows of block i to
    the members of column j that asked, multiply its own block and each arriving one, reduce."""
    rows, cols, K, P = ctx.rows, ctx.cols, ctx.K, ctx.P
    c = replication(ctx)
    i, j = divmod(r, c)
    chunk = chunks(P // c, c)
    dtype, presence, in_place = ctx.b_dtype.value, not ctx.b_full, ctx.in_place
    blk_cols, _ = column_groups(cols, c)
    base = int(cols.offsets[i * c])     # block row i's first position in rank order
    prog, recv_slots, block_slots, row_lists, send_slots = [], [], [], [], []
    Hi = ctx.slot()
    prog.append(AllgatherRows(Hi, ctx.b, cols.counts[i * c:(i + 1) * c], K, dtype, presence=presence, group=prow,
                              me=j, product=ctx.index))
    # rows bigger than one message travel in chunks, a window of two messages' bytes posted at
    # once, as p2p1d's (Options.message_bytes)
    row = K * (np.dtype(dtype).itemsize + (1 if presence else 0))
    per = max(1, int(ctx.opt.message_bytes) // row) if row else None
    window, posted = 2 * int(ctx.opt.message_bytes), 0
    for (q, _), ids in chunked(dict(sorted(recvs.items())), per):
        s = ctx.slot()
        deferred = posted > 0 and posted + ids.size * row > window
        posted = window + 1 if deferred else posted + ids.size * row
        prog.append(Recv(s, q, ctx.tag, ids.size, K, dtype, presence=presence, deferred=deferred, product=ctx.index))
        recv_slots.append(s)
        add_remote_block(ctx, r, A_I[:, ids], in_place, block_slots, row_lists)
    for (q, _), ids in chunked(dict(sorted(sends.items())), per):
        s = ctx.slot()
        prog.append(Pack(s, Hi, cols.permpos[ids] - base, presence=presence, product=ctx.index))
        prog.append(Send(s, q, ctx.tag, ids.size * K, dtype, presence, product=ctx.index))
        send_slots.append(s)
    Z = ctx.slot()
    local = i in chunk[j]
    if in_place:
        prog.append(Fill(Z, A_I.shape[0], K, ctx.semiring.monoid, ctx.compute.value, product=ctx.index))
    elif not local:
        prog.append(Empty(Z, A_I.shape[0], K, ctx.compute.value, product=ctx.index))
    if local:
        prog.append(MxM(Z, ctx.const(r, ctx.gb(A_I[:, blk_cols[i]])), Hi, ctx.semiring, accumulate=in_place,
                        product=ctx.index))
    if recv_slots:
        prog.append(RecvMxM(Z, tuple(recv_slots), tuple(block_slots), ctx.semiring, tuple(row_lists),
                            window=window, product=ctx.index))
    if send_slots:
        prog.append(WaitSends(tuple(send_slots), product=ctx.index))
    prog.append(Free((Hi,)))
    if c > 1 and multiply_unit(ctx) is not None:
        reduce_scatter(ctx, r, i, c, Z, prog)
    else:   # (a multiply without a unit: C_i all-reduced, each rank keeping its rows)
        Zi = ctx.slot()
        prog.append(Allreduce(Zi, Z, ctx.semiring.monoid, group=prow, entries=int(A_I.shape[0]) * K,
                              presence=not in_place, product=ctx.index))
        lo = int(rows.counts[i * c:r].sum())
        prog.append(TakeRows(ctx.out, Zi, np.arange(lo, lo + int(rows.counts[r])), product=ctx.index))
        prog.append(Free((Zi,)))
    prog.append(Free((Z,)))
    empty = np.flatnonzero(np.diff(ctx.rows_of(r).indptr) == 0)
    if in_place and empty.size:
        prog.append(DropRows(ctx.out, empty, product=ctx.index))
    ctx.emit_rank(r, prog)


def reduce_scatter(ctx, r: int, i: int, c: int, Z: int, prog: list) -> None:
    """C_i's partial sums to the owners of its rows in process row i, point to point: each member
    sends each other one its rows of Z ((c-1)/c of C_i a member, half an all-reduce's words and
    c - 1 messages), summed there by products with a selection of the multiply's unit (vertexcut's)."""
    K, in_place, dtype = ctx.K, ctx.in_place, ctx.compute.value
    presence = not in_place
    counts = ctx.rows.counts[i * c:(i + 1) * c]
    lo = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    me = r - i * c
    n_r = int(counts[me])
    recv, blocks, row_lists, sent = [], [], [], []
    for m in range(c):   # receives posted first
        if m != me and n_r:
            s = ctx.slot()
            prog.append(Recv(s, i * c + m, ctx.tag + 1, n_r, K, dtype, presence=presence, product=ctx.index))
            recv.append(s)
            add_remote_block(ctx, r, selection(ctx, n_r, np.arange(n_r)), in_place, blocks, row_lists)
    for m in range(c):
        if m != me and counts[m]:
            s = ctx.slot()
            prog.append(Pack(s, Z, np.arange(lo[m], lo[m + 1]), presence=presence, product=ctx.index))
            prog.append(Send(s, i * c + m, ctx.tag + 1, int(counts[m]) * K, dtype, presence, product=ctx.index))
            sent.append(s)
    if in_place:
        prog.append(Fill(ctx.out, n_r, K, ctx.semiring.monoid, dtype, product=ctx.index))
    own = selection(ctx, n_r, np.arange(n_r), np.arange(lo[me], lo[me] + n_r), int(lo[-1]))
    prog.append(MxM(ctx.out, ctx.const(r, ctx.gb(own)), Z, ctx.semiring, accumulate=in_place, product=ctx.index))
    if recv:
        prog.append(RecvMxM(ctx.out, tuple(recv), tuple(blocks), ctx.semiring, tuple(row_lists),
                            window=2 * int(ctx.opt.message_bytes), product=ctx.index))
    if sent:
        prog.append(WaitSends(tuple(sent), product=ctx.index))
