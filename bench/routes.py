"""Which local route is faster, per semiring, dtype and K: the measurements behind
exec/routes.py's IN_PLACE table, to re-check it on another machine or build.

For every built-in semiring with a monoid identity, each dtype it takes, and each K, times in
alternation the two routes a product with a full B can take, as dspla runs them
(``gbops._RUN``): ``full-c`` (C started full at the identity, SuiteSparse's in-place
accumulation, A's empty rows then made missing; the output written into again, as the pool
does) and ``new`` (GraphBLAS's own product into a new matrix); with ``--covered`` also a
one-column B missing the entries of columns A never reads (a bitmap, PageRank's r / outdeg).
Both results are checked equal. Prints full-c / new (min of the rounds), the route the table
picks, and flags the cells where the pick was more than 10 % slower than the other route.

    dspla bench routes [--graphs slashdot,random] [--threads 2,1] [--K 1,2,3,4,16,64]
                       [--semirings plus_times,...] [--rounds 9] [--covered] [--json F]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import graphblas as gb
import numpy as np

from dspla.algebra import SEMIRINGS
from dspla.exec import gbops, routes
from dspla.ir.types import DType

from .common import git_commit
from .local import _graphs

SLOW_S = 0.02   # a call slower than this (no compiled kernel in this build): fewer rounds


def _dtypes(sr) -> list:
    if sr.monoid.domain == "bool" or sr.mult.kind == "logical":
        return [DType.bool]
    return [DType.float64, DType.float32, DType.int64]


def _operand(n: int, dtype: DType, K: int, read: np.ndarray | None, rng):
    """B, n x K; ``read``: the rows of B that A reads, the others left missing (covered)."""
    X = rng.random((n, K)) > 0.5 if dtype is DType.bool else (rng.random((n, K)) * 10).astype(dtype.np)
    b = gb.Matrix.from_dense(X, dtype=dtype.gb)
    if read is not None:
        rows = np.flatnonzero(read)
        b = b.dup(mask=gb.Matrix.from_coo(np.repeat(rows, K), np.tile(np.arange(K), rows.size), True,
                                          nrows=n, ncols=K).S)
    return b


def cell(a, empty, sr, dtype: DType, K: int, read: np.ndarray | None, rounds: int, rng) -> dict:
    """full-c against new for a (dtype's copy of the graph, its empty rows ``empty``) times a B of
    K columns (``read``: as _operand's)."""
    b = _operand(a.ncols, dtype, K, read, rng)
    kept = {"out": None}

    def full_c():
        kept["out"] = gbops._RUN["full-c"](a, b, sr, dtype, empty, None, kept["out"])

    def new():
        return gbops._RUN["new"](a, b, sr, dtype, empty, None, None)

    t0 = time.perf_counter()
    full_c()
    slow = time.perf_counter() - t0 > SLOW_S
    ref = new()
    if not (kept["out"].isequal(ref) or kept["out"].isclose(ref, rel_tol=1e-5)):
        raise AssertionError(f"{sr.name} {dtype.value} K={K}: full-c and new differ")
    times = {"full-c": [], "new": []}
    for i in range(3 if slow else rounds):
        for name, fn in ((("full-c", full_c), ("new", new)) if i % 2 == 0 else (("new", new), ("full-c", full_c))):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    covered = read is not None
    pick = routes.choose(sr, dtype, a_full=False, b_full=not covered, b_covered=covered, k=K).name
    best = {k: min(v) for k, v in times.items()}
    other = "new" if pick == "full-c" else "full-c"
    return {"semiring": sr.name, "dtype": dtype.value, "K": K, "b": "full" if read is None else "covered",
            "full_c_min_s": best["full-c"], "new_min_s": best["new"],
            "full_c_median_s": statistics.median(times["full-c"]), "new_median_s": statistics.median(times["new"]),
            "ratio": best["full-c"] / best["new"], "pick": pick, "pick_over_other": best[pick] / best[other]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench routes")
    ap.add_argument("--graphs", default="slashdot,random")
    ap.add_argument("--threads", default="2,1", help="GraphBLAS thread counts (one per rank at P > 1)")
    ap.add_argument("--K", default="1,2,3,4,16,64")
    ap.add_argument("--semirings", default=",".join(SEMIRINGS))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--covered", action="store_true", help="also a one-column B missing what A never reads")
    ap.add_argument("--json", help="write the cells here")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    threads0 = gb.ss.config["nthreads"]
    print(f"commit {git_commit()}; min of {args.rounds} interleaved rounds (3 for calls over {SLOW_S * 1e3:.0f} ms); "
          "full-c / new < 1: in place is faster")
    shapes = [(K, False) for K in map(int, args.K.split(","))] + ([(1, True)] if args.covered else [])
    cells = []
    try:
        for gname, A in _graphs(args.graphs.split(",")).items():
            A = A.copy()
            A.data = rng.random(A.nnz) + 0.5       # (values, so no multiply sees an iso matrix)
            # the graph in each dtype, with its empty rows; the columns A reads (None: all of them,
            # so a covered B would be full)
            graphs = {}
            for dtype in (DType.float64, DType.float32, DType.int64, DType.bool):
                a = gb.io.from_scipy_sparse((A > A.data.mean()) if dtype is DType.bool else A.astype(dtype.np))
                graphs[dtype] = (a, gbops.empty_rows(a))
            read = np.diff(A.tocsc().indptr) > 0
            read = None if read.all() else read
            for t in map(int, args.threads.split(",")):
                gb.ss.config["nthreads"] = t
                print(f"{gname}, {t} thread(s)")
                print(f"  {'semiring':12} {'dtype':8} {'K':>3} {'B':8} {'full-c ms':>10} {'new ms':>9} "
                      f"{'full-c/new':>11}  pick")
                for name in args.semirings.split(","):
                    sr = SEMIRINGS[name]
                    for dtype in _dtypes(sr):
                        if sr.monoid.identity(dtype) is None:
                            continue   # (no identity: only `new` applies)
                        for K, covered in shapes:
                            if covered and read is None:
                                continue   # every column of A is read: nothing to leave missing
                            c = cell(*graphs[dtype], sr, dtype, K, read if covered else None, args.rounds, rng)
                            c.update(graph=gname, threads=t)
                            cells.append(c)
                            flag = "  <- the other route was faster" if c["pick_over_other"] > 1.10 else ""
                            print(f"  {name:12} {dtype.value:8} {K:>3} {c['b']:8} {c['full_c_min_s'] * 1e3:>10.2f} "
                                  f"{c['new_min_s'] * 1e3:>9.2f} {c['ratio']:>11.2f}  {c['pick']}{flag}", flush=True)
    finally:
        gb.ss.config["nthreads"] = threads0
    if cells:
        good = sum(c["pick_over_other"] <= 1.10 for c in cells)
        worst = max(cells, key=lambda c: c["pick_over_other"])
        print(f"the table's pick within 10 % of the faster route in {good} of {len(cells)} cells; worst: "
              f"{worst['semiring']} {worst['dtype']} K = {worst['K']} ({worst['graph']}, {worst['threads']} thread(s)) "
              f"{worst['pick']} {worst['pick_over_other']:.2f}x the other")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"commit": git_commit(), "cells": cells}, fh, indent=1)
    return 0
