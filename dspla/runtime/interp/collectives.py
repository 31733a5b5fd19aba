"""Handlers of collectives: allgathers, allreduces (large, and a loop's scalars in one small
message), broadcasts, all-to-alls, redistributions."""
from __future__ import annotations

import time

import graphblas as gb
import numpy as np

from ...algebra import REDUCTIONS
from ...exec import buffers as local
from ...exec import item
from ...ir.types import DType
from ...plan.ir import (
    AllgatherRows,
    AllgatherSparse,
    Allreduce,
    Alltoall,
    Bcast,
    BcastSparse,
    IBcast,
    ISmallAllreduce,
    Redistribute,
    SmallAllreduce,
    TransposeRows,
    WaitAllreduce,
)
from .core import Runtime, _dt, handler
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
