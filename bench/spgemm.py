"""Sparse x sparse products on P processes: C = A @ A and the masked triangle product L·L inside
L, on R-MAT graphs (edge factor 8, dspla.generate.rmat, seed 0) and soc-Slashdot0902
symmetrised, each by ``dspla run`` on one process and on P (auto, then every sparse x sparse
plan that runs there).

Per run: the result checked against one process's (C's entries and the sum of its values, the
triangle count: integers, equal exactly), each rank's peak RSS (the stats), the words moved
against the words predicted, and the plan's predicted memory against what the rank held while
the plan ran (its run peak) above a process that ran the same program on a tiny graph (R-MAT 8).
Bars: every rank's peak RSS ≤ 1.3 x (one process's peak / P) + 200 MB; predicted memory within
1.5x of that measure; results equal. Big runs are made once each (minutes, GBs), one at a time.

    dspla bench spgemm [--scales 15,16] [--no-slashdot] [--P 4] [--plans auto,shards,p2p1d] [--json F]

(``shards``: auto, the graph given as a shard set split by work, every rank reading its rows.)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import scipy.sparse as sp

from .common import ROOT, git_commit

SLASHDOT = os.path.join(ROOT, "..", "shared", "datasets", "snap", "soc-Slashdot0902.txt.gz")
PROGRAMS = {
    "A@A": "input A : sparse[n, n]\nC = A @ A\ntotal = reduce_all(C)\noutput C\noutput total\n",
    "triangles": ("input A : sparse[n, n]\nL = cast(select(ewise_add(A, A.T, pair), tril, -1), int64)\n"
                  "T = mxm(L, L, plus_pair, mask=L, structure=true)\ntotal = reduce_all(T)\noutput T\n"
                  "output total\n"),
}


def graphs(args, d: str) -> dict:
    from dspla.formats import load_snap
    from dspla.generate import rmat
    out = {}
    for s in args.scales:
        path = os.path.join(d, f"rmat{s}.npz")
        sp.save_npz(path, rmat(s, edge_factor=8, seed=0))
        out[f"rmat{s}"] = path
    if args.slashdot and os.path.exists(SLASHDOT):
        A = sp.csr_array(load_snap(SLASHDOT))
        S = sp.csr_array(((A + A.T) != 0).astype(np.float64))
        S.setdiag(0)
        S.eliminate_zeros()
        out["slashdot_sym"] = os.path.join(d, "slashdot.npz")
        sp.save_npz(out["slashdot_sym"], S)
    elif args.slashdot:
        print(f"soc-Slashdot0902 skipped: {SLASHDOT} is absent")
    return out


DSPLA = os.path.join(os.path.dirname(sys.executable), "dspla")


def shard(d: str, graph: str, P: int) -> str:
    """The graph as P shards (``dspla shard``), its rows split by work as partition auto would
    (plan/partitioning.block_by_work), so that every rank reads its own rows only."""
    from dspla.plan.partitioning import block_by_work
    parts, _ = block_by_work(sp.load_npz(graph).tocsr(), P)
    np.save(os.path.join(d, "parts.npy"), parts)
    out = os.path.join(d, f"shards{P}")
    r = subprocess.run([DSPLA, "shard", "-i", f"A={graph}", "-P", str(P), "--partition-file",
                        os.path.join(d, "parts.npy"), "--out", out, "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"dspla shard failed: {r.stderr[-2000:]}")
    return out


def run(d: str, program: str, graph: str, P: int, plan: str = "auto") -> dict:
    """One ``dspla run``: its stats, and the result's entries and total from what it printed.
    ``plan`` "shards": auto, every rank reading its rows from a shard set."""
    src = os.path.join(d, f"{program.replace('@', '_')}.dspla")
    with open(src, "w") as fh:
        fh.write(PROGRAMS[program])
    stats = os.path.join(d, "stats.json")
    given = ["--shards", shard(d, graph, P)] if plan == "shards" else ["-i", f"A={graph}"]
    cmd = [DSPLA, "run", src, *given, "--stats", stats, "--np", str(P)] + \
        (["--plan", plan] if P > 1 and plan != "shards" else [])
    env = {**os.environ, "DSPLA_THREADS": "1"}
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=3600)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    with open(stats) as fh:
        s = json.load(fh)
    present = re.search(r"^[CT]: \S+ \S+, (\d+) present", r.stdout, re.M)
    total = re.search(r"^total: 1x1 \S+ = (\S+)", r.stdout, re.M)
    rss = [x["peak_rss_bytes"] / 2**20 for x in s["per_rank"]]
    prods = s.get("products", [])
    run_rss = [x.get("run_peak_rss_bytes", x["peak_rss_bytes"]) / 2**20 for x in s["per_rank"]]
    out = {"P": P, "plan": prods[0]["plan"] if prods else "local", "entries": int(present.group(1)),
           "total": float(total.group(1)), "rss_mb": [round(x) for x in rss], "run_rss_mb": [round(x) for x in run_rss],
           "iteration_s": s["iteration_s_median"]}
    if prods:
        p = prods[0]
        out.update(words=p["words_sent_total"], words_predicted=p["predicted"].get("words"),
                   batches=p["predicted"].get("batches", 1),
                   memory_predicted_mb=round(p["predicted"].get("memory_bytes", 0) / 2**20, 1),
                   predicted_s=p["predicted"].get("predicted_s"))
    return out


def case(d: str, name: str, graph: str, program: str, P: int, plans: list, base: dict) -> dict:
    one = run(d, program, graph, 1)
    bar = 1.3 * max(one["rss_mb"]) / P + 200
    rows = {"one": one, "bar_mb": round(bar)}
    print(f"{name} {program}: P=1 {one['entries']} entries, total {one['total']:.0f}, peak {one['rss_mb'][0]} MB, "
          f"{one['iteration_s']:.2f} s; bar per rank {bar:.0f} MB")
    for plan in plans:
        try:
            got = run(d, program, graph, P, plan)
        except SystemExit as e:
            print(f"  {plan}: {str(e).splitlines()[0]}")
            continue
        held = [r - b for r, b in zip(got["run_rss_mb"], base[program])]   # (while the plan runs)
        got["equal"] = got["entries"] == one["entries"] and got["total"] == one["total"]
        got["rss_ok"] = max(got["rss_mb"]) <= bar
        got["memory_ratio"] = round(got.get("memory_predicted_mb", 0) / max(1.0, max(held)), 2)
        print(f"  {plan:>15} -> {got['plan']}: equal {got['equal']}, peak {got['rss_mb']} MB "
              f"({'≤' if got['rss_ok'] else '>'} {bar:.0f}), {got['iteration_s']:.2f} s; words {got.get('words')} "
              f"(predicted {got.get('words_predicted')}); memory predicted {got.get('memory_predicted_mb')} MB, "
              f"held {max(held):.0f} MB above a tiny run (ratio {got['memory_ratio']})")
        rows[plan] = got
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench spgemm", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", type=lambda s: [int(x) for x in s.split(",") if x], default=[15, 16])
    ap.add_argument("--no-slashdot", dest="slashdot", action="store_false")
    ap.add_argument("--P", type=int, default=4)
    ap.add_argument("--plans", default="auto,shards,p2p1d,summa2d_sparse,spgemm3d")
    ap.add_argument("--programs", default="A@A,triangles")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    plans = args.plans.split(",")
    results = {"commit": git_commit(), "P": args.P, "cases": {}}
    with tempfile.TemporaryDirectory() as d:
        tiny = os.path.join(d, "tiny.npz")
        from dspla.generate import rmat
        sp.save_npz(tiny, rmat(8, edge_factor=8, seed=0))
        base = {p: run(d, p, tiny, args.P)["run_rss_mb"] for p in args.programs.split(",")}
        results["baseline_mb"] = base
        for name, path in graphs(args, d).items():
            for program in args.programs.split(","):
                # an unmasked A @ A returns more of C than A and B hold: the plans that move C (2D, 3D)
                # refuse it (plans/spgemm2d.RETURN_LIMIT); R-MAT 16's by auto and shards only
                big = program == "A@A"
                use = [p for p in plans if p in ("auto", "shards", "p2p1d")] if big and name != "rmat16" else \
                    [p for p in plans if p in ("auto", "shards")] if big else plans
                results["cases"][f"{name} {program}"] = case(d, name, path, program, args.P, use, base)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
