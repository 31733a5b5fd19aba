"""Handlers of point-to-point messages: receives posted, rows packed and sent, products of the
rows as they arrive (p2p1d), stacked operands, sampled products."""
from __future__ import annotations

import time
from contextlib import nullcontext

import graphblas as gb
import numpy as np
from graphblas.ss import concat  # (imported here: python-graphblas loads gb.ss lazily, racing under threads)

from ...instr import (
    Get,
    PackSparse,
    Recv,
    RecvMxM,
    SampledMxM,
    Send,
    SendRecvRows,
    StackMxM,
    StackRows,
    WaitSends,
)
from ...ir.types import DType
from ...kernels import buffers as local
from ...kernels import gbops, lend, overflow
from . import shm
from .compute import _multiply, _output_mask, frontier
from .interpreter import Runtime, _dt, handler

_SPARSE = frozenset({"csr", "csc", "hypercsr", "hypercsc"})   # (SuiteSparse formats of a sparse matrix)


class _Posted:
    __slots__ = ("req", "buf", "instr", "waiting")

    def __init__(self, req, buf, instr, waiting=None):
        self.req, self.buf, self.instr = req, buf, instr
        self.waiting = waiting   # a sparse receive: its count has to arrive before its entries


@handler(PackSparse)
def _pack_sparse(rt: Runtime, i: PackSparse):
    t0 = time.perf_counter()
    M = rt.slots[i.src]
    key = id(i)
    if key not in rt.lookups:
        rt.lookups[key] = local.row_lookup(i.rows, M.shape[0])
    rt.slots[i.out] = local.pack_sparse_rows(M, i.rows, _dt(M), rt.lookups[key])
    rt.timed("pack_s", t0)


@handler(Send)
def _send(rt: Runtime, i: Send):
    buf = rt.slots[i.buf]
    t0 = time.perf_counter()
    if type(buf) is shm.End:   # packed into the receiver's memory already: say so
        shm.publish(buf)
        rt.shm_sends += 1
        rt.timed("wait_s", t0)
        rt.slots[i.buf] = _Posted([], None, i)
        return
    if i.sparse:   # the entries' count (tag), then the entries (tag + 1) when there are any
        n = local.sparse_count(buf)
        reqs = [rt.comm.isend(buf[:8], i.dest, i.tag)] + ([rt.comm.isend(buf, i.dest, i.tag + 1)] if n else [])
        rt.count_dynamic(i, n)
    else:
        reqs = [rt.comm.isend(buf, i.dest, i.tag)]
    rt.timed("wait_s", t0)
    rt.slots[i.buf] = _Posted(reqs, buf, i)


@handler(Recv)
def _recv(rt: Runtime, i: Recv):
    if i.sparse:   # its count first: the entries' buffer is allocated to fit when it arrives
        buf = np.empty(8, dtype=np.uint8)
        rt.slots[i.out] = _Posted(rt.comm.irecv(buf, i.source, i.tag), buf, i, waiting=True)
        return
    if i.deferred:   # RecvMxM posts it when there is room in its window
        rt.slots[i.out] = _Posted(None, None, i)
        return
    end = rt.shm.recvs.get(id(i))
    if end is not None:   # the sender writes the rows into this rank's memory (shm.py)
        rt.slots[i.out] = _Posted(shm.Arrival(end), end.view, i)
        return
    rt.slots[i.out] = _post(rt, i)


def _post(rt: Runtime, i: Recv) -> "_Posted":
    buf = local.recv_buffer(i.nrows, i.k, DType(i.dtype), i.presence)
    return _Posted(rt.comm.irecv(buf, i.source, i.tag), buf, i)


def _recv_bytes(p: "_Posted") -> int:
    """Bytes a dense receive holds once posted (0 for the others: they are never deferred)."""
    r = p.instr
    if type(r) is not Recv or r.sparse:
        return 0
    return local.packed_nbytes(r.nrows, r.k, DType(r.dtype), r.presence)


