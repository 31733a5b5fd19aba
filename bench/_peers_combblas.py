"""dspla against CombBLAS's own programs under the venv's mpiexec at P processes, one thread
each, on the same graphs and source: BFS, connected components and SpGEMM. CombBLAS lays a
matrix on a √P x √P grid, so it runs at square P only (1, 4, ...); dspla runs at every P asked.

- BFS: ``Applications/SpMSpV-IPDPS2017/SpMSpVBench -input MATRIX -source S -iter RUNS`` runs the
  top-down BFS (parents, SpMSpV with a select-min semiring) RUNS times with each of its three
  local kernels (CSC with SpMSpV-bucket, split CSC with heap-sort, DCSC with SPA) and prints
  each kernel's average time and reached count (it reads, symmetrises and drops isolated nodes
  first, outside the timing). The fastest kernel is CombBLAS's figure.
- Connected components: ``Applications/FastSV.cpp`` (``fastsv -M MATRIX``), which CombBLAS's CMake
  does not build (docs/benchmarks.md: one mpicxx command), prints the components and the time
  of ``SV`` alone (reading and symmetrising apart). One run per job.
- SpGEMM: ``ReleaseTests/MultTiming A A`` (2D Sparse SUMMA, double-buffered and synchronous, each
  after a warm-up product) prints C's entries and each product's time.

dspla's side runs in its own job under the same mpiexec and MPICH settings (dspla's launcher
defaults) with DSPLA_THREADS=1: BFS as warm calls, the slowest rank's time (bench/_peers_common.py);
connected components (a graph found symmetric read as undirected: CombBLAS's FastSV symmetrises
at reading) and A @ A as calls on a graph new to the function, at P = 1 the whole call
on a GraphBLAS matrix made untimed (planning included; the conversion from scipy apart, as
CombBLAS's reading is), at P > 1 the run that follows planning (rank 0's; planning, partitioning
and distributing the graph apart, as CombBLAS's reading and distribution are). Each job's runs are averaged (CombBLAS
prints averages), and the medians are over the interleaved jobs."""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time

import numpy as np
import scipy.sparse as sp

from . import _peers_common as pc

APPS = {"bfs": "SpMSpVBench", "cc": "fastsv", "spgemm": "MultTiming"}
BUILD_HINT = "build CombBLAS with CMake against the venv's mpicxx as docs/benchmarks.md says"
FLOAT = r"([0-9.eE+-]+)"


def find(top: str | None) -> tuple:
    """(the programs found under ``top``, why some or all are missing: '' when none are)."""
    progs, why_not = pc.locate(top, "--combblas", APPS, "CombBLAS programs", BUILD_HINT)
    if progs is None:
        return None, why_not
    why = []
    if "cc" not in progs:
        why.append("fastsv not found (Applications/FastSV.cpp is not one of CombBLAS's CMake targets: "
                   "docs/benchmarks.md builds it)")
    why += [f"{APPS[a]} not found under {top}" for a in ("bfs", "spgemm") if a not in progs]
    return progs, "; ".join(why)


def square(P: int) -> bool:
    return math.isqrt(P) ** 2 == P


NOT_SQUARE = "CombBLAS lays its matrices on a square process grid (CommGrid: P must be a square)"


# ---------------------------------------------------------------------------- parsing
def parse_spmspv(text: str) -> dict:
    """Per local kernel ('CSC matrix and SpMSpV-bucket', ...): average seconds, reached nodes,
    levels."""
    out = {}
    parts = re.split(r"^BFS With (.*?) algorithm\s*$", text, flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2]):
        t = re.search(rf"Avg Total time: {FLOAT}", body)
        found = re.search(r"Avg number of vertices found: (\d+)", body)
        its = re.search(r"Avg number iterations: (\d+)", body)
        if t and found:
            out[" ".join(name.replace("matric ", "matrix ").split())] = {
                "seconds": float(t.group(1)), "reached": int(found.group(1)),
                "levels": int(its.group(1)) if its else None}
    if not out:
        raise ValueError(f"no 'BFS With ... algorithm' block with an 'Avg Total time' in:\n{text[-1500:]}")
    src = re.search(r"starting vertex: (\d+)", text)
    return {"kernels": out, "source": int(src.group(1)) if src else None}


def parse_fastsv(text: str) -> dict:
    c = re.search(r"^Number of components: (\d+)", text, re.M)
    t = re.search(rf"^Total time: {FLOAT}", text, re.M)
    if not (c and t):
        raise ValueError(f"no 'Number of components' and 'Total time' in:\n{text[-1500:]}")
    r = re.search(rf"File Read time: {FLOAT}", text)
    return {"components": int(c.group(1)), "seconds": float(t.group(1)), "read_s": float(r.group(1)) if r else None}


