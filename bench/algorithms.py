"""The graph algorithms of examples/ against python-graphblas, and PageRank on P processes.

1. One process, soc-Slashdot0902 (by default): time to solution after loading (the graph is a
   scipy CSR in memory; both sides convert it) for PageRank, BFS, SSSP, connected components,
   triangle counting and LAGraph's algorithms (betweenness, k-truss, local clustering, core
   numbers, maximal independent set, Sandia LL triangles: lagraph_cases), dspla (a fresh
   function: compile, plan, run) against a direct python-graphblas implementation of the same
   algorithm written the way an experienced python-graphblas user would (here and in
   _gb_algorithms.py; same iteration rules, same results: checked). Interleaved rounds, medians.
   Bar: dspla / graphblas <= 1.3 for each.
2. ``--P 2``: PageRank under mpiexec with one GraphBLAS thread per process, P = 2 against P = 1:
   time per iteration (the loop's own time over its iterations, the slowest rank), words per
   iteration of the product against the analysis layer's count of p2p1d on that partition; BFS
   per level: frontier size and words moved. Bar: P=2 per iteration <= 0.65 x P=1.
3. The same PageRank comparison on the graph without the edges between its two halves of node
   ids, partitioned in those halves (``block``): nothing crosses ranks but the loop's scalars,
   so P=2 / P=1 there is what the machine gives when there is nothing to exchange, the floor
   of item 2's ratio (``--no-floor`` skips it).

   With it, the machine's own figure: python-graphblas's PageRank step (gb_pagerank's), no
   dspla, on each process's half of the rows with the whole vector at hand, both processes at
   once: the slowest rank's time per iteration against one process doing all rows.

    dspla bench algorithms [--graph PATH] [--rounds 5] [--only NAMES] [--P 2] [--no-floor] [--json F]
"""
from __future__ import annotations

import argparse
import difflib
import gc
import json
import os
import statistics
import sys
import time

import graphblas as gb
import numpy as np
import scipy.sparse as sp
from graphblas import binary, monoid, semiring, unary

from .common import git_commit, mpi_worker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPH = os.path.join(ROOT, "..", "shared", "datasets", "snap", "soc-Slashdot0902.txt.gz")
sys.path.insert(0, os.path.join(ROOT, "examples"))


# ------------------------------------------------- direct python-graphblas implementations
def gb_pagerank(A: sp.csr_array, alpha=0.85, tol=1e-10, max_iter=200):
    G = gb.io.from_scipy_sparse(A)
    n = G.nrows
    outdeg = G.reduce_rowwise(monoid.plus).new()
    sinks = gb.Vector(float, n)
    sinks(~outdeg.S) << 1.0   # the dangling nodes
    AT = G.T.new()
    r = gb.Vector.from_dense(np.full(n, 1.0 / n))
    w = gb.Vector(float, n)
    s = gb.Vector(float, n)
    it = 0
    delta = 1.0
    while delta > tol and it < max_iter:
        r, delta = gb_pagerank_step(AT, r, outdeg, sinks, w, s, w, n, alpha)
        it += 1
    return r, it


def gb_pagerank_step(AT, r, outdeg, sinks, w, s, x, n: int, alpha: float):
    """One PageRank iteration on r's rows (all of them, or a process's share in kernels_worker):
    (the new r, its L1 change). ``sinks``: 1 at r's dangling nodes; ``x``: the vector the product
    reads (w itself, or the whole w as after an exchange); ``n``: the whole graph's node count."""
    w << r.ewise_mult(outdeg, binary.truediv)
    dangling = r.ewise_mult(sinks, binary.first).reduce().new().get(0.0)   # (no dangling node: 0)
    s << AT.mxv(x, semiring.plus_times)
    new = gb.Vector.from_dense(np.full(r.size, (alpha * dangling + 1 - alpha) / n))
    new(accum=binary.plus) << s.apply(binary.times, alpha)
    return new, new.ewise_add(r, binary.minus).apply(unary.abs).reduce().value


