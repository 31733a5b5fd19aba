"""The plan interpreter: runs one rank's RankProgram on a communicator, counting what moves.

One handler per instruction type in the EXEC table. What an instruction moves (words: matrix
entries sent to or received from another process; messages) is the instruction's own
``traffic``, the same account the cost model predicts from: the static part is summed per
product once, at set-up; instructions whose traffic depends on the data report their payload
when they run. Handlers time three phases: compute (local GraphBLAS work), pack (gathering rows
into buffers and back) and wait (blocked in communication).
"""
from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from typing import Callable

import graphblas as gb
import numpy as np
from graphblas.ss import concat  # (imported here: python-graphblas loads gb.ss lazily, racing under threads)

from ..algebra import REDUCTIONS
from ..exec import buffers as local
from ..exec import gbops, item, prepared, recycle
from ..exec.reference import EVAL, INTO, Env, truth
from ..ir.types import DType
from ..plan.ir import (
    INSTRUCTIONS,
    AllgatherRows,
    AllgatherSparse,
    Allreduce,
    Alltoall,
    Bcast,
    BcastSparse,
    CastTo,
    DropRows,
    Empty,
    Fill,
    Free,
    Get,
    IBcast,
    ISmallAllreduce,
    Local,
    Loop,
    MxM,
    Pack,
    PackSparse,
    RankProgram,
    Recv,
    RecvMxM,
    Redistribute,
    SampledMxM,
    Send,
    SendRecvRows,
    SmallAllreduce,
    StackMxM,
    TakeCols,
    TakeRows,
    Traffic,
    TransposeRows,
    Unpermute,
    WaitAllreduce,
    WaitSends,
    Where,
    WinExpose,
)
from . import faults

EXEC: dict[type, Callable] = {}


def handler(cls):
    def register(fn):
        EXEC[cls] = fn
        return fn
    return register


