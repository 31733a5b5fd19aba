"""Calibration (runs on real processes, above the cost model and the runtime): microbenchmarks on
this machine, and least-squares fits of the coefficients.

Run on every rank of an MPI job (``dspla calibrate --np P``). Measurements: ping-pong over
message sizes; Allgatherv and Bcast over sizes and group sizes; one-sided gets of row runs
with and without coalescing; local SpMM over nnz x K and density; row packing. Each family is
fitted with non-negative least squares; the fits' R^2 and relative residuals are reported.
"""
from __future__ import annotations

import gc
import os
import socket
import statistics
import time

import graphblas as gb
import numpy as np
import scipy.sparse as sp

from .. import verbosity as log
from ..algebra import MONOIDS, SEMIRINGS
from ..costmodel.coefficients import Coefficients
from ..costmodel.fit import refit
from ..ir.types import DType
from ..kernels import gbops
from ..kernels.buffers import values_of
from .plans import plan_runs


def _time(fn, repeat=5, collect=False):
    """Median time of ``fn()`` after a warm-up. ``collect``: free its result between calls (a
    python-graphblas Matrix sits in a reference cycle, freed by the collector only, which a few
    large objects never wake: SpMM's n x K outputs piled up to 5.1 GB per rank)."""
    fn()
    ts = []
    for _ in range(repeat):
        if collect:
            gc.collect()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    if collect:
        gc.collect()
    return statistics.median(ts)


def _sync_time(comm, fn, repeat=5):
    """Median over repeats of the slowest rank's time for a collective step."""
    comm.barrier()
    fn()
    ts = []
    for _ in range(repeat):
        comm.barrier()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def fit(X: np.ndarray, y: np.ndarray, names: list[str]) -> dict:
    """Non-negative least squares y ~ X @ c, weighted so every sample counts relatively."""
    from scipy.optimize import nnls  # ~0.4 s to import: only when fitting, not for every `dspla` start

    w = 1.0 / np.maximum(y, 1e-7)
    c, _ = nnls(X * w[:, None], y * w)
    pred = np.maximum(X @ c, 1e-12)
    # R^2 in log space: the samples span orders of magnitude, and relative error is what matters
    ly, lp = np.log(y), np.log(pred)
    ss_res = float(((ly - lp) ** 2).sum())
    ss_tot = float(((ly - ly.mean()) ** 2).sum()) or 1e-30
    rel = np.abs(pred - y) / np.maximum(y, 1e-12)
    return {"coefficients": dict(zip(names, map(float, c))), "r2": 1 - ss_res / ss_tot,
            "median_rel_residual": float(np.median(rel)), "max_rel_residual": float(rel.max()), "samples": len(y)}


class Progress:
    def __init__(self, on: bool):
        self.on, self.t0 = on and log.progress(None) is not False, time.perf_counter()

    def __call__(self, msg):
        if self.on:
            log.emit("calibrate", f"  [{time.perf_counter() - self.t0:5.1f} s] {msg}")


def _shared_cores(comm) -> int:
    """The cores the ranks share when they all run on one machine (so P beyond it oversubscribes);
    0 on several machines, where each rank is taken to have its own core."""
    hosts = comm.allgather(socket.gethostname())
    if len(set(hosts)) > 1:
        return 0
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 0