def _bitmap(v, on: bool):
    """v held as a bitmap when ``on`` (the tuned references): SuiteSparse's dot products look a
    bitmap's entries up instead of merging two sorted lists (docs/local.md)."""
    if on:
        v.ss.config["sparsity_control"] = ["bitmap"]
    return v


def gb_bfs(A: sp.csr_array, source: int, tuned: bool = False):
    G = gb.io.from_scipy_sparse(A)
    AT = G.T.new(dtype=bool)
    n = G.nrows
    levels = gb.Vector(int, n)
    frontier = gb.Vector(bool, n)
    frontier[source] = True
    visited = frontier.dup()
    depth = 0
    levels[source] = 0
    while frontier.nvals:
        depth += 1
        frontier(~visited.S, replace=True) << AT.mxv(_bitmap(frontier, tuned), semiring.any_pair)
        visited(frontier.S) << True
        levels(frontier.S) << depth
    return levels


def gb_sssp(A: sp.csr_array, source: int):
    """Bellman-Ford from the frontier, as examples/sssp.py: the distances that changed pushed along
    their out-edges (vxm), kept where they reach a node first or shorten its path."""
    G = gb.io.from_scipy_sparse(A)
    n = G.nrows
    d = gb.Vector(float, n)
    d[source] = 0.0
    frontier = d.dup()
    while frontier.nvals:
        reach = frontier.vxm(G, semiring.min_plus).new()
        better = reach.ewise_union(d, binary.lt, left_default=np.inf, right_default=np.inf).new()
        frontier = gb.Vector(float, n)
        frontier(better.V) << reach
        d(frontier.S) << frontier
    return d


def gb_components(A: sp.csr_array):
    G = gb.io.from_scipy_sparse(A)
    S = G.ewise_add(G.T, binary.any).new(dtype=bool)
    n = G.nrows
    labels = gb.Vector.from_dense(np.arange(n, dtype=np.int64))
    while True:
        new = labels.ewise_add(S.mxv(labels, semiring.min_second).new(), binary.min).new()
        new = new[new.to_dense()].new()   # pointer jumping, as examples/cc.py: GraphBLAS's extract
        if new.isequal(labels):
            return labels
        labels = new


def gb_triangles(A: sp.csr_array) -> int:
    G = gb.io.from_scipy_sparse(A)
    S = G.ewise_add(G.T, binary.any).new(dtype=bool)
    L = S.select("tril", -1).new(dtype=np.int64)
    C = gb.Matrix(np.int64, L.nrows, L.ncols)
    C(mask=L.S) << L.mxm(L, semiring.plus_pair)
    return int(C.reduce_scalar().value)


# ------------------------------------------------------------------------- one process
def _dspla_pagerank(f, A) -> tuple:
    """(ranks, iterations) of examples/pagerank's function on A."""
    r = f(A=A, r0=np.ones((A.shape[0], 1)))["r"].to_numpy()[:, 0]
    return r, f.last_stats["loops"][0]["iterations"]


def _dense_first(got: tuple) -> tuple:
    return got[0].to_dense(), got[1]


def lagraph_cases(A) -> dict:
    """LAGraph's algorithms of examples/ against _gb_algorithms.py: betweenness from the 32 nodes of
    largest out-degree (the directed graph), the rest on the undirected pattern (each side
    symmetrises), the 5-truss."""
    from betweenness import betweenness_function
    from kcore import kcore_function
    from ktruss import ktruss_function
    from lcc import lcc_function
    from mis import mis_function
    from triangles_ll import triangles_ll_function

    from . import _gb_algorithms as ref
    src = np.argsort(-np.diff(A.indptr), kind="stable")[:32].astype(np.int64)
    return {
        "betweenness": (lambda: betweenness_function()(A=A, sources=src)["centrality"].to_numpy(),
                        lambda: ref.gb_betweenness(A, src).to_dense()),
        "ktruss": (lambda: ktruss_function()(A=A, k=5)["T"].to_scipy(),
                   lambda: gb.io.to_scipy_sparse(ref.gb_ktruss(A, 5))),
        "lcc": (lambda: lcc_function()(A=A)["lcc"].to_numpy(), lambda: ref.gb_lcc(A).to_dense()),
        "kcore": (lambda: kcore_function()(A=A)["core"].to_numpy(), lambda: ref.gb_kcore(A).to_dense()),
        "mis": (lambda: mis_function()(A=A, seed=1)["iset"].to_numpy(fill=False),
                lambda: ref.gb_mis(A, 1).to_dense(fill_value=False)),
        "triangles_ll": (lambda: int(triangles_ll_function()(A=A)["triangles"]), lambda: ref.gb_triangles_ll(A)),
    }