class Runtime:
    """A rank's program bound to a communicator: sub-communicators and windows are set up once;
    ``run`` executes one iteration."""

    def __init__(self, program: RankProgram, comm, extra: dict | None = None):
        self.program = program
        self.comm = comm
        self.groups = [comm] + [comm.split(color) for color in program.splits]
        self.windows = [comm.window(2 * nrows, row_bytes) for nrows, row_bytes in program.windows]
        self.parity = [1] * len(self.windows)
        self.slots: list = [None] * program.n_slots
        self.pool = recycle.Pool()   # outputs of earlier runs and iterations, reused once free
        self.steps = prepared.Steps()   # local steps resolved to their C call once (exec/prepared.py)
        self.bitmaps: dict = {}      # slot -> a presence bitmap its Fill took back (gbops.take_bitmap)
        self.stacks: dict = {}       # StackMxM -> its last stacked operand, written into again
        self.small: dict = {}        # SmallAllreduce of scalars -> (item.Packed, fills, ufuncs)
        self.sendbufs: dict = {}     # Pack -> its last buffer (written into again once its send is done)
        for slot, value in program.consts.items():
            self.slots[slot] = value
        self.extra = extra or {}
        self.patterns: dict = {}   # (Get instruction, window half) -> the window's access pattern
        self.env = Env({}, self.extra.get("dims", {}))
        # what each block moves whatever the data, per product: summed once, added per run (the
        # program) or per iteration (a loop's condition and body)
        self.where = Where(comm.rank, tuple(g.size if g is not None else 0 for g in self.groups))
        self.static_traffic = self.block_traffic(program.instrs)
        self.setup_traffic = self.block_traffic(program.setup)
        self.setup_done = False
        self.reset_counters()
        # DSPLA_FAULT=RANK:INSTRUCTION[:dspla]: that rank raises before that instruction (faults.py)
        self.fault = faults.at_instruction(comm.rank)

    def close(self):
        """Free the windows (collective: every rank closes its runtime together)."""
        for w in self.windows:
            w.free()
        self.windows = []

    def block_traffic(self, instrs) -> dict:
        """product -> what the block's instructions move whatever the data (each loop's own blocks
        are summed apart, in loop_traffic, and counted per iteration)."""
        out: dict = {}
        for i in instrs:
            if type(i) is Loop:
                self.loop_traffic[id(i)] = (self.block_traffic(i.cond), self.block_traffic(i.body))
            elif not i.dynamic:
                out[i.product] = out.get(i.product, Traffic()) + i.traffic(self.where)
        return out

    @property
    def loop_traffic(self) -> dict:
        lt = self.__dict__.get("_loop_traffic")
        if lt is None:
            lt = self.__dict__["_loop_traffic"] = {}
        return lt

    def reset_counters(self):
        self.counters: dict = {}   # product -> Traffic
        self.product_times: dict = {}
        self.times = {"compute_s": 0.0, "pack_s": 0.0, "wait_s": 0.0}
        self.iterations: dict = {}   # loop -> iterations run
        self.at_bound: dict = {}     # loop -> (source position, bound), when it stopped at its bound
        self.loop_s: dict = {}       # loop -> seconds in it
        self.loop_words: dict = {}   # loop -> words this rank sent in each iteration (the dynamic ones' too)
        self.routes: Counter = Counter()   # local product route (exec/routes.py) -> times taken

    def took(self, route: str):
        self.routes[route] += 1

    def reusable(self, i):
        """Instruction i's result of the last run or iteration, to be written into, when nothing
        else holds it any more (exec/recycle.py); its slot lets go of it first."""
        self.slots[i.out] = None
        return self.pool.take(id(i))

    def count(self, product, t: Traffic):
        self.counters[product] = self.counters.get(product, Traffic()) + t

    def count_block(self, traffic: dict, times: int = 1):
        for product, t in traffic.items():
            self.count(product, Traffic(*(x * times for x in t)) if times != 1 else t)

    def count_dynamic(self, instr, payload):
        self.count(instr.product, instr.traffic(self.where, payload))

    def run(self, inputs: dict) -> dict:
        s = self.slots
        for name, slot in self.program.inputs.items():
            s[slot] = inputs[name]
        if not self.setup_done:   # the plan's deferred static values, computed once
            self.execute(self.program.setup)
            self.count_block(self.setup_traffic)
            self.setup_done = True
        self.execute(self.program.instrs, self.fault)
        self.count_block(self.static_traffic)
        out = {name: s[slot] for name, (slot, _) in self.program.outputs.items()}
        for slot in self.program.inputs.values():
            s[slot] = None
        return out

    def execute(self, instrs, fault=None):
        pt = self.product_times
        clock = time.perf_counter
        for k, instr in enumerate(instrs):
            if fault is not None and k == fault[0]:
                faults.raise_fault(fault[1], f"fault injected by DSPLA_FAULT before instruction {k} "
                                             f"({type(instr).__name__})")
            t0 = clock()
            EXEC[type(instr)](self, instr)
            if instr.product is not None:
                pt[instr.product] = pt.get(instr.product, 0.0) + clock() - t0

    def timed(self, phase: str, t0: float):
        self.times[phase] += time.perf_counter() - t0


def _dt(M) -> DType:
    return gbops.dtype_of(M)


# ------------------------------------------------------------------------------- compute
@handler(Local)
def _local(rt: Runtime, i: Local):
    t0 = time.perf_counter()
    args = [rt.slots[a] for a in i.args]
    if i.node.op in INTO:
        into = rt.reusable(i)
        M = rt.steps.run(id(i), i.node, args, into)   # the prepared C call (exec/prepared.py), if one applies
        if M is None:
            M = EVAL[i.node.op](i.node, args, rt.env, into=into)
        if all(M is not a for a in args):   # (an operand passed through is not ours to reuse)
            rt.pool.keep(id(i), M)
        rt.slots[i.out] = M
    else:
        rt.slots[i.out] = EVAL[i.node.op](i.node, args, rt.env)
    rt.timed("compute_s", t0)


def _multiply(a, b, sr):
    da, db = _dt(a), _dt(b)
    compute, out = sr.dtypes(da, db)
    ca, cb = sr.operand_dtypes(da, db, compute)
    return gbops.cast(a, ca), gbops.cast(b, cb), gbops.semiring(sr, compute), compute, out


