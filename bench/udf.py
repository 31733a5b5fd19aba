"""The user-operator bar: a tropical semiring built from Python functions (examples/tropical_plugin.py,
loaded with --plugin) against the built-in min_plus, per iteration of `dspla run` on P real
processes. Bar: user / built-in <= 1.5.

Both programs run the same product on the same graph and plan; runs alternate (built-in, user,
built-in, ...) so machine noise hits both alike. Each run reports its median iteration (the
first iteration, which compiles the user's operators, is one of --repeat); the figure is the
median over the rounds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import scipy.io
import scipy.sparse as sp

from .common import git_commit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DSPLA = os.path.join(os.path.dirname(sys.executable), "dspla")
PLUGIN = os.path.join(ROOT, "examples", "tropical_plugin.py")
PROGRAM = "{decl}input A : sparse[n, n]\ninput X : dense[n, k]\nT = mxm(A, X, {sr})\noutput T\n"


def _run(prog, a, x, P, repeat, plan, extra=()):
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, "s.json")
        cmd = [DSPLA, "run", prog, "-i", f"A={a}", "-i", f"X={x}", "--np", str(P), "--plan", plan,
               "--partition", "block", "--repeat", str(repeat), "--stats", stats, *extra]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr}")
        return json.load(open(stats))["iteration_s_median"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench udf")
    ap.add_argument("--n", type=int, default=50_000, help="rows of the random graph")
    ap.add_argument("--degree", type=int, default=16, help="entries per row")
    ap.add_argument("--K", type=int, default=32, help="columns of X")
    ap.add_argument("--np", type=int, default=2, dest="P")
    ap.add_argument("--plan", default="p2p1d")
    ap.add_argument("--repeat", type=int, default=9, help="iterations per run")
    ap.add_argument("--rounds", type=int, default=3, help="alternated runs of each program")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        A = sp.random_array((args.n, args.n), density=args.degree / args.n, random_state=rng, format="coo")
        A.data[:] = rng.integers(1, 100, A.nnz)
        a, x = os.path.join(d, "a.mtx"), os.path.join(d, "x.npy")
        scipy.io.mmwrite(a, A)
        np.save(x, rng.random((args.n, args.K)))
        progs = {}
        for key, decl, sr in (("built-in", "", "min_plus"), ("user", "semiring tropical = tmin.tplus\n", "tropical")):
            progs[key] = os.path.join(d, f"{key}.dspla")
            open(progs[key], "w").write(PROGRAM.format(decl=decl, sr=sr))
        times = {"built-in": [], "user": []}
        for _ in range(args.rounds):
            times["built-in"].append(_run(progs["built-in"], a, x, args.P, args.repeat, args.plan))
            times["user"].append(_run(progs["user"], a, x, args.P, args.repeat, args.plan, ("--plugin", PLUGIN)))
    b, u = statistics.median(times["built-in"]), statistics.median(times["user"])
    print(f"commit {git_commit()}; random graph n={args.n}, {args.degree} per row, K={args.K}; P={args.P}, plan "
          f"{args.plan}; median over {args.rounds} alternated runs of each run's median of {args.repeat} iterations")
    print(f"{'semiring':>24} {'iteration s':>12}  runs")
    print(f"{'min_plus (built in)':>24} {b:>12.4f}  {' '.join(f'{t:.4f}' for t in times['built-in'])}")
    print(f"{'tmin.tplus (Python)':>24} {u:>12.4f}  {' '.join(f'{t:.4f}' for t in times['user'])}")
    print(f"ratio user / built-in: {u / b:.2f} (bar: <= 1.5)")
    return 0
