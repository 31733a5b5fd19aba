"""Eager operations against python-graphblas: one process, soc-Slashdot0902, each dspla call on
values (``dp.array``) timed in alternation with the same python-graphblas call with ``.new()``:

- ``mxm K=16``, ``mxm K=64``: ``dp.mxm(A, X)`` vs ``A.mxm(X, plus_times).new()`` (X dense, K columns);
- ``ewise_add``: ``dp.ewise_add(A, B)`` vs ``A.ewise_add(B, plus).new()`` (B = Aᵀ: the union of two
  patterns, as symmetrising a graph is);
- ``reduce_rowwise``: ``A.reduce_rowwise()`` vs ``A.reduce_rowwise(plus).new()``.

Each result is checked against python-graphblas's before timing. A round collects the garbage
first (python-graphblas's results are reference cycles: at K = 64 the heap grew by 42 MB a round
until a collection), then times one call of each side, each result released after the clock;
each side goes first in half the rounds (the first call after a collection is the slower).
Printed: each side's median over the rounds and the ratio dspla / python-graphblas of the
medians, the minima beside them; bar: every ratio of medians <= 1.3.

    dspla bench eager [--rounds 22] [--threads N] [--json bench/results/eager.json]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

import graphblas as gb
import numpy as np
import scipy.sparse as sp

import dspla as dp

from .common import git_commit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLASHDOT = os.path.join(ROOT, "..", "shared", "datasets", "snap", "soc-Slashdot0902.txt.gz")
BAR = 1.3


def _same(got: dp.Array, want: gb.Matrix | gb.Vector) -> None:
    if isinstance(want, gb.Vector):   # (a vector is held as an n x 1 column)
        want = want._as_matrix()
    M = got.gb
    assert M.nvals == want.nvals and M.isclose(want, rel_tol=1e-12), "dspla and python-graphblas differ"


def cases(a: sp.csr_array) -> dict:
    """name -> (dspla call, python-graphblas call, check)."""
    A, B = dp.array(a), dp.array(sp.csr_array(a.T))
    Ag, Bg = A.gb, B.gb
    out = {}
    for K in (16, 64):
        X = dp.array(np.random.default_rng(K).random((a.shape[0], K)))
        Xg = X.gb
        out[f"mxm K={K}"] = (lambda A=A, X=X: dp.mxm(A, X),
                             lambda Ag=Ag, Xg=Xg: Ag.mxm(Xg, gb.semiring.plus_times).new())
    out["ewise_add"] = (lambda: dp.ewise_add(A, B), lambda: Ag.ewise_add(Bg, gb.binary.plus).new())
    out["reduce_rowwise"] = (lambda: A.reduce_rowwise(), lambda: Ag.reduce_rowwise(gb.monoid.plus).new())
    return out


def measure(a: sp.csr_array, n_rounds: int) -> dict:
    results = {}
    for name, (mine, theirs) in cases(a).items():
        _same(mine(), theirs())   # (also the warm-up: the eager call traces here)
        gc.collect()
        t: dict[str, list[float]] = {"dspla": [], "python-graphblas": []}
        pair = [("dspla", mine), ("python-graphblas", theirs)]
        for i in range(n_rounds):   # (each side first in every other round: neither always follows the other)
            gc.collect()   # (the last round's garbage: see the module's docstring)
            for k, fn in (pair if i % 2 == 0 else pair[::-1]):
                t0 = time.perf_counter()
                out = fn()
                t[k].append(time.perf_counter() - t0)
                del out   # (after the clock: dspla's is freed here, python-graphblas's at the next collection)
        med = {k: statistics.median(v) for k, v in t.items()}
        low = {k: min(v) for k, v in t.items()}
        ratio = med["dspla"] / med["python-graphblas"]
        results[name] = {"dspla_median_s": med["dspla"], "graphblas_median_s": med["python-graphblas"],
                         "dspla_min_s": low["dspla"], "graphblas_min_s": low["python-graphblas"],
                         "ratio": ratio, "ratio_min": low["dspla"] / low["python-graphblas"],
                         "within_bar": ratio <= BAR}
        print(f"{name:<16} median: dspla {med['dspla'] * 1e3:8.2f} ms, python-graphblas "
              f"{med['python-graphblas'] * 1e3:8.2f} ms, ratio {ratio:5.2f} {'ok' if ratio <= BAR else 'OVER'}   "
              f"(min: {low['dspla'] * 1e3:.2f} / {low['python-graphblas'] * 1e3:.2f} ms)", flush=True)
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench eager", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=22, help="an even number: each side first in half")
    ap.add_argument("--threads", type=int, help="GraphBLAS threads for both sides (default: GraphBLAS's own)")
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results", "eager.json"))
    args = ap.parse_args(argv)
    if args.rounds < 2 or args.rounds % 2:
        ap.error(f"--rounds {args.rounds}: an even number of 2 or more (each side goes first in half the rounds)")
    if not os.path.exists(SLASHDOT):
        print(f"soc-Slashdot0902 is absent ({SLASHDOT}): nothing to measure")
        return 0
    from dspla.formats.graph import load_graph
    a = sp.csr_array(load_graph(SLASHDOT, quiet=True).matrix, dtype=np.float64)
    if args.threads:
        gb.ss.config["nthreads"] = args.threads
    threads = gb.ss.config["nthreads"]
    print(f"commit {git_commit()}; one process, GraphBLAS threads {threads}; soc-Slashdot0902 "
          f"{a.shape[0]} x {a.shape[1]}, {a.nnz} entries; {args.rounds} interleaved rounds, medians; bar {BAR}x")
    results = measure(a, args.rounds)
    doc = {"commit": git_commit(), "graph": "soc-Slashdot0902", "rounds": args.rounds, "threads": threads,
           "bar": BAR, "cases": results}
    with open(args.json, "w") as fh:
        json.dump(doc, fh, indent=1)
    print(f"wrote {args.json}")
    return 0 if all(r["within_bar"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