def _arrived(rt: Runtime, p: "_Posted"):
    """The rows a completed receive, get or broadcast brought, as a matrix."""
    r = p.instr
    dt = DType(r.dtype)
    if type(r) is Get:
        return local.unpack_window_rows(p.buf, r.nrows, r.k, dt, r.presence)
    if type(r) is Recv and r.sparse:   # (its traffic counted when its count came: _entries_follow)
        return local.unpack_sparse_rows(p.buf, r.nrows, r.k, dt)
    # (a values-only region of the shared segment is copied: unpack_rows hands such a buffer to
    # SuiteSparse; with presence it copies the values itself)
    buf = p.buf.copy() if type(p.req) is shm.Arrival and not r.presence else p.buf
    return local.unpack_rows(buf, r.nrows, r.k, dt, r.presence)


def _wait(rt: Runtime, posted: list):
    """Every posted receive complete: those written into shared memory, then the messages."""
    reqs = []
    for p in posted:
        if type(p.req) is shm.Arrival:
            p.req.wait()
        else:
            reqs.append(p.req)
    if reqs:
        rt.comm.waitall(reqs)


def _rows(rt: Runtime, p: "_Posted"):
    """(the rows p brought as a matrix, the context to compute with them in): a region of the
    shared segment is lent to SuiteSparse for the block, not copied."""
    r = p.instr
    if type(p.req) is shm.Arrival and not r.presence:
        R = gb.Matrix(DType(r.dtype).gb, r.nrows, r.k)
        return R, lend.foreign_full(p.buf, R)
    return _arrived(rt, p), nullcontext()


def _entries_follow(rt: Runtime, p: "_Posted") -> bool:
    """A sparse receive whose count has come: its traffic counted and, when there are entries,
    their receive posted, exactly sized (True: wait for it)."""
    p.waiting = False
    n = local.sparse_count(p.buf)
    rt.count_dynamic(p.instr, n)
    if not n:
        return False
    r = p.instr
    p.buf = np.empty(local.sparse_size(n, DType(r.dtype)), dtype=np.uint8)
    p.req = rt.comm.irecv(p.buf, r.source, r.tag + 1)
    return True


@handler(RecvMxM)
def _recv_mxm(rt: Runtime, i: RecvMxM):
    posted = [rt.slots[r] for r in i.recvs]
    deferred = [j for j, p in enumerate(posted) if type(p.instr) is Recv and p.instr.deferred]   # in posting order
    later = set(deferred)
    live = [j for j in range(len(posted)) if j not in later]   # posted and not yet multiplied
    inflight = sum(_recv_bytes(posted[j]) for j in live)
    C = rt.slots[i.out]
    mask = _output_mask(rt, i)
    while live or deferred:
        while deferred and (not live or inflight + _recv_bytes(posted[deferred[0]]) <= i.window):
            j = deferred.pop(0)
            posted[j] = _post(rt, posted[j].instr)
            inflight += _recv_bytes(posted[j])
            live.append(j)
        t0 = time.perf_counter()
        near = [k for k in live if type(posted[k].req) is shm.Arrival]
        if near:   # written by a peer on this node: the first (the others are as near)
            j = near[0]
            posted[j].req.wait()
        else:
            j = live[rt.comm.waitany([posted[k].req for k in live])]
        rt.timed("wait_s", t0)
        p = posted[j]
        if p.waiting and _entries_follow(rt, p):   # a sparse receive's count: its entries come next
            continue
        live.remove(j)
        t0 = time.perf_counter()
        R, rows_held = _rows(rt, p)
        rt.timed("pack_s", t0)
        t0 = time.perf_counter()
        with rows_held:
            a, b, op, compute, _ = _multiply(rt.slots[i.blocks[j]], R, i.semiring)
            acc = gbops.binary(i.semiring.monoid.op, compute)
            follow = rt.checked and overflow.int_product(i.semiring, compute) and \
                rt.shadows.before_accumulating(i.out, C, a, b, i.semiring, rt.product_name(i))
            if a.shape[1] == 0:
                pass   # nothing to add (and SuiteSparse refuses to accumulate a product over no inner dim)
            elif mask is None and gbops.accumulate_full(C, a, b, i.semiring, i.rows[j] if i.rows else None):
                rt.took("udf-full")   # a user's semiring, by its compiled kernel
            elif i.rows:  # the block holds only the rows that have remote entries: a small output
                C[i.rows[j], :](accum=acc) << a.mxm(gbops.lookup_operand(a, b), op).new()
                rt.took("accumulate")
            else:
                C(accum=acc, mask=mask) << a.mxm(gbops.lookup_operand(a, b), op)
                rt.took("accumulate")
            if follow:   # (the running total of this rank's rows, checked when complete)
                rt.shadows.accumulated(i.out, a, b, i.semiring, mask, i.rows[j] if i.rows else None)
        if type(p.req) is shm.Arrival:   # (the lent rows are back: R is empty now)
            p.req.release()
        # the rows are freed now, not when the collector finds the matrix's reference cycle, so
        # the window bounds what the receives hold
        for M in {id(R): R, id(a): a, id(b): b}.values():
            if M is not rt.slots[i.blocks[j]]:
                M.clear()
        p.buf = R = a = b = None
        rt.slots[i.recvs[j]] = posted[j] = None
        inflight -= _recv_bytes(p)
        rt.timed("compute_s", t0)
    for r in i.recvs:
        rt.slots[r] = None