def calibrate(comm, quick: bool = False, plans: bool = True) -> tuple[Coefficients, dict] | None:
    """Every rank calls this; rank 0 returns (coefficients, fits), the others None."""
    P, rank = comm.size, comm.rank
    say = Progress(rank == 0)
    rng = np.random.default_rng(0)
    sizes = [1, 64, 1024, 16384, 131072] if quick else [1, 16, 256, 4096, 32768, 262144, 1048576]
    data: dict[str, list] = {k: [] for k in ("p2p", "coll", "get", "spmm", "pack", "fill")}
    say(f"ping-pong over {len(sizes)} sizes")
    _ping_pong(comm, sizes, data)
    _collectives(comm, sizes, data, say)
    say("one-sided gets")
    _gets(comm, quick, data)
    say("local SpMM over nnz x K and density")
    _spmm(quick, rng, data)
    say("packing rows")
    _pack_and_fill(rng, data, say)
    # whole plans on generated graphs, for the end-to-end refit below
    say("every plan on generated graphs")
    records = plan_runs(comm, quick=quick, say=say) if plans else None
    cores = _shared_cores(comm)
    gathered = comm.gather(data, 0)
    if rank != 0:
        return None
    fits, coefs = _fit_families(gathered)
    say("fitted: " + ", ".join(f"{k} R2={v['r2']:.3f}" for k, v in fits.items()))
    base = Coefficients()
    micro = Coefficients(**{**base.as_dict(), **coefs, "source": f"calibrated at P={P}", "P": P, "cores": cores})
    if not records:
        return micro, fits
    final, report = refit(records, micro)
    fits["plans"] = report
    say(f"end-to-end refit on {report['samples']} plan runs: predicted/measured within [0.67, 1.5] "
        f"{report['before']['within_0.67_1.5']:.0%} -> {report['after']['within_0.67_1.5']:.0%}")
    return final, fits


def _ping_pong(comm, sizes: list, data: dict) -> None:
    """Point-to-point: ping-pong between rank 0 and rank 1 (half a round trip per message)."""
    rank = comm.rank
    if comm.size < 2:
        return
    for n in sizes:
        buf = np.ones(n)
        if rank in (0, 1):
            peer = 1 - rank

            def pp():
                for _ in range(4):
                    if rank == 0:
                        comm.waitall([comm.isend(buf, peer, 7)])
                        comm.waitall([comm.irecv(buf, peer, 7)])
                    else:
                        comm.waitall([comm.irecv(buf, peer, 7)])
                        comm.waitall([comm.isend(buf, peer, 7)])
            t = _time(pp) / 8
            data["p2p"].append(([1.0, 2.0 * n], t))  # a message is packed once and copied once
        comm.barrier()