def parse_multtiming(text: str) -> dict:
    nnz = re.search(r"C has a total of (\d+) nonzeros", text)
    got = dict(re.findall(rf"^(Double buffered|Synchronous) multiplications finished\s*\n\s*{FLOAT} seconds",
                          text, re.M))
    if not (nnz and got):
        raise ValueError(f"no 'C has a total of ... nonzeros' and product times in:\n{text[-1500:]}")
    return {"nnz": int(nnz.group(1)), "kernels": {k: float(v) for k, v in got.items()}}


# ---------------------------------------------------------------------------- dspla's jobs
def _spgemm_function():
    import dspla as dp
    a = dp.sparse("A", ("n", "n"))
    return dp.function({"C": a @ a}, inputs=[a])


def worker(npz: str, out: str, algs: list, src: int, runs: int, undirected: bool = False) -> None:
    """Under mpiexec (or alone): dspla's side of each algorithm; rank 0 writes seconds per run
    (the slowest rank's) and the results. ``undirected``: cc reads the graph as it is (each edge
    both ways), as CombBLAS's FastSV symmetrises at reading, untimed."""
    import dspla as dp
    from dspla.runtime.launch import one_process
    comm = dp.world() or one_process()
    rank, P = comm.rank, comm.size
    A = sp.csr_array(sp.load_npz(npz)) if rank == 0 else None
    fns = {**pc.functions(undirected), "spgemm": _spgemm_function}
    res: dict = {"P": P}
    for alg in algs:
        f = fns[alg]()
        ins = pc.inputs(alg, A, src) if rank == 0 else {}
        f(**ins)   # planned; the second call is the first of a planned function (runtime/session.py)
        got = f(**ins)
        summary = {"nnz": int(got["C"].nvals)} if alg == "spgemm" else pc.summary(alg, got)
        del got
        if P == 1:   # (a graph-only call: on a GraphBLAS graph new to f, as in the LAGraph comparison)
            seconds = pc.timed_calls(alg, f, {"A": pc.structural(A)} if alg in pc.FRESH else ins, runs)
        else:
            seconds, planning = [], []
            for _ in range(runs):
                if alg in pc.FRESH:
                    f.invalidate()
                comm.barrier()
                t0 = time.perf_counter()
                f(**ins)
                t = comm.gather(time.perf_counter() - t0, 0)
                if rank == 0 and alg in pc.FRESH:   # the run, after planning and distributing
                    seconds.append(f.last_stats["iteration_s"][0])
                    planning.append(f.last_stats["planning_s"])
                elif rank == 0:
                    seconds.append(max(t))
        res[alg] = {"seconds": seconds, "result": summary}
        if P > 1 and alg in pc.FRESH and rank == 0:
            res[alg]["planning_s"] = planning
    if rank == 0:
        with open(out, "w") as fh:
            json.dump(res, fh)


def dspla_job(P: int, g: pc.Graph, algs: list, runs: int) -> dict:
    from .common import mpi_worker
    return mpi_worker("bench._peers_combblas", P, lambda out: [g.npz, out, ",".join(algs), g.source, runs]
                      + (["--undirected"] if g.undirected else []),
                      env=pc.child_env({"OMP_NUM_THREADS": "1"}))


# ---------------------------------------------------------------------------- the comparison
def _peer_env() -> dict:
    from dspla.runtime.launch import YIELD_ENV
    return pc.child_env({"OMP_NUM_THREADS": "1", **YIELD_ENV})


def _peer_job(progs: dict, alg: str, P: int, g: pc.Graph, runs: int) -> dict:
    from dspla.runtime.launch import find_mpiexec
    args = {"bfs": ["-input", g.mtx, "-source", g.source, "-iter", runs], "cc": ["-M", g.mtx],
            "spgemm": [g.mtx, g.mtx]}[alg]
    text = pc.run([find_mpiexec(), "-n", P, progs[alg], *args], _peer_env())
    return {"bfs": parse_spmspv, "cc": parse_fastsv, "spgemm": parse_multtiming}[alg](text)