def _stacked(rt: Runtime, own, posted: list):
    """[own; each posted receive's rows, in posting order], in own's dtype (SuiteSparse stacks them)."""
    return concat([[m] for m in [own] + [gbops.cast(_arrived(rt, p), _dt(own)) for p in posted]])


@handler(StackRows)
def _stack_rows(rt: Runtime, i: StackRows):
    posted = [rt.slots[r] for r in i.recvs]
    t0 = time.perf_counter()
    _wait(rt, posted)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    own = rt.slots[i.own]
    rt.slots[i.out] = _stacked(rt, own, posted)
    for r in i.recvs:
        rt.slots[r] = None
    rt.timed("pack_s", t0)


@handler(StackMxM)
def _stack_mxm(rt: Runtime, i: StackMxM):
    posted = [rt.slots[r] for r in i.recvs]
    t0 = time.perf_counter()
    _wait(rt, posted)
    area = rt.shm.stacks.get(id(i))
    if area is not None:   # (its receives are all in the area: shm.Channels)
        _stack_in_place(rt, i, area, posted, t0)
        return
    entries = [p.req for p in posted if p.waiting and _entries_follow(rt, p)]   # sparse: the counts came
    if entries:
        rt.comm.waitall(entries)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    own = rt.slots[i.own]
    B = own
    if posted and not any(p.instr.presence or p.instr.sparse for p in posted) and own.shape[1] == 1:
        # values only: own is full wherever A reads it (plan/facts.covers), so is the stack
        B = local.stack_values(own, [(p.buf, p.instr.nrows) for p in posted], _dt(own), rt.stacks.pop(id(i), None))
    elif posted:   # (p2p1d posts them as Recvs of own's dtype: dense, or the present entries)
        B = local.stack_column(own, [(p.buf, p.instr.nrows, p.instr.presence, p.instr.sparse) for p in posted],
                               _dt(own), rt.stacks.pop(id(i), None))
        if B is None:   # (own not a column of its dtype: SuiteSparse stacks them)
            B = _stacked(rt, own, posted)
    for p in posted:   # (the rows are in the stack: a peer may write the next round)
        if type(p.req) is shm.Arrival:
            p.req.release()
    for r in i.recvs:
        rt.slots[r] = None
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    _stacked_product(rt, i, B)
    if B is not own and B.ncols == 1:   # for the next stack to write into (nothing else holds it;
        rt.stacks[id(i)] = B            # a sparse x sparse product's wide rows are not kept)
    rt.timed("compute_s", t0)