def _same(name: str, a, b) -> bool:
    if name == "pagerank":   # the same ranks after the same number of iterations
        return a[1] == b[1] and np.allclose(a[0], b[0], rtol=1e-9, atol=1e-12)
    if sp.issparse(a):
        return a.shape == b.shape and (a != b).nnz == 0
    if name in ("betweenness", "lcc"):   # sums in another order
        return np.allclose(a, b, rtol=1e-9, atol=1e-12)
    return np.array_equal(a, b)


def one_process(A, rounds: int, only=None) -> list:
    from bfs import bfs_function
    from cc import cc_function
    from pagerank import pagerank_function
    from sssp import sssp_function
    from triangles import triangles_function

    import dspla as dp

    n = A.shape[0]
    Aw = A.copy()
    Aw.data[:] = 1.0 + (Aw.indices % 7)
    src = int(np.argmax(np.diff(A.indptr)))        # a well-connected source
    s_bool = sp.csr_array(([True], ([src], [0])), shape=(n, 1))
    s_f = sp.csr_array(([1.0], ([src], [0])), shape=(n, 1))
    cases = {
        "pagerank": (lambda: _dspla_pagerank(pagerank_function(), A), lambda: _dense_first(gb_pagerank(A))),
        "bfs": (lambda: bfs_function()(A=A, s=s_bool)["levels"].to_numpy(fill=-1)[:, 0],
                lambda: gb_bfs(A, src).to_dense(fill_value=-1)),
        "sssp": (lambda: sssp_function()(A=Aw, s=s_f)["d"].to_numpy(fill=np.inf)[:, 0],
                 lambda: gb_sssp(Aw, src).to_dense(fill_value=np.inf)),
        "cc": (lambda: cc_function()(A=A)["labels"].to_numpy()[:, 0], lambda: gb_components(A).to_dense()),
        "triangles": (lambda: int(triangles_function()(A=A)["triangles"].to_numpy()[0, 0]),
                      lambda: gb_triangles(A)),
    }
    cases.update(lagraph_cases(A))
    if only:
        unknown = sorted(set(only) - set(cases))
        if unknown:
            near = [m for u in unknown for m in difflib.get_close_matches(u, cases, n=1)]
            raise SystemExit(f"dspla bench algorithms: unknown --only {', '.join(unknown)}"
                             + (f" (did you mean {', '.join(near)}?)" if near else "")
                             + f"; the algorithms: {', '.join(cases)}")
        cases = {k: v for k, v in cases.items() if k in only}
    # the BFS reference with its frontier held as a bitmap, as dspla now reads it
    # (docs/local.md): reported beside the bar's references, which stay as they were written
    tuned = {"bfs": lambda: gb_bfs(A, src, tuned=True).to_dense(fill_value=-1)}
    del dp
    rows = []
    for name, (ours, theirs) in cases.items():
        a, b = ours(), theirs()      # warm-up, and the same answer
        same = _same(name, a, b)
        fns = [("graphblas", theirs), ("dspla", ours)]
        if name in tuned:
            same = same and np.array_equal(tuned[name](), b)
            fns.append(("tuned", tuned[name]))
        t: dict = {k: [] for k, _ in fns}
        for r in range(rounds):
            for k, fn in (fns if r % 2 == 0 else fns[::-1]):   # each side first in every other round
                gc.collect()   # the last round's garbage freed before the clock starts, for both
                t0 = time.perf_counter()
                fn()
                t[k].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in t.items()}
        row = {"algorithm": name, "load_average": os.getloadavg()[0], "dspla_s": med["dspla"],
               "graphblas_s": med["graphblas"],
               "ratio": med["dspla"] / med["graphblas"], "dspla_min_s": min(t["dspla"]),
               "graphblas_min_s": min(t["graphblas"]), "same_result": bool(same)}
        extra = ""
        if "tuned" in med:
            row.update(tuned_s=med["tuned"], ratio_tuned=med["dspla"] / med["tuned"])
            extra = f"; against the bitmap-tuned reference {med['tuned'] * 1e3:.1f} ms: {row['ratio_tuned']:.2f}"
        rows.append(row)
        print(f"  {name:<10} dspla {med['dspla'] * 1e3:9.1f} ms  graphblas {med['graphblas'] * 1e3:9.1f} ms  "
              f"ratio {med['dspla'] / med['graphblas']:5.2f}  (bar <= 1.3: "
              f"{'met' if med['dspla'] / med['graphblas'] <= 1.3 else 'NOT met'}; same result: {same}){extra}",
              flush=True)
    return rows


