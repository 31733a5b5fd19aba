"""What the LAGraph and CombBLAS comparisons of ``dspla bench peers`` share: the graphs (read,
symmetrised, written once as Matrix Market for the peers' programs and as .npz for dspla's
workers), the BFS / SSSP source, dspla's side of each algorithm (the examples/ functions), the
results each side is checked on, medians and ratios.

The graphs: soc-Slashdot0902 symmetrised (the pattern of A + Aᵀ, its 78,303 self-loops as
stored) and email-Enron (symmetric as stored), every entry 1 except for SSSP, whose lengths are
``1 + (column % 7)`` (integers, as LAGraph's SSSP demo reads them). The source: the node of
highest degree (the lowest such id)."""
from __future__ import annotations

import functools
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASETS = os.path.join(ROOT, "..", "shared", "datasets", "snap")
# name -> (file beside the clone, symmetrise)
GRAPHS = {"slashdot": (os.path.join(DATASETS, "soc-Slashdot0902.txt.gz"), True),
          "enron": (os.path.join(DATASETS, "email-Enron.txt"), False)}
ALGORITHMS = ("bfs", "bfs-level", "bfs-parent", "pagerank", "pagerank64", "cc", "tc", "sssp")
# (the BFS rows timed through LAGraph's results program: its call for levels, as dspla's computes,
# and for parents, the demo's call, both to the microsecond: bench/_peers_lagraph.py)
BFS = ("bfs", "bfs-level", "bfs-parent")
# dspla's PageRank as LAGr_PageRank computes it (float32, an L1 change below 1e-4, at most 100
# iterations: the same iterations on both sides), and as examples/pagerank.py does by default
# (float64, 1e-10): both against the same LAGraph calls.
PAGERANK = {"pagerank": {"tol": 1e-4, "max_iter": 100, "dtype": "float32"}, "pagerank64": {}}
TOP = 10   # PageRank: the largest ranks compared


@dataclass
class Graph:
    name: str
    mtx: str        # Matrix Market, integer general, 1-based: the peers' input
    npz: str        # A (ones), as dspla's workers read it
    n: int
    nnz: int
    source: int     # 0-based
    undirected: bool = False   # each edge both ways: the peers' undirected graph kind


def lengths(A: sp.csr_array) -> sp.csr_array:
    """SSSP's edge lengths: 1 + (column % 7) on A's pattern."""
    W = A.copy()
    W.data = 1.0 + (W.indices % 7)
    return W


def load(name: str) -> sp.csr_array:
    from dspla.formats.graph import load_graph
    path, sym = GRAPHS[name]
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} not found ({name} lives in ../shared/datasets beside the clone)")
    A = sp.csr_array(load_graph(path, directed=False if sym else None, quiet=True).matrix, dtype=np.float64)
    A.sum_duplicates()
    A.sort_indices()
    A.data[:] = 1.0
    return A


def source(A: sp.csr_array) -> int:
    return int(np.argmax(np.diff(A.indptr)))


def write_mtx(path: str, A: sp.csr_array) -> None:
    """A's pattern with SSSP's lengths as values, every entry listed (general, 1-based)."""
    C = sp.coo_array(A)
    with open(path, "w") as fh:
        fh.write("%%MatrixMarket matrix coordinate integer general\n")
        fh.write(f"{A.shape[0]} {A.shape[1]} {A.nnz}\n")
        np.savetxt(fh, np.column_stack([C.row + 1, C.col + 1, 1 + C.col % 7]), fmt="%d")


def write_sources(path: str, src: int, count: int) -> None:
    """A LAGraph sources file: ``src`` (written 1-based) ``count`` times, one trial each."""
    with open(path, "w") as fh:
        fh.write(f"%%MatrixMarket matrix coordinate integer general\n{count} 1 {count}\n")
        fh.writelines(f"{k + 1} 1 {src + 1}\n" for k in range(count))


def prepare(names: list, tmp: str) -> dict:
    """Each graph read once and written for both sides into ``tmp``."""
    out = {}
    for name in names:
        A = load(name)
        g = Graph(name, os.path.join(tmp, f"{name}.mtx"), os.path.join(tmp, f"{name}.npz"), A.shape[0], A.nnz,
                  source(A), bool((A != A.T).nnz == 0))
        write_mtx(g.mtx, A)
        sp.save_npz(g.npz, A)
        out[name] = g
    return out