def _output_mask(rt: Runtime, i):
    return gbops.mask_of(rt.slots[i.mask], i.mask_kind, i.complement) if i.mask is not None else None


@handler(MxM)
def _mxm(rt: Runtime, i: MxM):
    t0 = time.perf_counter()
    a, b, op, compute, out = _multiply(rt.slots[i.a], rt.slots[i.b], i.semiring)
    mask = _output_mask(rt, i)
    if i.accumulate:  # into the output: SuiteSparse's in-place C ⊕= A ⊗ B (inside the mask)
        C = rt.slots[i.out]
        if mask is None and gbops.accumulate_full(C, a, b, i.semiring):
            rt.took("udf-full")
        else:
            C(accum=gbops.binary(i.semiring.monoid.op, compute), mask=mask) << a.mxm(b, op)
            rt.took("accumulate")
    else:
        C = gbops.mxm(a, b, i.semiring, compute, a_empty_rows=i.a_empty_rows, mask=mask, into=rt.reusable(i),
                      taken=rt.routes)
        rt.pool.keep(id(i), C)
        rt.slots[i.out] = gbops.cast(C, out)
    rt.timed("compute_s", t0)


@handler(Fill)
def _fill(rt: Runtime, i: Fill):
    t0 = time.perf_counter()
    into = rt.reusable(i)
    # the slot's last DropRows left a presence bitmap that the next one can use again
    rt.bitmaps[i.out] = gbops.take_bitmap(into)
    C = gbops.identity_full(i.nrows, i.k, i.monoid, DType(i.dtype), into=into)
    rt.pool.keep(id(i), C)
    rt.slots[i.out] = C
    rt.timed("compute_s", t0)


@handler(DropRows)
def _drop_rows(rt: Runtime, i: DropRows):
    t0 = time.perf_counter()
    rt.slots[i.out] = gbops.drop_rows(rt.slots[i.out], i.rows, rt.bitmaps.pop(i.out, None))
    rt.timed("compute_s", t0)


@handler(Pack)
def _pack(rt: Runtime, i: Pack):
    t0 = time.perf_counter()
    M = rt.slots[i.src]
    rt.slots[i.out] = None
    last = rt.sendbufs.get(id(i))   # the last iteration's buffer, once its send is done and dropped
    free = last if last is not None and sys.getrefcount(last) == 3 else None   # (the dict, last, the call)
    buf = rt.slots[i.out] = local.pack_rows(M, i.rows, _dt(M), i.presence, out=free)
    if i.presence:
        rt.sendbufs[id(i)] = buf
    rt.timed("pack_s", t0)


@handler(Unpermute)
def _unpermute(rt: Runtime, i: Unpermute):
    t0 = time.perf_counter()
    M = rt.slots[i.src]
    # rows of the gathered matrix are in rank order; order[i] is the global row of stacked row i
    inv = np.empty_like(i.order)
    inv[i.order] = np.arange(i.order.size)
    rt.slots[i.out] = M[inv, :].new()
    rt.timed("pack_s", t0)


@handler(TakeRows)
def _take_rows(rt: Runtime, i: TakeRows):
    t0 = time.perf_counter()
    rt.slots[i.out] = rt.slots[i.src][i.rows, :].new()
    rt.timed("pack_s", t0)


@handler(TakeCols)
def _take_cols(rt: Runtime, i: TakeCols):
    t0 = time.perf_counter()
    rt.slots[i.out] = rt.slots[i.src][:, i.cols].new()
    rt.timed("pack_s", t0)


@handler(CastTo)
def _cast_to(rt: Runtime, i: CastTo):
    rt.slots[i.out] = gbops.cast(rt.slots[i.src], DType(i.dtype))


@handler(Free)
def _free(rt: Runtime, i: Free):
    for s in i.slots:
        rt.slots[s] = None


# ------------------------------------------------------------------------------ messages
class _Posted:
    __slots__ = ("req", "buf", "instr", "waiting")

    def __init__(self, req, buf, instr, waiting=None):
        self.req, self.buf, self.instr = req, buf, instr
        self.waiting = waiting   # a sparse receive: its count has to arrive before its entries