def _stacked_product(rt: Runtime, i: StackMxM, B):
    if i.push is not None:   # a frontier pushed or pulled (compute.frontier)
        rt.slots[i.out] = frontier(rt, i, rt.slots[i.a], B)
        return
    a, b, op, compute, out = _multiply(rt.slots[i.a], B, i.semiring)
    mask = _output_mask(rt, i)
    if b.ncols > 1 and b.ss.format in _SPARSE:   # (a sparse x sparse product's wide rows): an output that
        # stays sparse; dense rows (sparse x dense, K > 1) take the product's own routes below (a sparse
        # output there made p2p1d's local compute 2.5x slower at P = 2, K = 64)
        C = gbops.sparse_output(a.nrows, b.ncols, compute)
        C(mask=mask) << a.mxm(b, op)
        if rt.checked and overflow.int_product(i.semiring, compute):
            rt.shadows.product(i.out, [(a, b)], i.semiring, rt.product_name(i), mask)
        rt.slots[i.out] = gbops.cast(C, out)
        return
    C = gbops.mxm(a, b, i.semiring, compute, a_empty_rows=i.a_empty_rows, mask=mask,
                  into=rt.reusable(i), taken=rt.routes, b_covered=i.covered)
    if rt.checked and overflow.int_product(i.semiring, compute):
        rt.shadows.product(i.out, [(a, b)], i.semiring, rt.product_name(i), mask)
    rt.pool.keep(id(i), C)
    rt.slots[i.out] = gbops.cast(C, out)


def _stack_in_place(rt: Runtime, i: StackMxM, area: shm.Stack, posted: list, t0: float):
    """The peers wrote their rows into this rank's area right after own's (shm.py). Own's rows
    unchanged since the last call: one product reads the whole area where it lies (lent to
    SuiteSparse; own's rows copied in front once). Own's rows new (every iteration of a loop): own's
    block of A times own's rows where they are, then the peers' block times the rows they wrote,
    both accumulated into one full output, where copying own's rows into the area first cost
    more than the second pass over C (soc-Slashdot0902, P = 2, K = 256: 81-85 against 64-72 ms
    an iteration, `dspla bench runtime`)."""
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    own = rt.slots[i.own]
    # unchanged: one product over the area, own's rows copied there once (if the last call read
    # them in place) and not again; new rows: the two blocks, nothing copied
    unchanged = rt.unchanged_since(i, i.own)
    blocks = None if unchanged or i.mask is not None else _blocks(rt, i, own, area)
    if blocks is None and not (unchanged and area.placed):
        local.values_into(own, area.own)
    area.placed = blocks is None
    for r in i.recvs:
        rt.slots[r] = None
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    if blocks is not None:
        a_own, a_far, F, route = blocks
        with lend.foreign_full(area.far, F):
            ao, bo, _, compute, out = _multiply(a_own, own, i.semiring)
            af, bf, *_ = _multiply(a_far, F, i.semiring)
            C = gbops.mxm_blocks([(ao, bo), (af, bf)], route, i.semiring, compute, i.a_empty_rows,
                                 into=rt.reusable(i), taken=rt.routes)
            if rt.checked and overflow.int_product(i.semiring, compute):
                rt.shadows.product(i.out, [(ao, bo), (af, bf)], i.semiring, rt.product_name(i))
        rt.pool.keep(id(i), C)
        rt.slots[i.out] = gbops.cast(C, out)
    else:
        B = rt.stacks.pop(id(i), None)   # (the empty matrix the area was lent through last time)
        if B is None:
            B = gb.Matrix(_dt(own).gb, *area.whole.shape)
        with lend.foreign_full(area.whole, B):   # (a cast of B inside is a copy of its own)
            _stacked_product(rt, i, B)
        rt.stacks[id(i)] = B
    for p in posted:   # (read: a peer may write the next round)
        p.req.release()
    rt.timed("compute_s", t0)