# ------------------------------------------------------------------------ dspla's side
def functions(undirected: bool = False) -> dict:
    """dspla's version of each algorithm: the functions of examples/. ``undirected``: the graph
    holds each edge both ways, so cc and triangles read it as it is, as LAGraph's undirected
    graph kind does (its demos symmetrise at reading, untimed)."""
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from bfs import bfs_function
    from cc import cc_function
    from pagerank import pagerank_function
    from sssp import sssp_function
    from triangles import triangles_function
    fns = {alg: functools.partial(pagerank_function, **kw) for alg, kw in PAGERANK.items()}
    return {**{alg: bfs_function for alg in BFS}, **fns, "cc": functools.partial(cc_function, undirected),
            "tc": functools.partial(triangles_function, undirected), "sssp": sssp_function}


def inputs(alg: str, A: sp.csr_array, src: int, W: sp.csr_array | None = None) -> dict:
    n = A.shape[0]
    if alg in BFS:
        return {"A": A, "s": sp.csr_array(([True], ([src], [0])), shape=(n, 1))}
    if alg == "sssp":
        return {"A": lengths(A) if W is None else W, "s": sp.csr_array(([1.0], ([src], [0])), shape=(n, 1))}
    if alg in PAGERANK:
        return {"A": A, "r0": np.ones((n, 1), PAGERANK[alg].get("dtype", "float64"))}
    return {"A": A}


def summary(alg: str, out: dict) -> dict:
    """What a result is checked on (from dspla's whole outputs)."""
    if alg in BFS:
        lv = out["levels"].to_numpy(fill=-1)[:, 0]
        got = lv[lv >= 0]
        return {"reached": int(got.size), "maxlevel": int(got.max()), "levelsum": int(got.sum())}
    if alg == "sssp":
        d = out["d"].to_numpy(fill=np.inf)[:, 0]
        d = d[np.isfinite(d)]
        return {"reached": int(d.size), "sum": int(round(d.sum())), "max": int(round(d.max()))}
    if alg == "cc":
        return {"components": int(np.unique(out["labels"].to_numpy()[:, 0]).size)}
    if alg == "tc":
        return {"triangles": int(out["triangles"].to_numpy()[0, 0])}
    r = out["r"].to_numpy()[:, 0]
    top = np.argsort(-r, kind="stable")[:TOP]
    return {"iterations": int(out["iterations"].to_numpy()[0, 0]), "sum": float(r.sum()), "dtype": str(r.dtype),
            "top": [[int(i), float(r[i])] for i in top]}


# Graph-only results (cc, triangles) are kept by a function between calls with the same graph:
# each timed call then starts from a graph new to it (invalidate: conversion, plan, its
# evaluation of graph-only values, run; or, against LAGraph, a new GraphBLAS matrix: see
# ``structural``). BFS, SSSP and PageRank depend on a data input too: a warm call keeps the
# graph's conversion and what depends on it alone (Aᵀ, degrees), as LAGraph's graph object
# caches them, and runs the whole algorithm.
FRESH = ("cc", "tc", "spgemm")


def structural(A: sp.csr_array):
    """A's pattern as a GraphBLAS matrix, every value 1 (stored once: iso), in the dtype dspla's
    examples declare: the graph LAGraph's cc and tc demos read (``readproblem(..., structural=
    true)``, bool) and hand to each timed call ready made. dspla's calls of those take a new copy
    each (made untimed): no conversion from scipy is timed, as none is on their side, but
    planning and every graph-only value are, the graph being new."""
    import graphblas as gb
    return gb.Matrix.from_csr(A.indptr, A.indices, 1.0, dtype=float, nrows=A.shape[0], ncols=A.shape[1])


# Each peer program times its calls after busy work of its own (reading the graph, a warm-up
# call); dspla's calls follow a wait for that program. A process that has slept 0.4 s runs its
# next 30 BFS calls 1.3-1.5x slower on this machine than one that has been busy (the same calls,
# alternated in one process: medians 1.53 against 1.13 ms on email-Enron), so dspla's calls are
# timed after WARM_S seconds of the same calls, untimed: both sides measured busy.
WARM_S = 0.25


def timed_calls(alg: str, f, ins: dict, runs: int) -> list:
    """Seconds of ``runs`` calls of ``f`` (already called once: planned), after WARM_S seconds of
    the same calls. A graph-only algorithm's call takes a graph new to ``f``: a copy of a GraphBLAS
    graph (``structural``), made untimed, or else ``f`` forgets its graph (``invalidate``)."""
    times: list = []
    start = time.perf_counter()
    new_graph = alg in FRESH and not sp.issparse(ins["A"])
    while len(times) < runs:
        if new_graph:
            ins = {**ins, "A": ins["A"].dup()}
        elif alg in FRESH:
            f.invalidate()
        t0 = time.perf_counter()
        out = f(**ins)
        t1 = time.perf_counter()
        del out
        if t0 - start >= WARM_S:
            times.append(t1 - t0)
    return times


