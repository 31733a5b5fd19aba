"""The PETSc part of ``dspla bench peers`` (bench/peers.py describes it): ``C = A @ X``, A
sparse, X dense with K columns, at P = 1 and P = 2 processes, each rank owning the same
contiguous block of rows on both sides; PETSc in its own jobs under the system Python and
mpiexec (bench/_petsc_worker.py), dspla in this process (P = 1) or under the venv's mpiexec."""
from __future__ import annotations

import glob
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from ._peers_common import child_env as _child_env
from ._peers_common import load_avg as _load_avg
from .common import mpi_worker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLASHDOT = os.path.join(ROOT, "..", "shared", "datasets", "snap", "soc-Slashdot0902.txt.gz")
WORKER = os.path.join(ROOT, "bench", "_petsc_worker.py")
PETSC_PYTHON, PETSC_MPIEXEC = "/usr/bin/python3", "/usr/bin/mpiexec"
# Open MPI as root, more ranks than cores, no binding (MPICH's hydra binds nothing either); only
# Open MPI reads these
OPENMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
               "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_hwloc_base_binding_policy": "none"}
PROBE = "from petsc4py import PETSc; print('.'.join(map(str, PETSc.Sys.getVersion())))"
INSTALL = "apt install python3-petsc4py (Debian/Ubuntu)"


