"""p2p1d — Algorithm 1 of Demirci et al. (Scalable GCN Training on Distributed-Memory Systems):
1D rows, point-to-point messages with exact send sets.

Per rank m: the local rows of A split into A_mm (columns m owns) and one block A_mn per peer n
it receives from (columns renumbered to the order of n's send list). Receives are posted first,
then each send list is packed into one contiguous buffer and sent; A_mm ⊗ B_m runs while the
messages are in flight; each arriving block is multiplied and accumulated with the monoid.
The send/receive sets are the analysis layer's (dspla.analysis.comm_plan), so the measured
traffic equals its prediction.

Dense rows bigger than one message (``Options.message_bytes``) travel in chunks, each its own
message and block, and only a window of two messages' bytes is posted at once (the rest are
posted as earlier ones are multiplied): a rank then holds a bounded part of the rows it
receives, not all of them (at R-MAT scale 20, P = 4, random rows: ~400 MB per rank), and no
message reaches MPI's 2^31-element count limit.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...analysis import comm_plan
from ...instr import DropRows, Fill, MxM, Pack, PackSparse, Recv, RecvMxM, Send, StackMxM, WaitSends
from ...kernels import spmspv
from ..options import memory_cap
from ..spgemm_size import b_summary, operand, output_entries
from ..spmd import exchange
from . import register_plan


def split_by_owner(A_r: sp.csr_array, lists) -> dict:
    """Column blocks of a local row block: for each (owner, cols) in lists, the entries in the
    columns ``cols`` (ascending) renumbered by position in ``cols``; entries in columns no list
    names are dropped. Canonical CSR in, canonical CSR out; no loop per entry."""
    if len(lists) <= 16:
        # scipy's column gather: two C passes per block, 4x faster than numpy masks at P = 2
        return {owner: A_r[:, cols] for owner, cols in lists}
    # many blocks: one stable sort of the entries by block (row order is kept within a block, and
    # columns stay ascending because each list is)
    ncols, nrows = A_r.shape[1], A_r.shape[0]
    block_of_col = np.full(ncols, len(lists), dtype=np.uint16 if len(lists) < (1 << 16) - 1 else np.int64)
    index = np.zeros(ncols, dtype=np.int64)
    for b, (_, cols) in enumerate(lists):
        block_of_col[cols] = b
        index[cols] = np.arange(len(cols))
    blk = block_of_col[A_r.indices]
    order = np.argsort(blk, kind="stable")   # 16-bit keys: numpy's radix sort
    bounds = np.searchsorted(blk[order], np.arange(len(lists) + 1))
    row = np.repeat(np.arange(nrows, dtype=np.int64), np.diff(A_r.indptr))
    blocks = {}
    for b, (owner, cols) in enumerate(lists):
        sel = order[bounds[b]:bounds[b + 1]]
        indptr = np.zeros(nrows + 1, dtype=np.int64)
        np.cumsum(np.bincount(row[sel], minlength=nrows), out=indptr[1:])
        blocks[owner] = sp.csr_array((A_r.data[sel], index[A_r.indices[sel]], indptr), shape=(nrows, len(cols)))
    return blocks


def stacked_columns(A_r: sp.csr_array, lists) -> sp.csr_array:
    """The row block with its columns renumbered by position in the lists one after the other
    (own, then each receive's): the operand of one product over the stacked rows. Entries in
    columns no list names are dropped. One gather of the column ids and a per-row sort, where
    split_by_owner then hstack took 5x as long (19 ms against 3.7 on half of soc-Slashdot0902)."""
    index = np.full(A_r.shape[1], -1, dtype=np.int64)
    off = 0
    for _, cols in lists:
        index[cols] = off + np.arange(len(cols))
        off += len(cols)
    new = index[A_r.indices]
    if (new < 0).any():
        keep = new >= 0
        row = np.repeat(np.arange(A_r.shape[0]), np.diff(A_r.indptr))[keep]
        indptr = np.zeros(A_r.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=A_r.shape[0]), out=indptr[1:])
        M = sp.csr_array((A_r.data[keep], new[keep], indptr), shape=(A_r.shape[0], off))
    else:
        M = sp.csr_array((A_r.data.copy(), new, A_r.indptr.copy()), shape=(A_r.shape[0], off))
    M.sort_indices()   # (in place: on the copy of the arrays made above)
    return M


def column_groups(cols, g: int):
    """Columns grouped by blocks of g consecutive ranks (rank // g): for each group its columns
    in position order (the ranks' rows concatenated in rank order) and its row count. The
    block layout shift1d, 15d and 2d multiply against."""
    starts = cols.offsets[np.r_[np.arange(0, cols.P, g), cols.P]]
    lists = [cols.order[lo:hi] for lo, hi in zip(starts[:-1], starts[1:])]
    return lists, np.diff(starts).astype(np.int64)


def narrow_only(ctx):
    """check() of the plans that move B as dense rows: not when B's columns are a distributed dim
    too (an n x n B: such rows only travel as their entries, p2p1d's sparse exchange)."""
    if ctx.b_wide:
        return f"B's columns are distributed too (width {ctx.K}): only p2p1d's sparse exchange moves its rows"
    return None


def replication(ctx) -> int:
    """The replication factor c of shift1d / 15d: the one asked for, else 2 when it divides P
    (the measured default), else 1 (so that an odd P runs them too). 15d's default needs P >= 4
    too: each of its c process columns takes P/c² block columns, so at P = 2 c = 2 left one rank
    the whole product and the other none."""
    c = getattr(ctx, "c", None) or ctx.opt.replication   # (a candidate c of 15d_sparse's, weighed by the model)
    if c is not None:
        return c
    return 2 if ctx.P % 2 == 0 and (getattr(ctx, "name", None) != "15d" or ctx.P >= 4) else 1


def replication_check(ctx):
    """check() of the plans with a replication factor c (shift1d, 15d)."""
    c = replication(ctx)
    if c < 1 or ctx.P % c:
        return f"replication c={c} must divide P={ctx.P} (use --replication with a divisor of P)"
    return None


def add_remote_block(ctx, r: int, B: sp.csr_array, whole: bool, blocks: list, row_lists: list):
    """The planned piece for one arriving block: whole when accumulating into the whole output (in
    place into a full one, or inside a mask); else compressed to the rows with entries (RecvMxM
    then writes only those rows)."""
    if whole:
        blocks.append(ctx.const(r, ctx.gb(B)))
    else:
        rows_q = np.flatnonzero(np.diff(B.indptr))
        blocks.append(ctx.const(r, ctx.gb(B[rows_q])))
        row_lists.append(rows_q)


@register_plan("p2p1d", spmd=lambda ctx: lower_spmd(ctx))
def lower(ctx):
    """1D row partition, p2p messages with hypergraph-derived send sets (Demirci et al.)."""
    plan = comm_plan(ctx.A, ctx.rows.parts, ctx.P, b_parts=ctx.cols.parts)
    ctx.info.predicted = {"volume_rows": plan.volume_total}
    for r in range(ctx.P):
        rank_program(ctx, r, ctx.rows_of(r), plan.receives(r), plan.sends(r))


def lower_spmd(ctx):
    """The same program for this rank only, from its own rows: the rows it receives are the
    columns its rows reference that others own (ownership map); what it sends, each peer tells
    it (plan/spmd.py: one Alltoall of counts, one Alltoallv of row ids). The totals explain
    shows come from every rank's counts, gathered by choose."""
    recvs, sends = own_sets(ctx.comm, ctx.A, ctx.cols, ctx.me, ctx.P)
    ctx.known_entries = sparse_counts(ctx, recvs, sends)
    if ctx.b_wide:
        b_summary(ctx)   # (a collective: every rank, whether or not it stacks)
    rank_program(ctx, ctx.me, ctx.A, recvs, sends)


def sparse_counts(ctx, recvs: dict, sends: dict) -> dict | None:
    """SPMD planning with a static sparse B (A @ A, L·L): the entries of every message, exact —
    each rank counts those of the rows it sends, and one Alltoall tells each receiver — so the
    words predicted are the words moved and the receive buffers are priced at their size.
    {("send" | "recv", peer): entries}; None when B is not static (planning bounds them)."""
    pl = ctx.product.pl
    b = ctx.node.args[1]
    if not ctx.b_sparse or not pl.is_static(b):
        return None
    degree = np.diff(operand(ctx, b, csr=True).indptr)
    counts = np.zeros(ctx.P, dtype=np.int64)
    for q, lst in sends.items():
        counts[q] = int(degree[ctx.cols.pos[lst]].sum())
    theirs = np.zeros(ctx.P, dtype=np.int64)
    ones = np.ones(ctx.P, dtype=np.int64)
    ctx.comm.alltoallv(counts, ones, theirs, ones)
    return {**{("send", q): int(counts[q]) for q in sends}, **{("recv", q): int(theirs[q]) for q in recvs}}


def _entries(ctx, side: str, q: int, lst) -> int:
    known = getattr(ctx, "known_entries", None)
    return known[(side, q)] if known is not None else ctx.entries(lst)


def own_sets(comm, A_r: sp.csr_array, cols, me: int, P: int) -> tuple[dict, dict]:
    """(receives, sends) of rank ``me`` from its own rows ``A_r`` (global column ids) and the
    owners of B's rows ``cols``: {peer: ascending global ids}; the sends by one exchange."""
    recvs = own_recvs(A_r, cols, me, P)
    return recvs, exchange(comm, recvs)


def own_recvs(A_r: sp.csr_array, cols, me: int, P: int) -> dict:
    """The receives of rank ``me``: the columns its rows name that others own, by owner."""
    seen = np.zeros(A_r.shape[1], dtype=bool)   # (marking: a sort of every entry took 25 ms on a
    seen[A_r.indices] = True                    # rank's rows of soc-Slashdot0902)
    return by_owner(np.flatnonzero(seen), cols.parts, me, P)


def by_owner(ids: np.ndarray, parts: np.ndarray, me: int, P: int) -> dict:
    """{q: the ids (ascending) that rank q != me owns} for the ascending global ``ids``."""
    owner = parts[ids]
    far = owner != me
    ids, owner = ids[far], owner[far]
    order = np.argsort(owner, kind="stable")   # ids stay ascending within each owner
    ids, owner = ids[order], owner[order]
    bounds = np.searchsorted(owner, np.arange(P + 1))
    return {q: ids[bounds[q]:bounds[q + 1]] for q in range(P) if bounds[q + 1] > bounds[q]}


def row_bytes(ctx) -> int:
    """Bytes of one dense row on the wire (values, and a presence byte each unless B is full
    wherever A reads it)."""
    return ctx.K * (ctx.b_dtype.np.itemsize + (0 if _values_only(ctx) else 1))


def _values_only(ctx) -> bool:
    """The rows sent are all present: B is full, or full wherever A reads it (the rows another
    rank needs are columns of its rows of A)."""
    return ctx.b_full or ctx.b_covered


def chunk_rows(ctx) -> int | None:
    """Rows per message when a dense send list is cut into chunks (None: a sparse B, whose
    entries travel as counted messages, uncut)."""
    width = row_bytes(ctx)
    if ctx.b_sparse or width == 0:   # (B with no columns: its rows are empty, one message each)
        return None
    return max(1, int(ctx.opt.message_bytes) // width)


def chunked(lists: dict, per: int | None) -> list:
    """((peer, chunk index), rows) pieces of each peer's row list, in the order they are posted:
    the first chunk of every peer, then the second, ... (each peer's in order, as MPI matches
    messages of one source and tag in order; round robin so every sender makes progress)."""
    pieces = {q: [lst] if per is None or lst.size <= per else [lst[i:i + per] for i in range(0, lst.size, per)]
              for q, lst in lists.items()}
    most = max((len(v) for v in pieces.values()), default=0)
    return [((q, j), v[j]) for j in range(most) for q, v in pieces.items() if j < len(v)]


BATCH_NOTE = ("p2p1d: its rows of C stay whole on their owner, over the memory per rank: column batches would "
              "hold them all the same, so none are made")
SHARED_NOTE = ("p2p1d on one node: senders write the rows into the receiver's shared memory after its own "
               "rows, and one product reads them where they lie (StackMxM, shared)")


def _route(ctx, r: int, recvs: dict) -> tuple[bool, bool, bool, bool]:
    """How rank r's product takes the rows it receives: (presence: rows carry a presence bitmap,
    stack: one product over own and received rows once all arrived, shared: the senders write
    them into this rank's memory, in_place: the output starts full and every block accumulates
    into it)."""
    cols = ctx.cols
    # a sparse B sends the present entries of its rows (PackSparse); a dense one its rows, with a
    # presence bitmap unless it is proven full
    sparse = ctx.b_sparse
    presence = not _values_only(ctx) and not sparse
    # a vector with missing entries (a distance vector): its output cannot start full, so the
    # arrived rows' product would be accumulated into a bitmap, which cost more than the overlap
    # saved (0.36 ms of a 2 ms step on soc-Slashdot0902 at P = 2); one product once all arrived.
    # A sparse vector (a BFS frontier) too: its present entries arrive and are stacked into the
    # bitmap the product reads anyway (gbops.lookup_operand), where a second masked product
    # accumulated into the first cost more than the first. A vector full wherever A reads it
    # (PageRank's r / outdeg) too, as values only: a second product over the arrived columns
    # cost more than the copy (P = 2: 0.82 ms against 0.70 + 0.08 for the stack)
    stack = (presence or sparse or ctx.b_covered) and not ctx.in_place and ctx.K == 1 and bool(recvs)
    # a sparse B whose columns are distributed too (A @ A, a triangle count's L·L): one product
    # over the stacked rows too, where accumulating each arrived block's product into C turned
    # C into a bitmap (rows x n bytes: 9.6 GB a rank at R-MAT 16, P = 4) and merged it per block
    stack = stack or (sparse and ctx.b_wide and bool(recvs))
    # ranks on one node (the session says so, with the bytes a rank may share): the senders write
    # their rows into the receiver's memory right after its own (runtime/interp/shm.py), so one
    # product reads them all where they lie, where two would each pass over the output (the
    # second, accumulating the arrived rows, cost soc-Slashdot0902 / random K = 256 ~20 % more
    # with own's rows already in the area; when they are new, the runtime makes the two blocks
    # over the area instead of copying them there: messages._stack_in_place).
    # Rows of a cache line or more: narrower ones, just written by another core, cost the
    # product's scattered reads more than one streaming copy (PageRank's column on Slashdot at
    # P = 2: 0.15-0.25 ms more per product read in place), so they are stacked by copies
    stacked_bytes = (cols.owned[r].size + sum(lst.size for lst in recvs.values())) * row_bytes(ctx)
    shared = not presence and not sparse and bool(recvs) and row_bytes(ctx) >= 64 and \
        0 < stacked_bytes <= ctx.opt.shared_memory_bytes
    stack = stack or shared
    if shared and SHARED_NOTE not in ctx.info.notes:
        ctx.info.notes.append(SHARED_NOTE)
    # (B full where A reads it: every output row with an entry of A gets a product term)
    in_place = ctx.in_place_if(_values_only(ctx)) and not stack
    return presence, stack, shared, in_place


def rank_program(ctx, r: int, A_r: sp.csr_array, recvs: dict, sends: dict):
    """Rank r's instructions: receives posted, send lists packed and sent, the local block
    multiplied while messages fly, each arriving block multiplied and accumulated."""
    rows, cols, K = ctx.rows, ctx.cols, ctx.K
    dtype, sparse = ctx.b_dtype.value, ctx.b_sparse
    presence, stack, shared, in_place = _route(ctx, r, recvs)
    per = chunk_rows(ctx)
    recv_pieces, send_pieces = chunked(recvs, per), chunked(sends, per)
    # own columns by local position, received ones by position in the sender's list (chunk)
    lists = [(r, cols.owned[r])] + recv_pieces
    blocks = split_by_owner(A_r, lists) if not stack else None
    prog = []
    recv_slots, block_slots, row_lists, send_slots = [], [], [], []
    window = 2 * int(ctx.opt.message_bytes)
    posted = 0   # bytes of the receives posted at once; past the window the rest wait for RecvMxM
    for (q, j), lst in recv_pieces:
        s = ctx.slot()
        deferred = not stack and not sparse and posted > 0 and posted + lst.size * row_bytes(ctx) > window
        posted = window + 1 if deferred else posted + (0 if sparse else lst.size * row_bytes(ctx))
        prog.append(Recv(s, q, ctx.tag, lst.size, K, dtype, presence=presence, sparse=sparse,
                         expect=_entries(ctx, "recv", q, lst) if sparse else None, deferred=deferred,
                         product=ctx.index))
        recv_slots.append(s)
        if not stack:
            add_remote_block(ctx, r, blocks[(q, j)], in_place or ctx.masked, block_slots, row_lists)
    for (q, _), lst in send_pieces:
        s = ctx.slot()
        if sparse:
            prog.append(PackSparse(s, ctx.b, cols.pos[lst], entries=_entries(ctx, "send", q, lst), product=ctx.index))
        else:
            prog.append(Pack(s, ctx.b, cols.pos[lst], presence=presence, product=ctx.index))
        words = _entries(ctx, "send", q, lst) if sparse else lst.size * K
        prog.append(Send(s, q, ctx.tag, words, dtype, presence, sparse, product=ctx.index))
        send_slots.append(s)
    if in_place:
        prog.append(Fill(ctx.out, int(rows.counts[r]), K, ctx.semiring.monoid, ctx.compute.value,
                         product=ctx.index))
    if stack:   # the row block with its columns as the operand is stacked: own, then each receive's
        whole = stacked_columns(A_r, lists)
        size = output_entries(ctx, r, A_r) if ctx.b_wide else None
        if size and size[0] * (ctx.compute.np.itemsize + 8) > memory_cap(ctx.opt, ctx.P) and BATCH_NOTE not in \
                ctx.info.notes:
            ctx.info.notes.append(BATCH_NOTE)
        # a frontier: pushed (over the stack's transpose) or pulled, alike on every rank
        push = None if ctx.frontier is None or not sparse else \
            ctx.const(r, spmspv.Frontier(ctx.gb(sp.csr_array(whole.T)), ctx.pl.concrete(ctx.node.type.shape[0])))
        prog.append(StackMxM(ctx.out, ctx.const(r, ctx.gb(whole)), ctx.b, tuple(recv_slots), ctx.semiring,
                             **ctx.mask, a_empty_rows=np.flatnonzero(np.diff(whole.indptr) == 0),
                             shared=shared, covered=ctx.b_covered, out_entries=size and size[0],
                             flops=size and size[1], push=push,
                             count=ctx.frontier if push is not None else None, product=ctx.index))
    else:
        prog.append(MxM(ctx.out, ctx.const(r, ctx.gb(blocks[r])), ctx.b, ctx.semiring, accumulate=in_place,
                        **ctx.mask, product=ctx.index))
    if recv_slots and not stack:
        prog.append(RecvMxM(ctx.out, tuple(recv_slots), tuple(block_slots), ctx.semiring, tuple(row_lists),
                            window=window, **ctx.mask, product=ctx.index))
    if send_slots:
        prog.append(WaitSends(tuple(send_slots), product=ctx.index))
    empty = np.flatnonzero(np.diff(A_r.indptr) == 0)
    if in_place and empty.size:
        prog.append(DropRows(ctx.out, empty, product=ctx.index))
    ctx.emit_rank(r, prog)