def per_iteration(alg: str, times: list, res: dict) -> list:
    """PageRank is compared per iteration (the two sides stop after different counts)."""
    return [t / res["iterations"] for t in times] if alg in PAGERANK else times


# ------------------------------------------------------------------------ the checks
def check(alg: str, ours: dict, theirs: dict) -> tuple:
    """(True / False, what was compared) for the fields both sides have."""
    if alg in PAGERANK and "top" in theirs:
        a, b = [i for i, _ in ours["top"][:5]], [i for i, _ in theirs["top"][:5]]
        rel = max(abs(x - y) / max(abs(y), 1e-300) for (_, x), (_, y) in zip(ours["top"], theirs["top"]))
        ok = a == b and rel < 1e-2   # LAGraph stops at an L1 change of 1e-4, in float32
        return ok, f"top 5 {a}{' = ' if a == b else ' vs '}{b}, ranks within {rel:.0e}"
    if alg in PAGERANK:   # a demo's sum of the ranks only
        exact = 1e-9 if ours.get("dtype", "float64") == "float64" else 1e-5
        ok = abs(theirs["sum"] - 1) < 1e-3 and abs(ours["sum"] - 1) < exact
        return ok, f"sum of ranks {ours['sum']:.6f} / {theirs['sum']:.6f}"
    keys = [k for k in ours if k in theirs]
    if not keys:
        return None, "not checked"
    ok = all(ours[k] == theirs[k] for k in keys)
    return ok, ", ".join(f"{k} {ours[k]}{' = ' if ours[k] == theirs[k] else ' vs '}{theirs[k]}" for k in keys)


# ------------------------------------------------------------------------ figures
def median(v: list) -> float:
    return statistics.median(v) if v else float("nan")


def ratio_row(ours: list, theirs: list, ours_by_repeat: list, theirs_by_repeat: list) -> dict:
    """Medians (ms), their ratio, the spread of the per-repeat ratios (the noise), and the
    minima's ratio (on a loaded machine the run least disturbed by other jobs)."""
    per = [median(a) / median(b) for a, b in zip(ours_by_repeat, theirs_by_repeat) if a and b]
    return {"dspla_ms": median(ours) * 1e3, "peer_ms": median(theirs) * 1e3,
            "ratio": median(ours) / median(theirs), "ratio_by_repeat": per,
            "dspla_min_ms": min(ours) * 1e3, "peer_min_ms": min(theirs) * 1e3, "ratio_min": min(ours) / min(theirs),
            "dspla_runs": len(ours), "peer_runs": len(theirs)}


def run(cmd: list, env: dict, timeout: float = 1800) -> str:
    """A peer's program; its output (stdout and stderr in the order written: CombBLAS prints its
    headings on stderr), or an error naming the command and its last output."""
    r = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       timeout=timeout, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stdout[-3000:]}")
    return r.stdout


def rounds(repeats: int, groups: list, step, say) -> None:
    """The comparisons' interleaved rounds: in each repeat, every group (name, items) in turn,
    ``step(item)`` for each item (the peer's program run and parsed, then dspla's runs, one after
    the other on the same loaded machine), then one progress line naming the load."""
    for rep in range(repeats):
        for name, items in groups:
            for item in items:
                step(item)
            say(f"  {name}: repeat {rep + 1}/{repeats} done (load {load_avg()})")


def find_programs(top: str, names: dict) -> dict:
    """For each key, the executable file named names[key] under ``top`` (the shallowest)."""
    found: dict = {}
    for here, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "CMakeFiles"]
        depth = here.count(os.sep)
        for key, name in names.items():
            p = os.path.join(here, name)
            if name in files and os.access(p, os.X_OK) and (key not in found or depth < found[key][0]):
                found[key] = (depth, p)
    return {k: v[1] for k, v in found.items()}


def locate(top: str | None, option: str, table: dict, what: str, hint: str) -> tuple:
    """(the programs of ``table`` found under ``top``, ''), or (None, why none can be)."""
    if not top:
        return None, f"no {option} DIR given ({hint}, then pass its build directory)"
    if not os.path.isdir(top):
        return None, f"{option} {top} is not a directory"
    progs = find_programs(top, table)
    if not progs:
        return None, f"no {what} ({', '.join(dict.fromkeys(table.values()))}) under {top}: {hint}"
    return progs, ""


def child_env(extra: dict) -> dict:
    """This environment without a launcher's job variables (a child must not take itself for a
    rank of a job this process may be in) and without Python's search path."""
    from dspla.runtime.launch import job_environment_names
    drop = job_environment_names()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(drop) and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return {**env, **extra}


def load_avg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"