def find_petsc(python: str, mpiexec: str) -> tuple[dict | None, str]:
    """(the environment PETSc's jobs run in, PETSc's version), or (None, why not)."""
    for exe, what in ((mpiexec, "mpiexec"), (python, "Python")):
        if not (shutil.which(exe) or os.path.exists(exe)):
            return None, f"{what} {exe} not found"
    env = _child_env({**OPENMPI_ENV, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    # Debian's petsc4py finds PETSc through the /usr/lib/petsc alternative, which only the -dev
    # package sets up; PETSC_DIR names a build directly
    dirs = [None] + sorted(glob.glob("/usr/lib/petscdir/petsc*-real")) + \
        sorted(glob.glob("/usr/lib/petscdir/petsc*/*-real"), reverse=True)
    why = "petsc4py not importable"
    for d in dirs:
        e = env if d is None or "PETSC_DIR" in env else {**env, "PETSC_DIR": d}
        try:
            r = subprocess.run([python, "-I", "-c", PROBE], capture_output=True, text=True, env=e, timeout=120,
                               cwd=ROOT)
        except (OSError, subprocess.TimeoutExpired) as err:
            return None, f"{python} failed to start: {err}"
        if r.returncode == 0:
            return e, r.stdout.strip()
        why = f"{python} cannot import petsc4py ({(r.stderr.strip().splitlines() or ['?'])[-1]})"
    return None, why


# ----------------------------------------------------------------------------- the data
def write_data(path: str, A: sp.csr_array, Ks: list, Ps: list) -> dict:
    """The .npz both sides read: A as CSR, X per K, every P's block row ranges (dspla's own
    ``block`` partition), the sample rows of the agreement check. Returns the samples and the
    reference results (scipy)."""
    from dspla.partition.simple import block_parts
    n = A.shape[0]
    d = {"n": n, "indptr": A.indptr.astype(np.int64), "indices": A.indices.astype(np.int64), "data": A.data,
         "Ks": np.array(Ks, dtype=np.int64)}
    edges = set()
    for P in Ps:
        starts = np.searchsorted(block_parts(n, P), np.arange(P + 1))
        d[f"starts_P{P}"] = starts
        edges |= {int(s) for s in starts[1:-1]} | {int(s) - 1 for s in starts[1:-1]}
    rng = np.random.default_rng(1)
    samples = sorted({0, n - 1, *edges, *map(int, rng.integers(0, n, 8))})
    d["samples"] = np.array(samples, dtype=np.int64)
    ref = {}
    for K in Ks:
        X = np.random.default_rng(K).random((n, K))
        d[f"X_{K}"] = X
        C = A @ X
        ref[K] = {"fro": float(np.linalg.norm(C)), "samples": C[samples]}
    np.savez(path, **d)
    return {"samples": samples, "ref": ref}


def _load(path: str):
    d = np.load(path)
    n = int(d["n"])
    A = sp.csr_array((d["data"], d["indices"], d["indptr"]), shape=(n, n))
    return d, A


# ------------------------------------------------------------------------------ PETSc
def petsc_job(env: dict, python: str, mpiexec: str, P: int, data: str, rounds: int, tmp: str) -> dict:
    out = os.path.join(tmp, f"petsc{P}")
    cmd = [mpiexec, "-n", str(P), python, "-I", WORKER, data, out, str(rounds)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=3600)
    if r.returncode != 0:
        raise SystemExit(f"PETSc P={P} failed: {' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    ranks = [json.load(open(f"{out}.{q}.json")) for q in range(P)]
    res = {"seconds": {}, "sumsq": {}, "samples": {}, "rows": [rk["rows"] for rk in ranks]}
    for K in ranks[0]["seconds"]:
        res["seconds"][K] = [max(rk["seconds"][K][i] for rk in ranks) for i in range(rounds)]
        res["sumsq"][K] = sum(rk["sumsq"][K] for rk in ranks)
        res["samples"][K] = {int(i): v for rk in ranks for i, v in rk["samples"][K].items()}
    return res


# ------------------------------------------------------------------------------ dspla
def dspla_rounds(data: str, rounds: int, threads: list | None = None) -> dict | None:
    """The dspla side, on every rank of the world (or in this process): one function per K
    (a function's plan is for one K), plan p2p1d, partition block; a warm-up round (plans), then
    ``rounds`` rounds with the Ks alternating and a barrier before each call. ``threads`` (one
    process only): the GraphBLAS thread counts to alternate, each a configuration of its own.
    Returns (rank 0) per configuration and K the slowest rank's seconds per round, C's sum of
    squares and its sample rows, and each rank's rows."""
    import graphblas as gb

    import dspla as dp
    from dspla.runtime.launch import one_process

    comm = dp.world() or one_process()
    rank, P = comm.rank, comm.size
    d = A = None
    Ks = samples = None
    if rank == 0:
        d, A = _load(data)
        Ks, samples = [int(k) for k in d["Ks"]], [int(i) for i in d["samples"]]
    Ks = comm.bcast(Ks, 0) if P > 1 else Ks
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    fs = {K: dp.function(outputs={"C": a @ x}).configure(plan="p2p1d", partition="block") for K in Ks}
    inputs = {K: {"A": A, "X": np.ascontiguousarray(d[f"X_{K}"])} if rank == 0 else {} for K in Ks}
    confs = threads or [gb.ss.config["nthreads"]]
    default = gb.ss.config["nthreads"]
    times = {(t, K): [] for t in confs for K in Ks}
    res: dict = {"threads": confs, "results": {}}
    for K in Ks:   # plan, and the answer
        gb.ss.config["nthreads"] = confs[0]
        C = fs[K](**inputs[K])["C"].to_numpy(fill=0.0, root=0)
        parts = fs[K].session().plan.dims["n"].parts if P > 1 else np.zeros(1, dtype=np.int64)
        if rank == 0:
            res["results"][str(K)] = {"sumsq": float(np.sum(C * C)), "samples": {i: C[i].tolist() for i in samples}}
            res["rows"] = [[int(np.searchsorted(parts, q)), int(np.searchsorted(parts, q + 1))] for q in range(P)] \
                if P > 1 else [[0, A.shape[0]]]
        del C
    for r in range(rounds + 1):   # round 0: warm-up
        for t in confs:
            gb.ss.config["nthreads"] = t
            for K in Ks:
                if P > 1:
                    comm.barrier()
                t0 = time.perf_counter()
                fs[K](**inputs[K])
                if r:
                    times[(t, K)].append(time.perf_counter() - t0)
    gb.ss.config["nthreads"] = default
    everyone = comm.gather(times, 0) if P > 1 else [times]
    if rank != 0:
        return None
    res["seconds"] = {f"{t}:{K}": [max(tt[(t, K)][i] for tt in everyone) for i in range(rounds)]
                      for t in confs for K in Ks}
    res["P"] = P
    return res


def dspla_job(P: int, data: str, rounds: int) -> dict:
    return mpi_worker("bench.peers", P, lambda out: ["--worker", data, out, "--rounds", rounds], env=_child_env({}))


# ------------------------------------------------------------------------------ report
def _agreement(run: dict, ref: dict, samples: list) -> dict:
    """Per K: |fro - fro_ref| / fro_ref and the largest absolute difference on the sample rows."""
    out = {}
    for K, want in ref.items():
        k = str(K)
        got = np.array([run["samples"][k][i] for i in samples]) if run["samples"][k] else np.zeros((0, K))
        out[K] = {"fro_rel": abs(np.sqrt(run["sumsq"][k]) - want["fro"]) / max(want["fro"], 1e-300),
                  "max_abs": float(np.max(np.abs(got - want["samples"]))) if got.size else 0.0}
    return out


def _ms(v: list) -> str:
    return f"{min(v) * 1e3:.2f} / {statistics.median(v) * 1e3:.2f}"



def run(args) -> tuple[dict, bool]:
    """The comparison: (its figures for the JSON, whether the results agree)."""
    env, version = find_petsc(args.petsc_python, args.petsc_mpiexec)
    if env is None:
        print(f"PETSc skipped: {version}. The PETSc comparison is optional; it runs when "
              f"{args.petsc_python} can import petsc4py and {args.petsc_mpiexec} exists ({INSTALL}).")
        return {"skipped": version}, True
    import graphblas as gb

    from dspla.formats.graph import load_graph
    if not os.path.exists(args.graph):
        raise SystemExit(f"{args.graph} not found (soc-Slashdot0902 lives in ../shared/datasets beside the clone)")
    A = sp.csr_array(load_graph(args.graph, quiet=True).matrix, dtype=np.float64)
    A.sum_duplicates()
    A.sort_indices()
    nthreads = gb.ss.config["nthreads"]
    per = [args.rounds // args.trials + (t < args.rounds % args.trials) for t in range(args.trials)]
    print(f"PETSc: {os.path.basename(args.graph)}: {A.shape[0]} rows, {A.nnz} entries, float64; "
          f"PETSc {version}; {args.rounds} rounds in {args.trials} alternating sets of jobs; load {_load_avg()}")
    print("min / median ms per product, each round the slowest rank; dspla P=1 and PETSc: one thread per rank; "
          f"dspla P=1*: {nthreads} GraphBLAS threads")
    runs: dict = {}

    def add(name, res):
        if name not in runs:
            runs[name] = res
        else:
            for k, v in res["seconds"].items():
                runs[name]["seconds"][k] += v

    with tempfile.TemporaryDirectory(prefix="dspla-peers-") as tmp:
        data = os.path.join(tmp, "data.npz")
        info = write_data(data, A, args.Ks, args.Ps)
        for n_rounds in per:
            for P in args.Ps:
                add(f"petsc{P}", petsc_job(env, args.petsc_python, args.petsc_mpiexec, P, data, n_rounds, tmp))
            for P in args.Ps:
                if P == 1:
                    res = dspla_rounds(data, n_rounds, threads=[1, nthreads] if nthreads != 1 else [1])
                    for t in res["threads"]:
                        add("dspla1" if t == 1 else "dspla1*",
                            {**res, "seconds": {K: res["seconds"][f"{t}:{K}"] for K in map(str, args.Ks)}})
                else:
                    res = dspla_job(P, data, n_rounds)
                    add(f"dspla{P}", {**res, "seconds": {K: res["seconds"][f"1:{K}"] for K in map(str, args.Ks)}})
    for res in runs.values():   # dspla's results sit under "results"; PETSc's at the top
        if "results" in res:
            res["sumsq"] = {k: v["sumsq"] for k, v in res["results"].items()}
            res["samples"] = {k: {int(i): row for i, row in v["samples"].items()} for k, v in res["results"].items()}
    # the same rows per rank on both sides
    for P in args.Ps:
        if P > 1 and runs[f"petsc{P}"]["rows"] != runs[f"dspla{P}"]["rows"]:
            raise SystemExit(f"P={P}: PETSc's rows {runs[f'petsc{P}']['rows']} differ from dspla's "
                             f"{runs[f'dspla{P}']['rows']}")
    section = {"graph": os.path.basename(args.graph), "rows_n": A.shape[0], "nnz": int(A.nnz), "petsc": version,
               "rounds": args.rounds, "trials": args.trials, "threads_default": nthreads}
    return _report(args, runs, info, section)


def _report(args, runs: dict, info: dict, section: dict) -> tuple[dict, bool]:
    """Print the table and the agreement; (the section, whether the results agree)."""
    names = [f"petsc{P}" for P in args.Ps] + [f"dspla{P}" for P in args.Ps] + \
        (["dspla1*"] if "dspla1*" in runs else [])
    heads = {n: ("PETSc" if n.startswith("petsc") else "dspla") + " P=" + n[5:] for n in names}
    print(f"{'K':>5} " + " ".join(f"{heads[n]:>16}" for n in names) + " " +
          " ".join(f"{'dspla/PETSc P=' + str(P):>18}" for P in args.Ps))
    rows = []
    for K in args.Ks:
        k = str(K)
        t = {n: runs[n]["seconds"][k] for n in names}
        row = {"K": K, **{n: {"min_ms": min(v) * 1e3, "median_ms": statistics.median(v) * 1e3} for n, v in t.items()}}
        ratios = []
        for P in args.Ps:
            d_, p_ = row[f"dspla{P}"], row[f"petsc{P}"]
            row[f"ratio_P{P}"] = {"min": d_["min_ms"] / p_["min_ms"], "median": d_["median_ms"] / p_["median_ms"]}
            ratios.append(f"{row[f'ratio_P{P}']['min']:.2f} / {row[f'ratio_P{P}']['median']:.2f}")
        rows.append(row)
        print(f"{K:>5} " + " ".join(f"{_ms(t[n]):>16}" for n in names) + " " + " ".join(f"{r:>18}" for r in ratios))
    # agreement: every run against scipy, and dspla's sample rows against PETSc's
    agree = {n: _agreement(runs[n], info["ref"], info["samples"]) for n in names}
    worst_fro = max(a[K]["fro_rel"] for a in agree.values() for K in args.Ks)
    worst_abs = max(a[K]["max_abs"] for a in agree.values() for K in args.Ks)
    vs_petsc = max(float(np.max(np.abs(np.array(runs[f"dspla{P}"]["samples"][str(K)][i]) -
                                       np.array(runs[f"petsc{P}"]["samples"][str(K)][i]))))
                   for P in args.Ps for K in args.Ks for i in info["samples"])
    ok = worst_fro < 1e-12 and worst_abs < 1e-9 * max(1.0, max(float(np.max(np.abs(r["samples"])))
                                                              for r in info["ref"].values()))
    print(f"agreement ({len(info['samples'])} sample rows, block boundaries included): against scipy, largest "
          f"relative difference of ||C||_F {worst_fro:.1e}, largest |difference| on the sample rows {worst_abs:.1e}; "
          f"dspla against PETSc on the sample rows {vs_petsc:.1e} -> {'same results' if ok else 'RESULTS DIFFER'}")
    section.update(load=_load_avg(), table=rows, dspla_vs_petsc_max_abs=vs_petsc, same_results=bool(ok),
                   agreement={n: {str(K): v for K, v in a.items()} for n, a in agree.items()})
    return section, bool(ok)