# --------------------------------------------------------------------------- P processes
def halves(A: sp.csr_array) -> sp.csr_array:
    """A without the edges between node ids [0, n/2) and [n/2, n): two blocks on the diagonal."""
    C = sp.coo_array(A)
    h = A.shape[0] // 2
    keep = (C.row < h) == (C.col < h)
    return sp.csr_array((C.data[keep], (C.row[keep], C.col[keep])), shape=A.shape)


def worker(graph: str, out: str, rounds: int, floor: bool = False):
    """Under mpiexec: PageRank and BFS on every rank, stats from rank 0. ``floor``: PageRank
    only, on the graph's two halves (halves()) partitioned as such: nothing to exchange."""
    from bfs import bfs_function
    from pagerank import pagerank_function

    import dspla as dp
    from dspla.analysis import comm_stats
    from dspla.formats.graph import load_graph

    comm = dp.world()
    A = sp.csr_array(load_graph(graph, quiet=True).matrix, dtype=np.float64) if comm.rank == 0 else None
    if floor and comm.rank == 0:
        A = halves(A)
    part = "block" if floor else "hypergraph"
    n = comm.bcast(A.shape[0] if comm.rank == 0 else None, 0)
    pr = pagerank_function()
    runs = []
    for _ in range(rounds):
        pr.run({"A": A, "r0": np.ones((n, 1))} if comm.rank == 0 else None, plan="p2p1d", partition=part)
        if comm.rank == 0:
            runs.append(pr.last_stats)
    res = {}
    if comm.rank == 0:
        loops = [s["loops"][0] for s in runs[1:] or runs]      # the first run plans
        per_it = [lp["seconds"] / max(1, lp["iterations"]) for lp in loops]
        prod = (runs[-1]["products"] or [{}])[0]   # one process plans no distributed product
        parts = pr.session(comm, plan="p2p1d", partition=part).plan.dims["n"].parts
        want = comm_stats(sp.csr_array(A.T), parts, comm.size, b_parts=parts).volume_total   # K = 1
        res["pagerank"] = {"P": comm.size, "iterations": loops[-1]["iterations"], "s_per_iteration": per_it,
                           "product_words_per_iteration": prod.get("words_sent_per_iteration", 0),
                           "analysis_words_per_iteration": int(want),
                           "all_words_per_iteration": loops[-1]["words_per_iteration"][:3]}
    if floor:
        if comm.rank == 0:
            json.dump(res, open(out, "w"))
        return
    bfs = bfs_function()
    src = comm.bcast(int(np.argmax(np.diff(A.indptr))) if comm.rank == 0 else None, 0)
    s = sp.csr_array(([True], ([src], [0])), shape=(n, 1)) if comm.rank == 0 else None
    out_ = bfs.run({"A": A, "s": s} if comm.rank == 0 else None, plan="p2p1d", partition="hypergraph")
    levels = out_["levels"].to_numpy(fill=-1, root=0)
    if comm.rank == 0:
        st = bfs.last_stats
        lv = levels[:, 0]
        sizes = np.bincount(lv[lv >= 0].astype(np.int64))
        res["bfs"] = {"P": comm.size, "levels": len(sizes), "frontier": sizes[:].tolist(),
                      "words_per_level": st["loops"][0]["words_per_iteration"],
                      "seconds": st["loops"][0]["seconds"]}
        json.dump(res, open(out, "w"))


