"""Scale-out: memory and start-up of a job from shards against today's rank-0 path, on one problem.

    dspla bench scale [--scale 20] [--edge-factor 16] [-K 64] [--np 4] [--plan p2p1d]

An R-MAT graph (``dspla.generate.rmat``) and X (n x K) are written once (A as a scipy .npz, X as
.npy) and sharded once (``dspla shard --method random``, timed apart: it is done once, on a big
node). Then, one after the other, ``T = A @ X`` runs:

- in one process (``dspla run``): the reference peak RSS;
- at P from the shards (``dspla run --np P --shards DIR``): every rank reads its rows and plans
  its own program;
- at P in memory (``dspla run --np P -i A=... -i X=...``): rank 0 reads and partitions, sends
  every rank its rows, and every rank plans its own program;
- at P the way before SPMD planning (the same with ``--rank0-planning``): rank 0 reads,
  partitions, plans every rank's program and scatters programs and pieces.

The P runs use the same random partition and plan, so they must agree on every word moved.
Reported: per-rank peak RSS (max/median, sum against the one-process peak), wall time from
launch to exit (the first and only result; no output is gathered), and each run's start-up
split (load, plan, first iteration; slowest rank). The bars: max/median <= 1.25,
sum <= 1.6 x one process, shards' launch-to-result <= 0.5 x the rank-0 path's.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dspla.generate import rmat

from .common import git_commit

BIN = Path(sys.executable).parent
DSPLA = str(BIN / "dspla")
PROG = "input A : sparse[n, n]\ninput X : dense[n, k]\nT = A @ X\noutput T\n"


def _run(cmd: list, label: str) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{label} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return dt


def _mb(x) -> float:
    return x / 2**20


def main(argv=None):
    ap = argparse.ArgumentParser(prog="dspla bench scale", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("-K", type=int, default=64)
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--plan", default="p2p1d")
    ap.add_argument("--runs", default="one,shards,memory,rank0",
                    help="which runs (comma-separated: one, shards, memory, rank0); with --dir and --json, runs "
                         "made in separate invocations are reported together")
    ap.add_argument("--dir", help="keep the data and shards here and reuse them (default: a temporary folder)")
    ap.add_argument("--json", help="write the figures to this file (merged with its earlier runs)")
    a = ap.parse_args(argv)
    tmp = tempfile.TemporaryDirectory() if not a.dir else None
    d = Path(a.dir or tmp.name)
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if not (d / "x.npy").exists():
        A = rmat(a.scale, a.edge_factor, seed=0)
        sp.save_npz(d / "a.npz", sp.csr_matrix(A), compressed=False)
        np.save(d / "x.npy", np.random.default_rng(0).random((A.shape[0], a.K)))
        del A
    n = int(np.load(d / "x.npy", mmap_mode="r").shape[0])
    (d / "p.dspla").write_text(PROG)
    gen_s = time.perf_counter() - t0
    print(f"R-MAT scale {a.scale} (n = {n}), K = {a.K}, P = {a.np}, plan {a.plan}, partition random; "
          f"commit {git_commit()}; data ready in {gen_s:.1f} s; a shared 2-core machine", flush=True)
    out = json.loads(Path(a.json).read_text()) if a.json and Path(a.json).exists() else \
        {"scale": a.scale, "n": n, "K": a.K, "P": a.np, "plan": a.plan, "runs": {}}
    out["commit"] = git_commit()
    if not (d / "shards" / "manifest.json").exists():
        out["shard_s"] = _run([DSPLA, "shard", "-i", f"A={d / 'a.npz'}", "-i", f"X={d / 'x.npy'}", "-P", str(a.np),
                               "--method", "random", "--out", str(d / "shards"), "-q"], "dspla shard")
        print(f"dspla shard -P {a.np}: {out['shard_s']:.1f} s (once, on a big node)", flush=True)
    inputs = ["-i", f"A={d / 'a.npz'}", "-i", f"X={d / 'x.npy'}"]
    # inputs on rank 0: sharded in memory then planned on every rank, or planned on rank 0 (before)
    memory = [DSPLA, "run", str(d / "p.dspla"), "--np", str(a.np), *inputs, "--partition", "random", "--plan",
              a.plan, "--stats", str(d / "memory.json")]
    every = {"one": ("one process", [DSPLA, "run", str(d / "p.dspla"), *inputs, "--stats", str(d / "one.json")]),
             "shards": ("shards", [DSPLA, "run", str(d / "p.dspla"), "--np", str(a.np), "--shards", str(d / "shards"),
                                   "--plan", a.plan, "--stats", str(d / "shards.json")]),
             "memory": ("in memory", memory),
             "rank0": ("rank 0", [*memory[:-1], str(d / "rank0.json"), "--rank0-planning"])}
    for key in a.runs.split(","):
        label, cmd = every[key]
        wall = _run(cmd, label)
        st = json.loads(Path(cmd[cmd.index("--stats") + 1]).read_text())
        rss = [r["peak_rss_bytes"] for r in st["per_rank"]]
        rec = {"wall_s": wall, "peak_rss_mb": [round(_mb(x)) for x in rss], "sum_mb": round(_mb(sum(rss))),
               "max_over_median": max(rss) / statistics.median(rss), "words_sent_total": st.get("words_sent_total"),
               "startup_s": st.get("startup_s", {}), "planning": st.get("planning", "-")}
        out["runs"][label] = rec
        print(f"{label:>12}: launch to result {wall:6.1f} s; peak RSS per rank (MB) {rec['peak_rss_mb']}, "
              f"max/median {rec['max_over_median']:.2f}, sum {rec['sum_mb']} MB; planning {rec['planning']}; "
              + ", ".join(f"{k} {v:.2f} s" for k, v in rec["startup_s"].items()), flush=True)
        if a.json:
            Path(a.json).write_text(json.dumps(out, indent=1))
    if "one process" not in out["runs"]:
        return 0
    one = out["runs"]["one process"]["sum_mb"]
    for label in ("shards", "in memory", "rank 0"):
        if label in out["runs"]:
            r = out["runs"][label]
            print(f"{label:>12}: sum / one process = {r['sum_mb'] / one:.2f} (bar <= 1.6), max/median = "
                  f"{r['max_over_median']:.2f} (bar <= 1.25)")
    if "rank 0" in out["runs"] and "shards" in out["runs"]:
        s, r = out["runs"]["shards"], out["runs"]["rank 0"]
        out["startup_ratio"] = s["wall_s"] / r["wall_s"]
        print(f"launch to result, shards / rank 0 = {out['startup_ratio']:.2f} (bar <= 0.5); words moved "
              f"{s['words_sent_total']} vs {r['words_sent_total']} (must be equal)")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