def _blocks(rt: Runtime, i: StackMxM, own, area: shm.Stack):
    """A's columns cut at own's rows (own's block, the peers' block), the empty matrix the peers'
    rows are lent through and the route, made once and kept on the area; None when the product
    would not take the full-C route, where one product over the stacked rows is made instead.
    The cut is a second copy of the rank's block of A (Slashdot, P = 2, K = 64: peak RSS per rank
    462 / 267 MB with it, 462 / 268 without)."""
    if area.blocks is None:
        a = rt.slots[i.a]
        route = gbops.full_c_route(i.semiring, i.semiring.dtypes(_dt(a), _dt(own))[0], own.shape[1])
        n = area.own.shape[0]
        area.blocks = (local.take(a, cols=slice(0, n)), local.take(a, cols=slice(n, None)),
                       gb.Matrix(_dt(own).gb, *area.far.shape), route) if route else False
    return area.blocks or None


@handler(SampledMxM)
def _sampled_mxm(rt: Runtime, i: SampledMxM):
    """b's rows this rank needs are placed at their global ids in one ncols x k matrix as they
    arrive (own rows first), then one masked product a ⊕.⊗ bᵀ: SuiteSparse computes a dot
    product per mask entry only, with GraphBLAS semantics for missing entries of a or b."""
    own = rt.slots[i.own]
    t0 = time.perf_counter()
    B = gb.Matrix(own.dtype, i.ncols, own.ncols)
    if own.nrows:
        B[i.own_ids, :] << own
    rt.timed("pack_s", t0)
    posted = [rt.slots[r] for r in i.recvs]
    reqs = [p.req for p in posted]
    for _ in posted:
        t0 = time.perf_counter()
        j = rt.comm.waitany(reqs)
        rt.timed("wait_s", t0)
        t0 = time.perf_counter()
        B[i.ids[j], :] << _arrived(rt, posted[j])
        rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    a, b, op, compute, out = _multiply(rt.slots[i.a], B, i.semiring)
    C = gb.Matrix(compute.gb, a.shape[0], i.ncols)
    mask = gbops.mask_of(rt.slots[i.mask], "structure", False)
    C(mask=mask) << a.mxm(b.T, op)
    if rt.checked and overflow.int_product(i.semiring, compute) and \
            overflow.product_bound(a, b, i.semiring, inner=a.ncols) >= overflow.LIMIT:
        rt.shadows.product(i.out, [(a, b.T.new())], i.semiring, rt.product_name(i), mask)
    rt.slots[i.out] = gbops.cast(C, out)
    for r in i.recvs:
        rt.slots[r] = None
    rt.timed("compute_s", t0)


@handler(WaitSends)
def _wait_sends(rt: Runtime, i: WaitSends):
    posted = [rt.slots[b] for b in i.bufs]
    t0 = time.perf_counter()
    rt.comm.waitall([r for p in posted for r in (p.req if isinstance(p.req, list) else [p.req])])
    rt.timed("wait_s", t0)
    for b in i.bufs:
        rt.slots[b] = None


@handler(SendRecvRows)
def _sendrecv(rt: Runtime, i: SendRecvRows):
    g = rt.groups[i.group]
    M = rt.slots[i.src]
    dt = DType(i.dtype)
    t0 = time.perf_counter()
    sendbuf = local.pack_rows(M, np.arange(M.shape[0]), dt, i.presence)
    recvbuf = local.recv_buffer(i.nrows, i.k, dt, i.presence)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    g.sendrecv(sendbuf, i.dest, recvbuf, i.source, i.tag)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    rt.slots[i.out] = local.unpack_rows(recvbuf, i.nrows, i.k, dt, i.presence)
    rt.timed("pack_s", t0)