@handler(PackSparse)
def _pack_sparse(rt: Runtime, i: PackSparse):
    t0 = time.perf_counter()
    M = rt.slots[i.src]
    rt.slots[i.out] = local.pack_sparse_rows(M, i.rows, _dt(M))
    rt.timed("pack_s", t0)


@handler(Send)
def _send(rt: Runtime, i: Send):
    buf = rt.slots[i.buf]
    t0 = time.perf_counter()
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
    if type(r) is Recv and r.sparse:
        rt.count_dynamic(r, local.sparse_count(p.buf))
        return local.unpack_sparse_rows(p.buf, r.nrows, r.k, dt)
    return local.unpack_rows(p.buf, r.nrows, r.k, dt, r.presence)


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
        j = live[rt.comm.waitany([posted[k].req for k in live])]
        rt.timed("wait_s", t0)
        p = posted[j]
        if p.waiting:   # a sparse receive's count: post its entries, exactly sized
            n = local.sparse_count(p.buf)
            p.waiting = False
            if n:
                r = p.instr
                p.buf = np.empty(local.sparse_size(n, DType(r.dtype)), dtype=np.uint8)
                p.req = rt.comm.irecv(p.buf, r.source, r.tag + 1)
                continue
        live.remove(j)
        t0 = time.perf_counter()
        R = _arrived(rt, p)
        rt.timed("pack_s", t0)
        t0 = time.perf_counter()
        a, b, op, compute, _ = _multiply(rt.slots[i.blocks[j]], R, i.semiring)
        acc = gbops.binary(i.semiring.monoid.op, compute)
        if mask is None and gbops.accumulate_full(C, a, b, i.semiring, i.rows[j] if i.rows else None):
            rt.took("udf-full")   # a user's semiring, by its compiled kernel
        elif i.rows:  # the block holds only the rows that have remote entries: a small output
            C[i.rows[j], :](accum=acc) << a.mxm(b, op).new()
            rt.took("accumulate")
        else:
            C(accum=acc, mask=mask) << a.mxm(b, op)
            rt.took("accumulate")
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


@handler(StackMxM)
def _stack_mxm(rt: Runtime, i: StackMxM):
    posted = [rt.slots[r] for r in i.recvs]
    t0 = time.perf_counter()
    rt.comm.waitall([p.req for p in posted])
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    own = rt.slots[i.own]
    B = own
    if posted:   # (p2p1d posts them as dense Recvs of own's dtype)
        B = local.stack_column(own, [(p.buf, p.instr.nrows, p.instr.presence) for p in posted], _dt(own),
                               rt.stacks.pop(id(i), None))
        if B is None:   # (own neither full nor a bitmap of its dtype: SuiteSparse stacks them)
            B = concat([[m] for m in [own] + [gbops.cast(_arrived(rt, p), _dt(own)) for p in posted]])
    for r in i.recvs:
        rt.slots[r] = None
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    a, b, op, compute, out = _multiply(rt.slots[i.a], B, i.semiring)
    C = gbops.mxm(a, b, i.semiring, compute, a_empty_rows=i.a_empty_rows, mask=_output_mask(rt, i), taken=rt.routes)
    rt.slots[i.out] = gbops.cast(C, out)
    if B is not own:   # for the next stack to write into (nothing else holds it)
        rt.stacks[id(i)] = B
    rt.timed("compute_s", t0)


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
    C(mask=gbops.mask_of(rt.slots[i.mask], "structure", False)) << a.mxm(b.T, op)
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


# ---------------------------------------------------------------------------- collectives
@handler(AllgatherRows)
def _allgather_rows(rt: Runtime, i: AllgatherRows):
    g = rt.groups[i.group]
    M = rt.slots[i.src]
    dt = DType(i.dtype)
    total = int(i.counts.sum())
    t0 = time.perf_counter()
    mine = local.pack_rows(M, np.arange(M.shape[0]), dt, False) if not i.presence else None
    if i.presence:
        vals, pres = local.dense_parts(M)
        mine = np.ascontiguousarray(vals, dtype=dt.np)
    recv = np.empty((total, i.k), dtype=dt.np)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    g.allgatherv(mine, recv, i.counts * i.k)
    if i.presence:
        allpres = np.empty((total, i.k), dtype=bool)
        g.allgatherv(np.ascontiguousarray(pres), allpres, i.counts * i.k)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    rt.slots[i.out] = (local.from_values_presence(recv, allpres, dt) if i.presence else local.from_values(recv, dt))
    rt.timed("pack_s", t0)


