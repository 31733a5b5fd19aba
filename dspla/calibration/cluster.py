"""Measure a cluster description's levels on the allocation an MPI job runs on.

Ranks are placed as the description says (``ranks_per_node`` consecutive ranks a node, split
evenly into ``sockets_per_node`` sockets). Each level is measured by ping-pong between rank 0
and the first rank that sits that far from it (same socket: rank 1; other socket of the node:
the first rank of socket 1; other node: rank ``ranks_per_node``), over message sizes: alpha is
the smallest message's time, the bandwidth the largest message's bytes over the rest of its
time; the per-message overhead is the time to post and complete a burst of small sends, per
message. The injection bandwidth is measured when a whole socket and
its partners on the next node are in the job: every rank of socket 0 sends to its partner at
once, and the socket's bytes over the slowest time are its injection bandwidth. A level the job
cannot reach (one node: no network) is not measured: the caller keeps the base description's.
"""
from __future__ import annotations

import time

import numpy as np

from ..costmodel.cluster import Cluster, Level

SIZES = (8, 1 << 10, 1 << 14, 1 << 17, 1 << 20)   # doubles a message


def _pingpong(comm, peer: int | None, n: int, repeat: int) -> float:
    """Half a round trip of n doubles between this rank and ``peer`` (median; others wait)."""
    buf = np.ones(n)
    ts = []
    for _ in range(repeat):
        comm.barrier()
        if peer is None:
            continue
        t0 = time.perf_counter()
        if comm.rank == 0:
            comm.waitall([comm.isend(buf, peer, 11)])
            comm.waitall([comm.irecv(buf, peer, 11)])
        else:
            comm.waitall([comm.irecv(buf, 0, 11)])
            comm.waitall([comm.isend(buf, 0, 11)])
        ts.append((time.perf_counter() - t0) / 2)
    return float(np.median(ts)) if ts else 0.0


def _burst(comm, peer: int | None, count: int = 64) -> float:
    """Seconds per small message when ``count`` are posted at once (LogGP's overhead)."""
    bufs = [np.ones(1) for _ in range(count)]
    comm.barrier()
    if peer is None:
        return 0.0
    t0 = time.perf_counter()
    if comm.rank == 0:
        comm.waitall([comm.isend(b, peer, 12) for b in bufs])
    else:
        comm.waitall([comm.irecv(b, 0, 12) for b in bufs])
    return (time.perf_counter() - t0) / count


def _fit(sizes, times) -> tuple[float, float]:
    """(alpha, bandwidth in bytes/s) of t = alpha + bytes / bandwidth: alpha the smallest
    message's time, the bandwidth from the largest (a least-squares intercept is swamped by the
    noise of the large messages on a shared machine)."""
    alpha = max(float(min(times[:2])), 1e-9)
    return alpha, 8.0 * sizes[-1] / max(float(times[-1]) - alpha, 1e-12)


def measure(comm, ranks_per_node: int, sockets_per_node: int = 1, sizes=SIZES, repeat: int = 5) -> dict:
    """Every rank calls it. Returns, on every rank, {level: (alpha, bandwidth, overhead)} for the
    levels this job reaches, and "injection" (bytes/s per socket) when measurable."""
    per_socket = max(1, ranks_per_node // sockets_per_node)
    far = {"socket": 1 if per_socket > 1 else None, "node": per_socket if sockets_per_node > 1 else None,
           "network": ranks_per_node}
    out = {}
    for level, q in far.items():
        if q is None or q >= comm.size:
            continue
        peer = q if comm.rank == 0 else (0 if comm.rank == q else None)
        times = [_pingpong(comm, peer, n, repeat) for n in sizes]
        over = _burst(comm, peer)
        if comm.rank == 0:
            out[level] = (*_fit(sizes, times), over)
    if comm.size >= ranks_per_node + per_socket and ranks_per_node > 1:
        n = sizes[-1]
        buf = np.ones(n)
        ts = []
        for _ in range(repeat):
            comm.barrier()
            t0 = time.perf_counter()
            if comm.rank < per_socket:
                comm.waitall([comm.isend(buf, comm.rank + ranks_per_node, 13)])
            elif ranks_per_node <= comm.rank < ranks_per_node + per_socket:
                comm.waitall([comm.irecv(buf, comm.rank - ranks_per_node, 13)])
            ts.append(time.perf_counter() - t0)
        slowest = comm.allgather(float(np.median(ts)))
        if comm.rank == 0:
            out["injection"] = per_socket * 8.0 * n / max(max(slowest), 1e-12)
    return comm.bcast(out, 0)


def described(base: Cluster, measured: dict, ranks_per_node: int, sockets_per_node: int,
              spmm: tuple[float, float] | None, name: str) -> Cluster:
    """The base description with the measured levels (and SpMM rates: per nonzero, per output
    row, microbench.spmm_rates) in place of its own."""
    levels = dict(base.levels)
    for lv in ("socket", "node", "network"):
        if lv in measured:
            a, bw, o = measured[lv]
            levels[lv] = Level(a, bw, o)
    if "node" not in measured and "socket" in measured and sockets_per_node == 1:
        levels["node"] = levels["socket"]
    src = "measured: " + ", ".join(k for k in ("socket", "node", "network", "injection") if k in measured)
    kept = [k for k in ("socket", "node", "network", "injection") if k not in measured]
    if kept:
        src += f"; from {base.name}: " + ", ".join(kept)
    return Cluster(name=name, ranks_per_node=ranks_per_node, sockets_per_node=sockets_per_node, levels=levels,
                   injection=measured.get("injection", base.injection),
                   spmm_rate=spmm[0] if spmm else base.spmm_rate, spmm_row=spmm[1] if spmm else base.spmm_row,
                   word_bytes=8, source=src)   # (dspla computes in float64 unless told otherwise)
