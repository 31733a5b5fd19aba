"""Handlers of collectives: allgathers, allreduces (large, and a loop's scalars in one small
message), broadcasts, all-to-alls, redistributions."""
from __future__ import annotations

import time

import graphblas as gb
import numpy as np
from graphblas.ss import concat  # (imported here: python-graphblas loads gb.ss lazily, racing under threads)

from ...algebra import REDUCTIONS
from ...instr import (
    AllgatherRows,
    AllgatherSparse,
    Allreduce,
    Alltoall,
    AlltoallSparse,
    Bcast,
    BcastSparse,
    IBcast,
    ISmallAllreduce,
    Redistribute,
    SmallAllreduce,
    TransposeRows,
    WaitAllreduce,
)
from ...ir.types import DType
from ...kernels import buffers as local
from ...kernels import gbops, item, overflow
from .interpreter import Runtime, _dt, handler
from .messages import _Posted


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
    if rt.checked and overflow.combines(vals.dtype, red.ufunc):
        _check_combined(rt, g, i, red, vals, out_vals, out_pres)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    rt.slots[i.out] = local.from_values_presence(out_vals, out_pres, dt)
    rt.timed("pack_s", t0)


def _true_partial(rt: Runtime, slot: int, vals: np.ndarray, fill) -> np.ndarray:
    """A partial's true value in float64: its shadow when it may have wrapped, else its values."""
    S = rt.shadows.take(slot)
    if S is None:
        return vals.astype(np.float64)
    return local.dense_parts(S, fill=float(fill))[0].reshape(vals.shape)


def _check_combined(rt: Runtime, g, i: Allreduce, red, vals, out_vals, out_pres) -> None:
    """An int64 sum or product over ranks against the same of the partials' true values (one
    more allreduce, in float64: int64 arithmetic wraps modulo 2^64, exact when in range)."""
    shadow = np.empty(vals.shape, dtype=np.float64)
    g.allreduce_buf(_true_partial(rt, i.src, vals, red.fill(_dt(rt.slots[i.src]))), shadow, red)
    with np.errstate(invalid="ignore"):
        wrapped = ~(np.abs(out_vals.astype(np.float64) - shadow) <= overflow.WRAPPED) & out_pres
    if wrapped.any():
        k = np.argwhere(wrapped)[0]
        overflow.raise_wrapped(i.label or "a sum over processes", (int(k[0]), int(k[1]), float(shadow[tuple(k)])))


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
        checked = rt.checked and overflow.combines(dt.np, red.ufunc)
        if checked:   # (the partial's true value travels too: ints wrap, exact when in range)
            chunks.append(_true_partial(rt, src, vals, red.fill(dt)).view(np.uint8).ravel())
        parts.append((vals.shape, dt, red, checked))
    send = np.concatenate(chunks)
    recv = np.empty(send.size * g.size, dtype=np.uint8)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    g.allgatherv(send, recv, [send.size] * g.size)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    every = recv.reshape(g.size, send.size)
    at = 0
    for out, (shape, dt, red, checked) in zip(i.outs, parts):
        n = shape[0] * shape[1]
        nb = n * dt.np.itemsize
        vals = np.ascontiguousarray(every[:, at:at + nb]).view(dt.np)   # (ranks, n), combined in rank order
        pres = every[:, at + nb:at + nb + n].view(bool)
        at += nb + n
        if checked:
            true = np.ascontiguousarray(every[:, at:at + 8 * n]).view(np.float64)
            at += 8 * n
            overflow.verify_combined(red.ufunc.reduce(vals, axis=0), true, red.ufunc, label(i, out))
        rt.slots[out] = local.from_values_presence(red.ufunc.reduce(vals, axis=0).astype(dt.np, copy=False)
                                                   .reshape(shape), pres.any(axis=0).reshape(shape), dt)
    rt.timed("pack_s", t0)


def _small_packed(rt: Runtime, i: SmallAllreduce, g) -> tuple:
    """(item.Packed, fills, ufuncs, checked) of a SmallAllreduce of scalars, its sources packed
    in; ``checked``: the values whose combination is checked for integer overflow, their true
    values (float64) packed after all the others, in that order."""
    values = [rt.slots[src] for src in i.srcs]
    got = rt.small.get(id(i))
    if got is None or got[0].gdts[:len(values)] != tuple(M.dtype for M in values):
        dts = tuple(_dt(M) for M in values)
        reds = [m.reduction(dt) for m, dt in zip(i.monoids, dts)]
        checked = [k for k, (dt, r) in enumerate(zip(dts, reds)) if rt.checked and overflow.combines(dt.np, r.ufunc)]
        fills = [r.fill(dt) for r, dt in zip(reds, dts)]
        got = rt.small[id(i)] = (item.Packed(dts + (DType.float64,) * len(checked), g.size),
                                 fills + [float(fills[k]) for k in checked],
                                 [r.ufunc for r in reds] + [reds[k].ufunc for k in checked], checked)
    packed, fills, _, checked = got
    for k in checked:
        S = rt.shadows.take(i.srcs[k])
        values.append(S if S is not None else gbops.cast(values[k], DType.float64))
    packed.pack(values, fills)
    return got


def label(i, out: int) -> str:
    """How messages name the value a SmallAllreduce makes in slot ``out``."""
    k = i.outs.index(out)
    return i.labels[k] if k < len(i.labels) and i.labels[k] else "a sum over processes"