def kernels_worker(graph: str, out: str, iterations: int = 60):
    """Under mpiexec, no dspla: gb_pagerank's step on this rank's contiguous share of the rows (the
    product with the whole w, as after an exchange, and the element-wise work on its own rows),
    one GraphBLAS thread; each iteration's time is the slowest rank's. (w stays the same, so the
    values stop changing; the work per iteration does not.)"""
    from mpi4py import MPI

    from dspla.formats.graph import load_graph
    comm = MPI.COMM_WORLD
    gb.ss.config["nthreads"] = 1
    A = sp.csr_array(load_graph(graph, quiet=True).matrix, dtype=np.float64)
    n, P, rank = A.shape[0], comm.size, comm.rank
    lo, hi = n * rank // P, n * (rank + 1) // P
    AT = gb.io.from_scipy_sparse(sp.csr_array(sp.csr_array(A.T)[lo:hi]))
    deg = np.diff(A.indptr).astype(np.float64)
    has = np.flatnonzero(deg[lo:hi])
    outdeg = gb.Vector.from_coo(has, deg[lo:hi][has], size=hi - lo)
    sinks = gb.Vector.from_coo(np.flatnonzero(deg[lo:hi] == 0), 1.0, size=hi - lo)
    full_has = np.flatnonzero(deg)
    w_all = gb.Vector.from_coo(full_has, 1.0 / n / deg[full_has], size=n)
    r = gb.Vector.from_dense(np.full(hi - lo, 1.0 / n))
    w, s_ = gb.Vector(float, hi - lo), gb.Vector(float, hi - lo)
    times = []
    for _ in range(iterations):
        comm.Barrier()
        t0 = time.perf_counter()
        r, _ = gb_pagerank_step(AT, r, outdeg, sinks, w, s_, w_all, n, 0.85)
        times.append(comm.allreduce(time.perf_counter() - t0, op=MPI.MAX))
    if rank == 0:
        json.dump({"P": P, "s_per_iteration": statistics.median(times[5:])}, open(out, "w"))


def machine(graph: str, Ps, trials: int) -> dict:
    """kernels_worker's time per iteration for each P, jobs alternating; medians over trials."""
    got: dict = {P: [] for P in Ps}
    for _ in range(trials):
        for P in Ps:
            got[P].append(mpi_worker("bench.algorithms", P, lambda out: ["--worker", graph, out, "--kernels"])
                          ["s_per_iteration"])
    return {P: statistics.median(v) for P, v in got.items()}