@handler(AllgatherSparse)
def _allgather_sparse(rt: Runtime, i: AllgatherSparse):
    M = rt.slots[i.src]
    t0 = time.perf_counter()
    r, c, v = M.to_coo()
    pieces = rt.comm.allgather((r.astype(np.int64), c.astype(np.int64), v))
    rt.timed("wait_s", t0)
    rows, cols, vals = [], [], []
    for p, (pr, pc, pv) in enumerate(pieces):
        off = i.offsets[p]
        if i.axis == "rows":
            rows.append(i.index[off + pr]); cols.append(pc)  # noqa: E702
        else:
            rows.append(pr); cols.append(i.index[off + pc])  # noqa: E702
        vals.append(pv)
    rt.count_dynamic(i, (M.nvals, sum(len(p[2]) for k, p in enumerate(pieces) if k != rt.comm.rank)))
    rt.slots[i.out] = gb.Matrix.from_coo(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals),
                                         nrows=i.shape[0], ncols=i.shape[1], dtype=M.dtype)


@handler(Allreduce)
def _allreduce(rt: Runtime, i: Allreduce):
    g = rt.groups[i.group]
    M = rt.slots[i.src]
    dt = _dt(M)
    t0 = time.perf_counter()
    red = i.monoid.reduction(dt)
    vals, pres = local.dense_parts(M, fill=red.fill(dt))   # a missing entry takes no part
    vals = np.ascontiguousarray(vals, dtype=dt.np)
    out_vals, out_pres = np.empty_like(vals), np.empty_like(pres)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    g.allreduce_buf(vals, out_vals, red)
    if i.presence:
        g.allreduce_buf(pres, out_pres, REDUCTIONS["lor"])
    else:
        out_pres = pres
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    rt.slots[i.out] = local.from_values_presence(out_vals, out_pres, dt)
    rt.timed("pack_s", t0)


@handler(SmallAllreduce)
def _small_allreduce(rt: Runtime, i: SmallAllreduce):
    g = rt.groups[i.group]
    t0 = time.perf_counter()
    if all(e == 1 for e in i.entries):   # scalars (every loop has some): buffers and views made once
        _small_scalars(rt, i, g, t0)
        return
    chunks, parts = [], []
    for src, monoid in zip(i.srcs, i.monoids):
        M = rt.slots[src]
        dt = _dt(M)
        red = monoid.reduction(dt)
        vals, pres = local.dense_parts(M, fill=red.fill(dt))
        chunks += [np.ascontiguousarray(vals, dtype=dt.np).view(np.uint8).ravel(), pres.view(np.uint8).ravel()]
        parts.append((vals.shape, dt, red))
    send = np.concatenate(chunks)
    recv = np.empty(send.size * g.size, dtype=np.uint8)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    g.allgatherv(send, recv, [send.size] * g.size)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    every = recv.reshape(g.size, send.size)
    at = 0
    for out, (shape, dt, red) in zip(i.outs, parts):
        n = shape[0] * shape[1]
        nb = n * dt.np.itemsize
        vals = np.ascontiguousarray(every[:, at:at + nb]).view(dt.np)   # (ranks, n), combined in rank order
        pres = every[:, at + nb:at + nb + n].view(bool)
        at += nb + n
        rt.slots[out] = local.from_values_presence(red.ufunc.reduce(vals, axis=0).astype(dt.np, copy=False)
                                                   .reshape(shape), pres.any(axis=0).reshape(shape), dt)
    rt.timed("pack_s", t0)


def _small_packed(rt: Runtime, i: SmallAllreduce, g) -> tuple:
    """(item.Packed, fills, ufuncs) of a SmallAllreduce of scalars, its sources packed in."""
    values = [rt.slots[src] for src in i.srcs]
    got = rt.small.get(id(i))
    if got is None or got[0].gdts != tuple(M.dtype for M in values):
        dts = tuple(_dt(M) for M in values)
        reds = [m.reduction(dt) for m, dt in zip(i.monoids, dts)]
        got = rt.small[id(i)] = (item.Packed(dts, g.size), [r.fill(dt) for r, dt in zip(reds, dts)],
                                 [r.ufunc for r in reds])
    got[0].pack(values, got[1])
    return got


