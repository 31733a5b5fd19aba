"""The runtime's performance bars, measured with `dspla run` on real processes:

- p2p1d SpMM on soc-Slashdot0902 (hypergraph partition), P = 2 against P = 1, K in {16, 64, 256}:
  the bar is P=2 time <= 0.65x P=1 time (median iteration, planning excluded);
- per-iteration Python overhead of p2p1d at P = 2 on an empty matrix (bar: < 200 us);
- planning time (send lists, buffers, pieces; partitioner excluded) <= 20 SpMM iterations
  (median P = 2 iteration and median planning time over the trials).
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

from .common import git_commit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DSPLA = os.path.join(os.path.dirname(sys.executable), "dspla")
GRAPH = os.path.join(ROOT, "..", "shared", "datasets", "snap", "soc-Slashdot0902.txt.gz")


def run(prog, inputs, np_, plan="p2p1d", partition="hypergraph", repeat=9, extra=(), env=None):
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, "s.json")
        cmd = [DSPLA, "run", prog, "--np", str(np_), "--plan", plan, "--partition", partition, "--repeat", str(repeat),
               "--stats", stats, *extra]
        for k, v in inputs.items():
            cmd += ["-i", f"{k}={v}"]
        r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
        if r.returncode != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr}")
        return json.load(open(stats))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench runtime")
    ap.add_argument("--K", default="16,64,256")
    ap.add_argument("--repeat", type=int, default=None,
                    help="iterations per run (default max(9, 1000 // K): a K = 16 iteration is ~4 ms, and 9 of "
                         "them swung the ratio between 0.5 and 1.0 on this shared machine)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--also-plans", default="twoface,15d", help="plans whose planning time is also reported (K=64)")
    ap.add_argument("--graph", default=GRAPH)
    args = ap.parse_args(argv)

    def reps(K):
        return args.repeat or max(9, 1000 // K)

    print(f"commit {git_commit()}; graph {os.path.basename(args.graph)}; median over {args.trials} alternated "
          f"trials of the median iteration of {', '.join(f'{reps(int(K))} (K={K})' for K in args.K.split(','))}")
    with tempfile.TemporaryDirectory() as d:
        prog = os.path.join(d, "spmm.dspla")
        open(prog, "w").write("input A : sparse[n, n]\ninput X : dense[n, k]\nT = A @ X\noutput T\n")
        from dspla.formats.graph import load_graph
        n = load_graph(args.graph, quiet=True).matrix.shape[0]
        rng = np.random.default_rng(0)
        print("P=1 runs with one GraphBLAS thread (one core, like each P=2 rank); P=1* with the default threads")
        print(f"{'K':>5} {'P=1 s':>9} {'P=1* s':>9} {'P=2 s':>9} {'ratio':>7} {'ratio*':>7} {'planning s':>11} "
              f"{'plan/iter':>10}  "
              f"{'P=2 compute/pack/wait per rank, last iteration (s)'}")
        for K in map(int, args.K.split(",")):
            x = os.path.join(d, f"x{K}.npy")
            np.save(x, rng.random((n, K)))
            # P=1, P=1*, P=2 alternated --trials times; each figure is the median over the trials
            # of each run's median iteration (single runs of the one-thread P=1 were bimodal here)
            runs = [(run(prog, {"A": args.graph, "X": x}, 1, repeat=reps(K), env={"DSPLA_THREADS": "1"}),
                     run(prog, {"A": args.graph, "X": x}, 1, repeat=reps(K)),
                     run(prog, {"A": args.graph, "X": x}, 2, repeat=reps(K))) for _ in range(args.trials)]
            t1, t1t, t2 = (statistics.median(r[j]["iteration_s_median"] for r in runs) for j in range(3))
            s2 = runs[-1][2]
            phases = "; ".join(f"{r['compute_s']:.3f}/{r['pack_s']:.3f}/{r['wait_s']:.3f}" for r in s2["per_rank"])
            plan_s = statistics.median(r[2]["planning_without_partition_s"] for r in runs)
            print(f"{K:>5} {t1:>9.4f} {t1t:>9.4f} {t2:>9.4f} {t2 / t1:>7.3f} {t2 / t1t:>7.3f} {plan_s:>11.3f} "
                  f"{plan_s / t2:>10.1f}  {phases}")
        # planning of the plans with other set-up (twoface: windows, stripe classes; 15d: groups)
        for plan in args.also_plans.split(",") if args.also_plans else []:
            K = 64
            x = os.path.join(d, f"x{K}.npy")
            if not os.path.exists(x):
                np.save(x, rng.random((n, K)))
            rs = [run(prog, {"A": args.graph, "X": x}, 2, plan=plan, repeat=reps(K)) for _ in range(args.trials)]
            t2 = statistics.median(r["iteration_s_median"] for r in rs)
            plan_s = statistics.median(r["planning_without_partition_s"] for r in rs)
            print(f"{plan} P=2 K={K}: iteration {t2:.4f} s, planning {plan_s:.3f} s = {plan_s / t2:.1f} iterations")
        # per-iteration overhead: an empty matrix, P = 2
        a = os.path.join(d, "empty.mtx")
        open(a, "w").write("%%MatrixMarket matrix coordinate real general\n1000 1000 0\n")
        x = os.path.join(d, "x.npy")
        np.save(x, np.ones((1000, 16)))
        s = run(prog, {"A": a, "X": x}, 2, partition="block", repeat=200)
        print(f"per-iteration overhead, empty 1000x1000, P=2: {s['iteration_s_median'] * 1e6:.0f} us "
              f"(bar < 200 us)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