def processes(graph: str, Ps, rounds: int, trials: int = 3, floor: bool = False) -> dict:
    """One mpiexec job per (trial, P), the process counts alternating within each trial so that
    every P sees the same machine; PageRank's time per iteration is the median over all runs."""
    got: dict = {}
    for _ in range(trials):
        for P in Ps:
            res = mpi_worker("bench.algorithms", P, lambda out: ["--worker", graph, out, "--rounds", rounds]
                             + (["--floor"] if floor else []))
            if P in got:
                got[P]["pagerank"]["runs_s_per_iteration"] += res["pagerank"]["s_per_iteration"]
            else:
                got[P] = res
                got[P]["pagerank"]["runs_s_per_iteration"] = list(res["pagerank"]["s_per_iteration"])
    for P in got:
        pr = got[P]["pagerank"]
        pr["s_per_iteration"] = statistics.median(pr["runs_s_per_iteration"])
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench algorithms")
    ap.add_argument("--graph", default=GRAPH)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--P", default="2", help="process counts for the PageRank/BFS comparison with P = 1 ('' skips)")
    ap.add_argument("--skip-one", action="store_true", help="only the P-process part")
    ap.add_argument("--no-floor", action="store_true", help="skip PageRank on the graph's two halves (item 3)")
    ap.add_argument("--only", help="comma-separated algorithms of the one-process part (default: all)")
    ap.add_argument("--json")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--kernels", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker and args.kernels:
        kernels_worker(args.worker[0], args.worker[1])
        return 0
    if args.worker:
        worker(args.worker[0], args.worker[1], args.rounds, args.floor)
        return 0
    from dspla.formats.graph import load_graph
    A = sp.csr_array(load_graph(args.graph, quiet=True).matrix, dtype=np.float64)
    print(f"commit {git_commit()}; {os.path.basename(args.graph)}: {A.shape[0]} nodes, {A.nnz} edges; "
          f"medians of {args.rounds} interleaved rounds; load average {os.getloadavg()[0]:.1f}")
    report = {"commit": git_commit(), "graph": os.path.basename(args.graph)}
    if not args.skip_one:
        print("one process, time to solution after loading (dspla: compile + plan + run of a fresh function):")
        report["one_process"] = one_process(A, args.rounds, args.only.split(",") if args.only else None)
    if args.P:
        Ps = [1] + [int(p) for p in args.P.split(",")]
        got = processes(args.graph, Ps, 3, trials=max(2, args.rounds))
        report["processes"] = got
        base = got[1]["pagerank"]["s_per_iteration"]
        for P in Ps:
            pr, bfs = got[P]["pagerank"], got[P]["bfs"]
            print(f"P={P}: PageRank {pr['iterations']} iterations, {pr['s_per_iteration'] * 1e3:.2f} ms/iteration "
                  f"(median of {len(pr['runs_s_per_iteration'])} runs in {args.rounds} alternating jobs) "
                  f"(x{pr['s_per_iteration'] / base:.2f} of P=1; bar for P=2: <= 0.65), product words/iteration "
                  f"{pr['product_words_per_iteration']:.0f} vs analysis {pr['analysis_words_per_iteration']}")
            print(f"      BFS {bfs['levels']} levels in {bfs['seconds'] * 1e3:.1f} ms; per level "
                  + ", ".join(f"{f} nodes/{w} words" for f, w in zip(bfs['frontier'][1:], bfs['words_per_level'])))
        if not args.no_floor:
            low = processes(args.graph, Ps, 3, trials=max(2, args.rounds), floor=True)
            report["floor"] = low
            base = low[1]["pagerank"]["s_per_iteration"]
            for P in Ps[1:]:
                pr = low[P]["pagerank"]
                print(f"floor (the graph's two halves, nothing to exchange): P={P} PageRank {pr['iterations']} "
                      f"iterations, {pr['s_per_iteration'] * 1e3:.2f} ms/iteration against "
                      f"{base * 1e3:.2f} at P=1 (x{pr['s_per_iteration'] / base:.2f}); all words/iteration "
                      f"{pr['all_words_per_iteration']}")
            hw = machine(args.graph, Ps, max(2, args.rounds))
            report["machine"] = hw
            for P in Ps[1:]:
                print(f"machine (python-graphblas's PageRank step, no dspla, each process on its 1/{P} of the rows at "
                      f"once): P={P} {hw[P] * 1e3:.2f} ms/iteration (slowest rank) against {hw[1] * 1e3:.2f} at P=1 "
                      f"(x{hw[P] / hw[1]:.2f})")
    if args.json:
        json.dump(report, open(args.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