def _small_combine(rt: Runtime, key: int, outs: tuple, packed, ufuncs, checked, instr):
    for j, k in enumerate(checked):   # (int64 sums and products: against their true values')
        got = ufuncs[k].reduce(packed.ranks_values(k), axis=0)
        overflow.verify_combined(got, packed.ranks_values(len(outs) + j), ufuncs[k], label(instr, outs[k]))
    for k, out in enumerate(outs):
        rt.slots[out] = None
        M = packed.combined(k, ufuncs[k], rt.pool.take((key, k)))
        rt.pool.keep((key, k), M)
        rt.slots[out] = M


def _small_scalars(rt: Runtime, i: SmallAllreduce, g, t0: float):
    packed, _, ufuncs, checked = _small_packed(rt, i, g)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    g.allgatherv(packed.send, packed.recv, packed.counts)
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    _small_combine(rt, id(i), i.outs, packed, ufuncs, checked, i)
    rt.timed("pack_s", t0)


@handler(ISmallAllreduce)
def _ismall_allreduce(rt: Runtime, i: ISmallAllreduce):
    g = rt.groups[i.group]
    t0 = time.perf_counter()
    packed, _, ufuncs, checked = _small_packed(rt, i, g)
    req = g.iallgatherv(packed.send, packed.recv, packed.counts)
    rt.slots[i.req] = _Posted(req, (packed, ufuncs, checked), i)
    rt.timed("pack_s", t0)


@handler(WaitAllreduce)
def _wait_allreduce(rt: Runtime, i: WaitAllreduce):
    p = rt.slots[i.req]
    t0 = time.perf_counter()
    rt.groups[p.instr.group].waitall([p.req])
    rt.timed("wait_s", t0)
    t0 = time.perf_counter()
    _small_combine(rt, id(p.instr), i.outs, *p.buf, p.instr)
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


def _exchange_coo(rt: Runtime, i, sc: np.ndarray, send, dt: DType, g=None) -> list:
    """Every rank's (row, column, value) triplets to the ranks they go to (``sc``: how many to
    each, in destination order): counts by one Alltoallv, then one per array; the triplets
    received, and their traffic counted for instruction ``i``. ``g``: the group (the world)."""
    g = g or rt.comm
    me = g.rank
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
        sub = local.take(M, rows=rows)
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


@handler(AlltoallSparse)
def _alltoall_sparse(rt: Runtime, i: AlltoallSparse):
    g = rt.groups[i.group]
    M = rt.slots[i.src]
    rt.slots[i.src] = None   # (the block is freed before the buffers are made: a rank's peak)
    # the block's float64 shadow, when its product's bound could not clear int64 (StackedMxM): each
    # entry is checked before it leaves, as the block is complete here (a 3D layer's partial: a
    # running total that leaves int64 is reported, as an accumulated product's is)
    shadow = rt.shadows.take(i.src)
    if not i.batches:
        if shadow is not None:
            overflow.compare(M, shadow, rt.product_name(i))
        rt.slots[i.out] = _return_rows(rt, i, g, M, i.cols, 0, i.ncols)
        return
    pieces = []   # C's column batches, each made, returned and built before the next
    for k, (lo, hi) in enumerate(i.batches):
        t0 = time.perf_counter()
        C = M.batch(k)
        if shadow is not None:
            overflow.compare(C, shadow[:, M.positions[k]].new(), rt.product_name(i))
        rt.timed("compute_s", t0)
        pieces.append(_return_rows(rt, i, g, C, i.cols[M.positions[k]], lo, hi - lo))
        C = None
    M = None
    t0 = time.perf_counter()
    rt.slots[i.out] = concat([pieces]) if len(pieces) > 1 else pieces[0]
    rt.timed("pack_s", t0)


def _return_rows(rt: Runtime, i: AlltoallSparse, g, M, cols: np.ndarray, lo: int, ncols: int):
    """M's rows to their owners in group g (columns ``cols``, global, less ``lo``): this rank's
    nrows x ncols piece, the members' entries of one position combined by i's monoid."""
    dt = _dt(M)
    t0 = time.perf_counter()
    r, c, v = M.to_coo()   # (row-major: each member's rows are one run)
    M = None
    r = r.view(np.int64)
    cuts = np.searchsorted(r, i.bounds)
    sc = np.diff(cuts).astype(np.int64)
    for m in np.flatnonzero(sc):   # rows numbered on their owner, in place
        r[cuts[m]:cuts[m + 1]] -= i.bounds[m]
    c = cols[c] - lo if lo else cols[c]   # global columns
    rt.timed("pack_s", t0)
    recv = _exchange_coo(rt, i, sc, (r, c, v), dt, g)
    del r, c, v
    dup = None if i.monoid is None else gbops.binary(i.monoid.op, dt)
    C = gbops.sparse_output(i.nrows, ncols, dt)
    C.build(recv[0], recv[1], recv[2], dup_op=dup)
    if rt.checked and dt is DType.int64 and i.monoid is not None and i.monoid.builtin and \
            i.monoid.name in ("plus", "times"):
        _check_layers(rt, i, g, C, recv, ncols)
    return C


def _check_layers(rt: Runtime, i: AlltoallSparse, g, C, recv, ncols: int) -> None:
    """The members' partials of one position (3D's layers) summed or multiplied in int64 against
    the same in float64, where their magnitudes cannot clear int64 (each partial is exact: it
    was checked before it left)."""
    v = recv[2]
    if len(v) == C.nvals:   # (no position arrived twice: nothing combined)
        return
    most = max(int(v.max()), -int(v.min())) if len(v) else 0   # (np.abs leaves -2^63 negative)
    if (most * g.size if i.monoid.name == "plus" else most ** g.size) < overflow.LIMIT:
        return
    F = gbops.sparse_output(i.nrows, ncols, DType.float64)
    F.build(recv[0], recv[1], v.astype(np.float64), dup_op=gbops.binary(i.monoid.op, DType.float64))
    overflow.compare(C, F, rt.product_name(i))