def _collectives(comm, sizes: list, data: dict, say) -> None:
    """Collectives over sizes and group sizes."""
    P, rank = comm.size, comm.rank
    groups = [(P, comm)]
    if P >= 4:
        groups.append((2, comm.split(rank // 2)))
    say(f"collectives over {len(sizes)} sizes and group sizes {[g for g, _ in groups]}")
    for g, sub in groups:
        for n in sizes:
            per = max(1, n // g)
            send = np.ones(per)
            recv = np.empty(per * g)
            counts = np.full(g, per)
            t = _sync_time(comm, lambda: sub.allgatherv(send, recv, counts))
            data["coll"].append(([np.ceil(np.log2(g)) if g > 1 else 0.0, per * (g - 1)], t))
            b = np.ones(n)
            t = _sync_time(comm, lambda: sub.bcast_buf(b, 0))
            data["coll"].append(([np.ceil(np.log2(g)) if g > 1 else 0.0, n], t))


def _gets(comm, quick: bool, data: dict) -> None:
    """One-sided gets: runs of rows from rank (r+1) % P, with and without coalescing."""
    P, rank = comm.size, comm.rank
    if P < 2:
        return
    K = 16
    rows = 4096 if quick else 16384
    win = comm.window(rows, K * 8)
    win.buf[:] = 1
    win.expose()
    target = (rank + 1) % P
    for nget, run in [(1, 1), (1, 64), (1, 1024), (16, 1), (16, 16), (64, 1), (64, 8), (256, 1)]:
        starts = (np.arange(nget) * (rows // max(nget, 1)))[:nget].astype(np.int64)
        counts = np.full(nget, min(run, rows // max(nget, 1)), dtype=np.int64)
        out = np.empty((int(counts.sum()), K))
        pattern = win.pattern(starts, counts)

        def get():
            comm.waitall([win.get(out, target, pattern)])
        t = _sync_time(comm, get)
        data["get"].append(([1.0, float(counts.sum() * K)], t))
    comm.barrier()
    win.free()


def _spmm(quick: bool, rng, data: dict) -> None:
    """Local SpMM over nnz x K and density (every rank measures its own; rank 0's are fitted)."""
    for nnz in ([20_000, 200_000] if quick else [20_000, 100_000, 400_000]):
        for per_row in (2, 8, 32):
            n = max(64, nnz // per_row)
            A = sp.random_array((n, n), density=min(1.0, nnz / n / n), random_state=rng, format="csr")
            Ag = gb.io.from_scipy_sparse(A)
            for K in (16, 64) if quick else (16, 64, 256):
                Bg = gb.Matrix.from_dense(rng.random((n, K)))
                t = _time(lambda: gbops.mxm(Ag, Bg, SEMIRINGS["plus_times"], DType.float64), repeat=3, collect=True)
                # time ~ per call + per (nonzero x K) + per output entry (rows x K)
                data["spmm"].append(([1.0, float(A.nnz * K), float(n * K)], t))


def spmm_rates(nnz: int = 100_000, K: int = 32, per_row=(0.5, 1, 2, 8, 32)) -> tuple[float, float]:
    """A cluster description's local SpMM rates: (nonzeros x columns per second, output rows x
    columns per second), fitted to t = per call + nnz K / first + n K / second over square blocks
    of the same nonzeros at several densities (a sparser block is slower per nonzero: more rows)."""
    rng = np.random.default_rng(0)
    rows = []
    for d in per_row:
        n = max(64, int(nnz / d))
        Ag = gb.io.from_scipy_sparse(sp.random_array((n, n), density=nnz / n / n, random_state=rng, format="csr"))
        Bg = gb.Matrix.from_dense(rng.random((n, K)))
        t = _time(lambda: gbops.mxm(Ag, Bg, SEMIRINGS["plus_times"], DType.float64), repeat=3, collect=True)
        rows.append(([1.0, float(Ag.nvals * K), float(n * K)], t))
    c = fit(np.array([r[0] for r in rows]), np.array([r[1] for r in rows]), ["kappa", "nnz", "row"])["coefficients"]
    per_nnz = c["nnz"] if c["nnz"] > 0 else min(r[1] / r[0][1] for r in rows)
    return 1.0 / per_nnz, (1.0 / c["row"] if c["row"] > 0 else 0.0)


def _pack_and_fill(rng, data: dict, say) -> None:
    """Packing rows into a message buffer; creating a full output at the identity (the start of
    an in-place accumulation), written once: calloc hands out untouched zero pages, so without
    the write the cost would show up later, in the product that first writes them."""
    for m in (1000, 5000, 20000, 50000, 200000):
        src = rng.random((max(m, 1000) * 2, 32))
        idx = np.sort(rng.choice(src.shape[0], m, replace=False))
        out = np.empty((m, 32))
        t = _time(lambda: np.take(src, idx, axis=0, out=out))
        data["pack"].append(([float(m * 32)], t))
    say("filling outputs")

    def fill(m):
        M = gbops.identity_full(m, 32, MONOIDS["plus"], DType.float64)
        with values_of(M) as v:
            v.fill(0.0)
    for m in (5000, 20000, 100000):
        t = _time(lambda: fill(m), collect=True)
        data["fill"].append(([float(m * 32)], t))


_FAMILIES = [("p2p", ["alpha_p2p", "beta_p2p"]), ("coll", ["alpha_coll", "beta_coll"]),
             ("get", ["alpha_get", "beta_get"]), ("spmm", ["kappa", "gamma", "delta"]), ("pack", ["beta_pack"]),
             ("fill", ["beta_fill"])]


def _fit_families(gathered: list) -> tuple[dict, dict]:
    """(fits, coefficients) of every family of measurements, rank 0's, with a collective step or a
    get taken as the slowest rank's (it ends when the slowest does)."""
    mine = gathered[0]
    fits, coefs = {}, {}
    for family in ("coll", "get"):
        for i, (x, _) in enumerate(mine[family]):
            mine[family][i] = (x, max(per[family][i][1] for per in gathered))
    for family, names in _FAMILIES:
        rows = mine[family]
        if not rows:
            continue
        X = np.array([r[0] for r in rows], dtype=float)
        y = np.array([r[1] for r in rows], dtype=float)
        f = fit(X, y, names)
        fits[family] = f
        coefs.update(f["coefficients"])
    return fits, coefs