def compare(progs: dict, graphs: dict, Ps: list, spgemm: list, repeats: int, runs: int, say) -> dict:
    """Per repeat, graph and P: CombBLAS's BFS and FastSV jobs, then dspla's job (BFS and cc);
    then SpGEMM on the graphs in ``spgemm`` likewise. Returns the rows."""
    algs = [a for a in ("bfs", "cc") if a in progs]
    runs_of = {"bfs": runs, "cc": runs, "spgemm": min(runs, 2)}
    todo = [(g, algs) for g in graphs.values()] + \
        ([(graphs[n], ["spgemm"]) for n in spgemm] if "spgemm" in progs else [])
    theirs: dict = {}
    ours: dict = {}

    def step(item: tuple) -> None:
        g, which, P = item
        for alg in which:
            if square(P):
                theirs.setdefault((g.name, alg, P), []).append(_peer_job(progs, alg, P, g, runs_of[alg]))
        got = dspla_job(P, g, which, max(runs_of[a] for a in which))
        for alg in which:
            ours.setdefault((g.name, alg, P), []).append(got[alg])
    pc.rounds(repeats, [(f"{g.name} {'/'.join(which)}", [(g, which, P) for P in Ps]) for g, which in todo], step, say)
    return {"rows": [_row(key, ours[key], theirs.get(key), graphs[key[0]]) for key in ours]}


def _peer_kernels(alg: str, runs: list) -> dict:
    """Per CombBLAS kernel, its seconds per job."""
    if alg == "cc":
        return {"FastSV": [r["seconds"] for r in runs]}
    return {k: [r["kernels"][k]["seconds"] if alg == "bfs" else r["kernels"][k] for r in runs]
            for k in runs[0]["kernels"]}


def _row(key: tuple, ours: list, theirs: list | None, g: pc.Graph) -> dict:
    name, alg, P = key
    mine = [[float(np.mean(r["seconds"]))] for r in ours]   # one figure per job: its runs' mean
    row: dict = {"graph": name, "algorithm": alg, "P": P, "dspla_ms": pc.median(sum(mine, [])) * 1e3,
                 "dspla_jobs": len(mine), "dspla_runs_per_job": len(ours[0]["seconds"])}
    if not theirs:
        row.update(skipped=NOT_SQUARE if not square(P) else "not run")
        return row
    kernels = _peer_kernels(alg, theirs)
    best = min(kernels, key=lambda k: pc.median(kernels[k]))
    row.update(pc.ratio_row(sum(mine, []), kernels[best], mine, [[t] for t in kernels[best]]),
               peer_kernel=best, peer_kernels_ms={k: pc.median(v) * 1e3 for k, v in kernels.items()})
    res = ours[0]["result"]
    if alg == "bfs":
        peer = {"reached": theirs[0]["kernels"][best]["reached"]}
        if theirs[0]["source"] != g.source:
            row["check"] = {"ok": False, "text": f"CombBLAS ran from {theirs[0]['source']}, not {g.source}"}
            return row
    else:
        peer = {"components": theirs[0]["components"]} if alg == "cc" else {"nnz": theirs[0]["nnz"]}
    ok, text = pc.check(alg, {k: res[k] for k in peer}, peer)
    row["check"] = {"ok": ok, "text": text}
    return row


def table(section: dict) -> list:
    lines = ["medians over the jobs of each job's mean, in ms; dspla/CombBLAS: of the medians, its range over the "
             "repeats, and of the minima",
             f"{'graph':<9} {'algorithm':<9} {'P':>2} {'CombBLAS':>10} {'dspla':>10} {'dspla/CombBLAS':>14} "
             f"{'per repeat':>12} {'of minima':>9}  check"]
    for r in section["rows"]:
        if "skipped" in r:
            lines.append(f"{r['graph']:<9} {r['algorithm']:<9} {r['P']:>2} {'-':>10} {r['dspla_ms']:>10.3f} "
                         f"{'-':>14}  CombBLAS not run: {r['skipped']}")
            continue
        per = r["ratio_by_repeat"]
        ok = {True: "same", False: "DIFFERENT", None: "-"}[r["check"]["ok"]]
        lines.append(f"{r['graph']:<9} {r['algorithm']:<9} {r['P']:>2} {r['peer_ms']:>10.3f} {r['dspla_ms']:>10.3f} "
                     f"{r['ratio']:>14.2f} {min(per):>5.2f}-{max(per):<6.2f} {r['ratio_min']:>9.2f}  {ok}: "
                     f"{r['check']['text']} (CombBLAS: {r['peer_kernel']})")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="dspla's side of the CombBLAS comparison (a job of dspla bench peers)")
    ap.add_argument("npz")
    ap.add_argument("out")
    ap.add_argument("algs")
    ap.add_argument("source", type=int)
    ap.add_argument("runs", type=int)
    ap.add_argument("--undirected", action="store_true")
    a = ap.parse_args(argv)
    worker(a.npz, a.out, a.algs.split(","), a.source, a.runs, a.undirected)
    return 0


if __name__ == "__main__":
    sys.exit(main())
