"""Local SpMM at the kernel's limit: ``f(A=..., X=...)`` for ``A @ X`` through the DSL
against the GraphBLAS routes and scipy, on soc-Slashdot0902 and a 1M-entry random matrix, for
K in {16, 64, 256}; one process.

Rows, timed in alternation over ``--rounds`` rounds (min and median of each):

- ``dspla gb``: the function called with GraphBLAS inputs, unchanged between calls;
- ``dspla np``: the same with scipy/numpy inputs (unchanged objects: converted once);
- ``full-C``: GraphBLAS accumulating into a full output made once, ``C(plus) << A.mxm(X)``
  (the kernel's floor: it neither allocates nor fills C, and its values pile up);
- ``fill+full-C``: the same after setting C to zero (``C << 0``, which SuiteSparse expands
  inside the product): the least a fresh result costs through this route, since full-C's
  values are last call's plus this one's (no dspla; the rows of A that are empty are still
  present zeros here, where a GraphBLAS result must leave them missing);
- ``new``: GraphBLAS's own ``A.mxm(X).new()``;
- ``scipy``: ``A @ X``.

Reported: each row's min / median, dspla / full-C (min and median), and median / min of the
dspla rows (stability) and of full-C itself: the kernel alone, no dspla, in the same rounds, so
a drift that is the machine's is told from one that is dspla's. Bars: dspla gb
within 1.15x (min) and 1.3x (median) of full-C; median / min <= 1.3 for every dspla row over
20 rounds.

    dspla bench local [--rounds 20] [--K 16,64,256] [--graphs slashdot,random] [--json F]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time

import graphblas as gb
import numpy as np
import scipy.sparse as sp

import dspla as dp

from .common import git_commit, mpi_worker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLASHDOT = os.path.join(ROOT, "..", "shared", "datasets", "snap", "soc-Slashdot0902.txt.gz")


def _graphs(names: list) -> dict:
    out = {}
    for name in names:
        if name == "slashdot":
            from dspla.formats.graph import load_graph
            if not os.path.exists(SLASHDOT):
                print(f"skipping soc-Slashdot0902: {SLASHDOT} is absent")
                continue
            out["soc-Slashdot0902"] = sp.csr_array(load_graph(SLASHDOT, quiet=True).matrix, dtype=np.float64)
        elif name == "random":
            rng = np.random.default_rng(0)
            n, nnz = 100_000, 1_000_000
            A = sp.csr_array((rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, n, nnz))), shape=(n, n))
            A.sum_duplicates()
            out["random 1M"] = A
        else:
            raise SystemExit(f"unknown graph {name!r}: slashdot, random")
    return out


def rounds(fns: dict, n: int) -> dict:
    """name -> list of seconds, the functions timed in alternation (one warm-up each)."""
    for fn in fns.values():
        fn()
    times = {k: [] for k in fns}
    for _ in range(n):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return times


def measure(A: sp.csr_array, K: int, n_rounds: int) -> dict:
    rng = np.random.default_rng(K)
    X = rng.random((A.shape[0], K))
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    # one function per input kind: each keeps its own inputs "unchanged" (the same objects)
    # between its calls; one function alternating between them would re-bind on every call
    f = dp.function(outputs={"C": a @ x})
    f_np = dp.function(outputs={"C": a @ x})
    Agb, Xgb = gb.io.from_scipy_sparse(A), gb.Matrix.from_dense(X)
    C = gb.Matrix.from_dense(np.zeros((A.shape[0], K)))
    C0 = gb.Matrix.from_dense(np.zeros((A.shape[0], K)))
    plus_times = gb.semiring.plus_times

    def full_c():
        C(gb.binary.plus) << Agb.mxm(Xgb, plus_times)

    def fill_full_c():
        C0 << 0.0
        C0(gb.binary.plus) << Agb.mxm(Xgb, plus_times)

    fns = {"dspla gb": lambda: f(A=Agb, X=Xgb), "dspla np": lambda: f_np(A=A, X=X), "full-C": full_c,
           "fill+full-C": fill_full_c, "new": lambda: Agb.mxm(Xgb, plus_times).new(), "scipy": lambda: A @ X}
    # the same answer (full-C's values pile up: checked before it runs again)
    want = A @ X
    np.testing.assert_allclose(f(A=Agb, X=Xgb)["C"].to_numpy(fill=0.0), want, rtol=1e-12)
    gc.collect()
    t = rounds(fns, n_rounds)
    return {k: {"min_s": min(v), "median_s": statistics.median(v)} for k, v in t.items()}


# ------------------------------------------------------------------------ P processes, per rank
def worker(graph: str, K: int, rounds: int, out: str):
    """Under mpiexec (one GraphBLAS thread per process): every rank times the calls of
    ``f(A, X)`` (p2p1d, block rows, inputs unchanged) in alternation with the full-C route on its
    own rows (its block of A times the whole X, accumulated into a full output made once), and
    dspla's local compute inside the call. Rank 0 writes the slowest rank's figures per round."""
    comm = dp.world()
    A = next(iter(_graphs([graph]).values())) if comm.rank == 0 else None   # (read on rank 0 only)
    n = comm.bcast(A.shape[0] if comm.rank == 0 else None, 0)
    X = np.random.default_rng(K).random((n, K)) if comm.rank == 0 else None
    f = dp.function(outputs={"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    opts = {"plan": "p2p1d", "partition": "block"}
    inputs = {"A": A, "X": X} if comm.rank == 0 else None
    f.run(inputs, **opts)   # plans; the pieces stay on their ranks
    sess = f.session(comm, **opts)
    # the full-C route's operands, the bench's own (not dspla's pieces): each rank's block of rows
    # (contiguous: block partition) and the whole X
    if comm.rank == 0:
        starts = np.searchsorted(sess.plan.dims["n"].parts, np.arange(comm.size + 1))
        blocks = [A[starts[q]:starts[q + 1]] for q in range(comm.size)]
    Aloc = gb.io.from_scipy_sparse(comm.scatter(blocks if comm.rank == 0 else None, 0))
    Xgb = gb.Matrix.from_dense(comm.bcast(X, 0))
    C = gb.Matrix.from_dense(np.zeros((Aloc.nrows, K)))

    def full_c():
        C(gb.binary.plus) << Aloc.mxm(Xgb, gb.semiring.plus_times)

    full_c()
    times = {"dspla": [], "dspla compute": [], "full-C": []}
    for _ in range(rounds):
        comm.barrier()
        t0 = time.perf_counter()
        f.run(inputs, **opts)
        t = time.perf_counter() - t0
        times["dspla"].append(max(comm.allgather(t)))
        times["dspla compute"].append(max(comm.allgather(sess.runtime.times["compute_s"])))
        comm.barrier()
        t0 = time.perf_counter()
        full_c()
        times["full-C"].append(max(comm.allgather(time.perf_counter() - t0)))
    if comm.rank == 0:
        with open(out, "w") as fh:
            json.dump(times, fh)


def per_rank(graph: str, K: int, rounds: int, P: int = 2) -> dict:
    t = mpi_worker("bench.local", P, lambda out: ["--worker", graph, K, rounds, out])
    return {k: {"min_s": min(v), "median_s": statistics.median(v)} for k, v in t.items()}


def _cells(rows: list, key: str, bar: float) -> str:
    """'met', or 'NOT met' and the cells above the bar."""
    out = [f"{r['graph']} K = {r['K']} {r[key]:.2f}" for r in rows if r[key] > bar]
    return "met" if not out else "NOT met (" + ", ".join(out) + ")"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench local")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--K", default="16,64,256")
    ap.add_argument("--graphs", default="slashdot,random")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--P", type=int, default=2, help="also per rank at this many processes (0: skip)")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]), int(args.worker[2]), args.worker[3])
        return 0
    threads = gb.ss.config["nthreads"]
    print(f"commit {git_commit()}; one process, GraphBLAS threads {threads}; {args.rounds} interleaved rounds, "
          "min / median ms")
    results = []
    for gname, A in _graphs(args.graphs.split(",")).items():
        print(f"{gname}: {A.shape[0]} rows, {A.nnz} entries")
        print(f"{'K':>5} {'dspla gb':>15} {'dspla np':>15} {'full-C':>15} {'fill+full-C':>15} {'new':>15} "
              f"{'scipy':>15} {'gb/full-C min':>14} {'median':>7} {'fill+full-C/full-C min':>23} {'med/min gb':>11} "
              f"{'np':>5} {'full-C':>7}")
        for K in map(int, args.K.split(",")):
            r = measure(A, K, args.rounds)
            ms = {k: f"{v['min_s'] * 1e3:.1f} / {v['median_s'] * 1e3:.1f}" for k, v in r.items()}
            row = {"graph": gname, "K": K, **r,
                   "ratio_min": r["dspla gb"]["min_s"] / r["full-C"]["min_s"],
                   "ratio_median": r["dspla gb"]["median_s"] / r["full-C"]["median_s"],
                   "fill_ratio_min": r["fill+full-C"]["min_s"] / r["full-C"]["min_s"],
                   "stability_gb": r["dspla gb"]["median_s"] / r["dspla gb"]["min_s"],
                   "stability_np": r["dspla np"]["median_s"] / r["dspla np"]["min_s"],
                   "stability_full_c": r["full-C"]["median_s"] / r["full-C"]["min_s"]}
            results.append(row)
            print(f"{K:>5} {ms['dspla gb']:>15} {ms['dspla np']:>15} {ms['full-C']:>15} {ms['fill+full-C']:>15} "
                  f"{ms['new']:>15} {ms['scipy']:>15} {row['ratio_min']:>14.2f} {row['ratio_median']:>7.2f} "
                  f"{row['fill_ratio_min']:>23.2f} {row['stability_gb']:>11.2f} {row['stability_np']:>5.2f} "
                  f"{row['stability_full_c']:>7.2f}")
    ranked = []
    if args.P > 1:
        print(f"per rank at P = {args.P} (p2p1d, block rows, one GraphBLAS thread each; the slowest rank per "
              "round): dspla's call, its local compute, and the full-C route on the rank's own rows")
        print(f"{'graph':>18} {'K':>5} {'dspla call':>15} {'dspla compute':>15} {'full-C':>15} {'call/full-C min':>16} "
              f"{'median':>7} {'compute/full-C min':>19}")
        for gname in args.graphs.split(","):
            for K in map(int, args.K.split(",")):
                r = per_rank(gname, K, args.rounds, args.P)
                row = {"graph": gname, "K": K, "P": args.P, **r,
                       "ratio_min": r["dspla"]["min_s"] / r["full-C"]["min_s"],
                       "ratio_median": r["dspla"]["median_s"] / r["full-C"]["median_s"],
                       "compute_ratio_min": r["dspla compute"]["min_s"] / r["full-C"]["min_s"],
                       "stability": r["dspla"]["median_s"] / r["dspla"]["min_s"]}
                ranked.append(row)
                ms = {k: f"{v['min_s'] * 1e3:.1f} / {v['median_s'] * 1e3:.1f}" for k, v in r.items()}
                print(f"{gname:>18} {K:>5} {ms['dspla']:>15} {ms['dspla compute']:>15} {ms['full-C']:>15} "
                      f"{row['ratio_min']:>16.2f} {row['ratio_median']:>7.2f} {row['compute_ratio_min']:>19.2f}")
    for where, rows in (("one process", results), (f"per rank at P = {args.P}", ranked)):
        if rows:
            print(f"bars, {where}: min within 1.15x of full-C {_cells(rows, 'ratio_min', 1.15)}; "
                  f"median within 1.3x {_cells(rows, 'ratio_median', 1.3)}")
    if results:
        print(f"bar: median/min <= 1.3 {_cells(results, 'stability_gb', 1.3)} (gb), "
              f"{_cells(results, 'stability_np', 1.3)} (np); full-C's own median/min "
              f"{max(r['stability_full_c'] for r in results):.2f} at most")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"commit": git_commit(), "threads": threads, "rounds": args.rounds, "rows": results,
                       "per_rank": ranked}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
