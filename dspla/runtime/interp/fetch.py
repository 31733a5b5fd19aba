"""Handlers of instructions that ask other ranks' owners for what a rank needs, so that nothing
is gathered whole: FetchMxM (the rows of a fixed sparse operand a carried value names, one owner
at a time) and FetchGather (a vector's entries at the positions another holds). Their traffic
depends on the data: each reports its payload when it runs."""
from __future__ import annotations

import time

import graphblas as gb
import numpy as np

from ...algebra import REDUCTIONS
from ...instr import FetchGather, FetchMxM
from ...kernels import buffers as local
from ...kernels import gbops, overflow
from ...ops.gather import outside, outside_error
from ..failure import PeerError
from .compute import _multiply, _output_mask
from .interpreter import Runtime, handler


def _pairwise(g, to: int, frm: int, arrays: tuple, dtypes: tuple) -> list:
    """Send ``arrays`` (equal lengths) to rank ``to`` and receive as many arrays from ``frm``: one
    Alltoallv of counts, one per array, every other rank's count zero."""
    P = g.size
    sc, rc = np.zeros(P, np.int64), np.zeros(P, np.int64)
    sc[to] = len(arrays[0])
    g.alltoallv(sc, np.ones(P, np.int64), rc, np.ones(P, np.int64))
    out = []
    for x, dt in zip(arrays, dtypes):
        buf = np.empty(int(rc[frm]), dtype=dt)
        g.alltoallv(np.ascontiguousarray(x, dtype=dt), sc, buf, rc)
        out.append(buf)
    return out


@handler(FetchGather)
def _fetch_gather(rt: Runtime, i: FetchGather):
    g, t0 = rt.comm, time.perf_counter()
    P, me, n = g.size, g.rank, len(i.parts)
    x, idx = rt.slots[i.x], rt.slots[i.idx]
    rows, _, at = idx.to_coo()
    at = at.astype(np.int64, copy=False)
    _agree_in_range(g, at, n)   # (every rank raises alike, before any exchange)
    owner = i.parts[at]
    order = np.argsort(owner, kind="stable")
    sc = np.bincount(owner, minlength=P).astype(np.int64)
    rc = np.empty(P, np.int64)
    g.alltoallv(sc, np.ones(P, np.int64), rc, np.ones(P, np.int64))
    asked = np.empty(int(rc.sum()), np.int64)
    g.alltoallv(np.ascontiguousarray(i.pos[at[order]]), sc, asked, rc)
    # x's rows asked for, read where they lie (buffers.pack_rows: values, then their presence
    # bytes when x may miss entries), not x's whole piece copied at every call
    dt = gbops.dtype_of(x)
    answers = local.pack_rows(x, asked, dt, i.presence)
    values = answers[:asked.size * dt.np.itemsize].view(dt.np) if i.presence else answers[:, 0]
    got = np.empty(int(sc.sum()), dt.np)
    g.alltoallv(np.ascontiguousarray(values), rc, got, sc)
    if i.presence:   # (which of the answers are entries: x's presence there)
        there = np.empty(int(sc.sum()), np.int8)
        g.alltoallv(np.ascontiguousarray(answers[asked.size * dt.np.itemsize:].view(np.int8)), rc, there, sc)
        keep = there.astype(bool)
        rows_out, got = rows[order][keep], got[keep]
    else:
        rows_out = rows[order]
    C = gb.Matrix.from_coo(rows_out, np.zeros(rows_out.size, np.int64), got, nrows=idx.nrows, ncols=1,
                           dtype=x.dtype)
    # positions asked of the others and entries answered to them (their presence is not counted);
    # a rank receives as many: answers to what it asked, and the others' positions
    others = np.arange(P) != me
    words = int(sc[others].sum() + rc[others].sum())
    msgs = int((sc[others] > 0).sum() + (rc[others] > 0).sum())
    rt.count_dynamic(i, (words, msgs, words, msgs))
    rt.slots[i.out] = C
    rt.timed("compute_s", t0)


def _agree_in_range(g, at: np.ndarray, n: int) -> None:
    """Raise on every rank when any rank's positions leave 0..n-1 (one small allreduce), so
    that no rank is left waiting in the exchange and one message is printed."""
    bad = outside(at, n)
    flag = np.array([bad is not None, np.iinfo(np.int64).min if bad is None else bad], dtype=np.int64)
    agreed = np.empty(2, np.int64)
    g.allreduce_buf(flag, agreed, REDUCTIONS["max"])
    if agreed[0]:   # (agreed: rank 0 reports it, the others stop quietly; runtime/failure.py)
        err = outside_error(int(agreed[1]), n)
        if g.rank != 0:
            raise PeerError(f"rank 0 failed: {err}")
        err.agreed = True
        raise err


@handler(FetchMxM)
def _fetch_mxm(rt: Runtime, i: FetchMxM):
    g, t0 = rt.comm, time.perf_counter()
    P, me = g.size, g.rank
    a, b, op, compute, out = _multiply(rt.slots[i.a], rt.slots[i.b], i.semiring)
    mask, acc = _output_mask(rt, i), gbops.binary(i.semiring.monoid.op, compute)
    used = gbops.reduced(a, gb.agg.count, "cols").to_coo()[0].astype(np.int64)   # the rows of b a names
    owner = i.parts[used]
    C = gbops.sparse_output(a.nrows, b.ncols, compute)
    mine = used[owner == me]
    checked, what = rt.checked and overflow.int_product(i.semiring, compute), rt.product_name(i)
    if mine.size:
        am, bm = a[:, mine].new(), b[i.pos[mine], :].new()
        C(mask=mask) << am.mxm(bm, op)
        if checked:   # (C grows by each fetched part: followed in float64 where its bound cannot clear it)
            rt.shadows.product(i.out, [(am, bm)], i.semiring, what, mask)
        del am, bm
    sent = got = msgs_sent = msgs_got = 0
    for k in range(1, P):   # round k: ask rank me + k for its rows, answer rank me - k
        to, frm = (me + k) % P, (me - k) % P
        want = used[owner == to]
        (asked,) = _pairwise(g, to, frm, (want,), (np.int64,))
        r, c, v = b[i.pos[asked], :].new().to_coo() if asked.size else (np.zeros(0, np.int64),) * 2 + (
            np.zeros(0, compute.np),)
        rr, cc, vv = _pairwise(g, frm, to, (r, c, v), (np.int64, np.int64, compute.np))
        sent, msgs_sent = sent + v.size, msgs_sent + (v.size > 0)
        got, msgs_got = got + vv.size, msgs_got + (vv.size > 0)
        del r, c, v
        if want.size and vv.size:
            rows = gb.Matrix.from_coo(rr, cc, vv, nrows=want.size, ncols=b.ncols, dtype=compute.gb)
            del rr, cc, vv
            aw = a[:, want].new()
            follow = checked and rt.shadows.before_accumulating(i.out, C, aw, rows, i.semiring, what)
            C(mask=mask, accum=acc) << aw.mxm(rows, op)
            if follow:
                rt.shadows.accumulated(i.out, aw, rows, i.semiring, mask)
            del rows, aw
    rt.count_dynamic(i, (sent, msgs_sent, got, msgs_got))
    rt.slots[i.out] = gbops.cast(C, out)
    rt.timed("compute_s", t0)