def _small_combine(rt: Runtime, key: int, outs: tuple, packed, ufuncs):
    for k, out in enumerate(outs):
        rt.slots[out] = None
        M = packed.combined(k, ufuncs[k], rt.pool.take((key, k)))
        rt.pool.keep((key, k), M)
        rt.slots[out] = M


def _small_scalars(rt: Runtime, i: SmallAllreduce, g, t0: float):
    packed, _, ufuncs = _small_packed(rt, i, g)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    g.allgatherv(packed.send, packed.recv, packed.counts)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    _small_combine(rt, id(i), i.outs, packed, ufuncs)
    rt.timed("pack_s", t0)


@handler(ISmallAllreduce)
def _ismall_allreduce(rt: Runtime, i: ISmallAllreduce):
    g = rt.groups[i.group]
    t0 = time.perf_counter()
    packed, _, ufuncs = _small_packed(rt, i, g)
    req = g.iallgatherv(packed.send, packed.recv, packed.counts)
    rt.slots[i.req] = _Posted(req, (packed, ufuncs), i)
    rt.timed("pack_s", t0)


@handler(WaitAllreduce)
def _wait_allreduce(rt: Runtime, i: WaitAllreduce):
    p = rt.slots[i.req]
    t0 = time.perf_counter()
    rt.groups[p.instr.group].waitall([p.req])
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    _small_combine(rt, id(p.instr), i.outs, *p.buf)
    rt.slots[i.req] = None
    rt.timed("pack_s", t0)


@handler(Bcast)
def _bcast(rt: Runtime, i: Bcast):
    g = rt.groups[i.group]
    dt = DType(i.dtype)
    t0 = time.perf_counter()
    if g.rank == i.root:
        M = rt.slots[i.src]
        buf = local.pack_rows(M, np.arange(M.shape[0]), dt, i.presence)
    else:
        buf = local.recv_buffer(i.nrows, i.k, dt, i.presence)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    g.bcast_buf(buf, i.root)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    rt.slots[i.out] = local.unpack_rows(buf, i.nrows, i.k, dt, i.presence) if g.rank != i.root else rt.slots[i.src]
    rt.timed("pack_s", t0)


@handler(IBcast)
def _ibcast(rt: Runtime, i: IBcast):
    g = rt.groups[i.group]
    if g.rank == i.root:
        buf = rt.slots[i.src]
    else:
        buf = local.recv_buffer(i.nrows, i.k, DType(i.dtype), i.presence)
    t0 = time.perf_counter()
    req = g.ibcast_buf(buf, i.root)
    rt.timed("wait_s", t0)
    rt.slots[i.out] = _Posted(req, buf, i)


@handler(BcastSparse)
def _bcast_sparse(rt: Runtime, i: BcastSparse):
    g = rt.groups[i.group]
    dt = DType(i.dtype)
    t0 = time.perf_counter()
    if g.rank == i.root:
        g.bcast_buf(rt.slots[i.src], i.root)
        rt.timed("wait_s", t0)
        rt.slots[i.out] = rt.slots[i.local]
        return
    buf = np.empty(local.csr_nbytes(i.nrows, i.nnz, dt), dtype=np.uint8)
    g.bcast_buf(buf, i.root)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    rt.slots[i.out] = local.csr_unpack(buf, i.nrows, i.ncols, i.nnz, dt)
    rt.timed("pack_s", t0)


@handler(Alltoall)
def _alltoall(rt: Runtime, i: Alltoall):
    g = rt.groups[i.group]
    M = rt.slots[i.src]
    dt = DType(i.dtype)
    t0 = time.perf_counter()
    if i.presence:
        vals, pres = local.dense_parts(M)
        vals = vals.astype(dt.np, copy=False)
    else:
        vals = M.to_dense() if M.nvals else np.zeros((M.shape[0], M.shape[1]), dt.np)
    sends = [vals[rows][:, lo:hi] for rows, (lo, hi) in zip(i.send_rows, i.send_cols)]
    sendbuf = np.concatenate([x.reshape(-1) for x in sends]) if sends else np.zeros(0, dt.np)
    sc = [x.size for x in sends]
    rc = [a * b for a, b in i.recv_shapes]
    recv = np.empty(sum(rc), dtype=dt.np)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    g.alltoallv(sendbuf, sc, recv, rc)
    if i.presence:
        psend = np.concatenate([pres[rows][:, lo:hi].reshape(-1) for rows, (lo, hi) in zip(i.send_rows, i.send_cols)])
        precv = np.empty(sum(rc), dtype=bool)
        g.alltoallv(psend, sc, precv, rc)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    offs = np.r_[0, np.cumsum(rc)]
    join = np.vstack if i.stack == "rows" else np.hstack
    out_vals = join([recv[offs[m]:offs[m + 1]].reshape(shape) for m, shape in enumerate(i.recv_shapes)])
    if i.presence:
        out_pres = join([precv[offs[m]:offs[m + 1]].reshape(shape) for m, shape in enumerate(i.recv_shapes)])
        rt.slots[i.out] = local.from_values_presence(np.ascontiguousarray(out_vals), out_pres, dt)
    else:
        rt.slots[i.out] = local.from_values(np.ascontiguousarray(out_vals), dt)
    rt.timed("pack_s", t0)


def _exchange_coo(rt: Runtime, i, sc: np.ndarray, send, dt: DType) -> list:
    """Every rank's (row, column, value) triplets to the ranks they go to (``sc``: how many to
    each, in destination order): counts by one Alltoallv, then one per array; the triplets
    received, and their traffic counted for instruction ``i``."""
    g, me = rt.comm, rt.comm.rank
    rc = np.empty_like(sc)
    t0 = time.perf_counter()
    g.alltoallv(sc, np.ones(g.size, np.int64), rc, np.ones(g.size, np.int64))
    recv = [np.empty(int(rc.sum()), dtype=x) for x in (np.int64, np.int64, dt.np)]
    for buf, x in zip(recv, send):
        g.alltoallv(np.ascontiguousarray(x, dtype=buf.dtype), sc, buf, rc)
    rt.timed("wait_s", t0)
    others = [m for m in range(g.size) if m != me]
    rt.count_dynamic(i, (int(sc[others].sum()), int((sc[others] > 0).sum()), int(rc[others].sum()),
                         int((rc[others] > 0).sum())))
    return recv


@handler(Redistribute)
def _redistribute(rt: Runtime, i: Redistribute):
    M = rt.slots[i.src]
    t0 = time.perf_counter()
    if i.axis == "col":
        M = M.T.new()
    parts = []
    for rows in i.send:
        sub = M[rows, :].new() if len(rows) else gb.Matrix(M.dtype, 0, M.shape[1])
        r, c, v = sub.to_coo()
        parts.append((i.ids[rows][r], c.astype(np.int64), v))
    sc = np.array([p[2].size for p in parts], dtype=np.int64)
    rt.timed("pack_s", t0)
    dt = _dt(M)
    recv = _exchange_coo(rt, i, sc, [np.concatenate([p[k] for p in parts]) for k in range(3)], dt)
    out = gb.Matrix.from_coo(i.pos[recv[0]], recv[1], recv[2], nrows=i.nrows, ncols=i.width, dtype=dt.gb)
    rt.slots[i.out] = out.T.new() if i.axis == "col" else out


@handler(TransposeRows)
def _transpose_rows(rt: Runtime, i: TransposeRows):
    g = rt.comm
    M = rt.slots[i.src]
    t0 = time.perf_counter()
    r, c, v = M.to_coo()
    c = c.astype(np.int64, copy=False)
    dest = i.parts[c]
    order = np.argsort(dest, kind="stable")
    sc = np.bincount(dest, minlength=g.size).astype(np.int64)
    send = (c[order], i.ids[r][order], v[order])   # (row of the result, its column, value)
    rt.timed("pack_s", t0)
    dt = _dt(M)
    recv = _exchange_coo(rt, i, sc, send, dt)
    rt.slots[i.out] = gb.Matrix.from_coo(i.pos[recv[0]], recv[1], recv[2], nrows=i.nrows, ncols=i.ncols,
                                         dtype=dt.gb)


# ---------------------------------------------------------------------------------- loops
def _sent(rt: Runtime) -> int:
    return sum(t.words_sent for t in rt.counters.values())


@handler(Loop)
def _loop(rt: Runtime, i: Loop):
    s = rt.slots
    for c, v in zip(i.carry, i.init):
        s[c] = s[v]
    t_loop = time.perf_counter()
    cond_traffic, body_traffic = rt.loop_traffic[id(i)]
    static_words = sum(t.words_sent for t in cond_traffic.values()) + sum(t.words_sent for t in body_traffic.values())
    words = rt.loop_words.setdefault(i.loop, [])
    it, checks = _iterate(rt, i, words, static_words)
    rt.loop_s[i.loop] = rt.loop_s.get(i.loop, 0.0) + time.perf_counter() - t_loop
    rt.count_block(cond_traffic, checks)
    rt.count_block(body_traffic, it)
    rt.count_dynamic(i, checks)
    count = gb.Matrix(DType.int64.gb, 1, 1)
    count[0, 0] = it
    s[i.count] = count
    rt.iterations[i.loop] = rt.iterations.get(i.loop, 0) + it
    if it == i.max_iter and i.max_iter > 0:
        rt.at_bound[i.loop] = (i.where, i.max_iter)


def _iterate(rt: Runtime, i: Loop, words: list, static_words: int) -> tuple[int, int]:
    s = rt.slots
    it = checks = 0
    while it < i.max_iter:
        before = _sent(rt)
        rt.execute(i.cond)
        checks += 1
        go = truth(s[i.cond_slot])
        if rt.comm.size > 1 and not i.agreed:   # rank 0's answer: every rank takes the same branch
            flag = np.array([go], dtype=np.uint8)
            t0 = time.perf_counter()
            rt.comm.bcast_buf(flag, 0)
            rt.timed("wait_s", t0)
            go = bool(flag[0])
        if not go:
            break
        rt.execute(i.body)
        # all at once: a result may be another carried value's slot (body(x, p) -> (x + 1, x))
        new = [s[r] for r in i.results]
        for c, v in zip(i.carry, new):
            s[c] = v
        it += 1
        words.append(static_words + _sent(rt) - before)   # what moved in this iteration
        gc.collect(0)   # the iteration's temporaries (python-graphblas matrices sit in reference cycles)
    return it, checks


@handler(Empty)
def _empty(rt: Runtime, i: Empty):
    rt.slots[i.out] = gb.Matrix(DType(i.dtype).gb, i.nrows, i.k)


# ------------------------------------------------------------------------------ one-sided
@handler(WinExpose)
def _win_expose(rt: Runtime, i: WinExpose):
    w = rt.windows[i.win]
    p = rt.parity[i.win] = 1 - rt.parity[i.win]
    t0 = time.perf_counter()
    if i.nrows and i.k:
        local.write_window_rows(w.buf[p * i.nrows:(p + 1) * i.nrows], rt.slots[i.src], DType(i.dtype), i.presence)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    w.expose()
    rt.timed("wait_s", t0)


@handler(Get)
def _get(rt: Runtime, i: Get):
    w = rt.windows[i.win]
    buf = local.window_recv_buffer(i.nrows, i.k, DType(i.dtype), i.presence)
    parity = rt.parity[i.win]
    pattern = rt.patterns.get((id(i), parity))
    if pattern is None:   # each get's rows in each half of the double-buffered window, built once
        pattern = rt.patterns[id(i), parity] = w.pattern(i.starts + parity * i.target_nrows, i.counts)
    t0 = time.perf_counter()
    req = w.get(buf, i.target, pattern)
    rt.timed("wait_s", t0)
    rt.slots[i.out] = _Posted(req, buf, i)


assert set(EXEC) == set(INSTRUCTIONS), f"instructions without a handler: {set(INSTRUCTIONS) - set(EXEC)}"
