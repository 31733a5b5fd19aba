"""Partition quality in the terms of Table 2 of Demirci et al. (PVLDB 2022), backend comparison, analysis speed.

    python -m bench.partition [--graphs slashdot,enron] [-P 16,64,256,512] [--json out.json]
    dspla bench partition [same arguments]

1. For each graph and P: HP (the default hypergraph method), GP and RP; average and maximum
   volume and messages sent per process, normalised to RP (Table 2 layout), plus partitioning
   time. Partitions are cached (``--no-cache`` recomputes), so a rerun only re-analyses.
2. ``--backends``: Mt-KaHyPar (default and quality presets) against KaHyPar (dspla's .ini), raw
   (no refinement), same graphs at ``--backend-P``: total volume (KM1), maximum volume, time.
3. ``--edges``: SPAC + METIS against the hypergraph model of edge partitioning (vertex cut).
4. The exact analysis at P = 4096 on an R-MAT graph with 2^scale rows: median of 3 runs.

Graphs come from ../shared/datasets (or $DSPLA_DATASETS). Times are single runs on a shared
2-core machine unless stated; partitioning runs one thread per partition (see
dspla/partition/backends.py on determinism).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

GRAPHS = {
    "soc-Slashdot0902": ("snap/soc-Slashdot0902.txt.gz", None),
    "luxembourg_osm": ("suitesparse/luxembourg_osm.mtx", None),
    "email-Enron": ("snap/email-Enron.txt", None),
    "ca-HepPh": ("snap/ca-HepPh.txt", None),
}
PAPER = {"soc-Slashdot0902": (0.74, 0.69, 0.86, 0.92)}  # Demirci et al., Table 2: HP/RP at P = 512
COLS = ("volume_avg", "volume_max", "messages_avg", "messages_max")


def datasets_dir() -> Path:
    root = Path(__file__).resolve().parents[1]
    return Path(os.environ.get("DSPLA_DATASETS", root.parent / "shared" / "datasets"))


def load(name: str):
    import scipy.sparse as sp

    from dspla.formats.graph import load_graph

    rel, directed = GRAPHS[name]
    path = datasets_dir() / rel
    if not path.exists():
        raise SystemExit(f"bench partition: {path} not found (set DSPLA_DATASETS)")
    return sp.csr_matrix(load_graph(path, directed=directed).matrix)


def table2(args) -> list[dict]:
    from dspla.cli.comm_stats import record
    from dspla.partition import partition

    out = []
    for name in args.graphs:
        A = load(name)
        print(f"\n== {name}: {A.shape[0]} rows, {A.nnz} nonzeros", flush=True)
        for P in args.P:
            recs = {}
            for m in args.methods:
                r = partition(A, P, m, eps=args.eps, seed=args.seed, cache=args.cache)
                recs[m] = record(m, A, r.parts, P, 1, r.imbalance, r.seconds,
                                 imbalance_vs_average=r.imbalance_vs_average, cached=r.cached, graph=name)
                out.append(recs[m])
            rp = recs["random"]
            line = f"P={P:<4}"
            for m in ("hypergraph", "graph"):
                if m in recs:
                    ratios = [recs[m][c] / rp[c] for c in COLS]
                    line += f"  {m[:5]}/RP " + " ".join(f"{x:.3f}" for x in ratios)
                    line += f" ({recs[m]['seconds']:.1f}s, imb {recs[m]['imbalance']:.3f})"
            print(line, flush=True)
    return out


def backends(args) -> list[dict]:
    import numpy as np

    from dspla.analysis import comm_stats
    from dspla.partition.backends import partition_hypergraph_many
    from dspla.partition.balance import backend_eps
    from dspla.partition.hypergraph import column_net

    out = []
    print("\n== backends (raw partitions, no refinement): total volume, max volume, seconds")
    for name in args.graphs:
        A = load(name)
        w = np.diff(A.indptr)
        hg = column_net(A, node_weights=np.maximum(w, 1))
        for P in args.backend_P:
            for backend, preset in (("mtkahypar", "default"), ("mtkahypar", "quality"), ("kahypar", "km1_kway")):
                t = time.perf_counter()
                parts = partition_hypergraph_many(hg, P, backend_eps(w, P, args.eps, hg.node_weights), [args.seed],
                                                  backend, preset)[0]
                dt = time.perf_counter() - t
                s = comm_stats(A, parts, P).summary()
                W = np.bincount(parts, weights=w, minlength=P)
                rec = {"graph": name, "P": P, "backend": backend, "preset": preset, "seconds": dt,
                       "volume_total": s["volume_total"], "volume_max": s["volume_max"],
                       "messages_avg": s["messages_avg"], "imbalance_vs_average": float(W.max() / (w.sum() / P) - 1)}
                out.append(rec)
                print(f"{name:<18} P={P:<4} {backend:<9} {preset:<8} vol {s['volume_total']:>8} max "
                      f"{s['volume_max']:>6} {dt:8.1f}s", flush=True)
    return out


def edges(args) -> list[dict]:
    from dspla.partition import edge_partition

    out = []
    print("\n== edge partitioning: vertex cut (replicas), replication factor, seconds")
    for name in args.graphs:
        A = load(name)
        for P in args.edge_P:
            for method in ("spac", "hypergraph"):
                r = edge_partition(A, P, method, eps=args.eps, seed=args.seed, cache=args.cache,
                                   **({"preset": "default"} if method == "hypergraph" else {}))
                out.append({"graph": name, "P": P, "method": method, "edges": int(r.edges.shape[0]),
                            "vertex_cut": r.vertex_cut, "replication_factor": r.replication_factor,
                            "imbalance": r.imbalance, "seconds": r.seconds})
                print(f"{name:<18} P={P:<4} {method:<10} cut {r.vertex_cut:>8} rf {r.replication_factor:6.3f} "
                      f"imb {r.imbalance:.3f} {r.seconds:8.1f}s", flush=True)
    return out


def analysis_speed(args) -> dict:
    from dspla.analysis import comm_stats
    from dspla.generate import rmat
    from dspla.partition import random_parts

    A = rmat(args.scale, 16, seed=1)
    P = 4096
    parts = random_parts(A.shape[0], P, 0)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        s = comm_stats(A, parts, P, K=64)
        times.append(time.perf_counter() - t)
    rec = {"rows": A.shape[0], "nnz": int(A.nnz), "P": P, "median_seconds": statistics.median(times),
           "volume_total": s.volume_total, "pairs": s.plan.npairs}
    print(f"\n== analysis: R-MAT 2^{args.scale} ({A.shape[0]} rows, {A.nnz} nonzeros), P = {P}: "
          f"{rec['median_seconds']:.2f} s median of 3 (volume {s.volume_total}, {s.plan.npairs} messages)")
    return rec


def main(argv=None) -> int:
    from bench.common import git_commit

    ap = argparse.ArgumentParser(prog="dspla bench partition", description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default=",".join(GRAPHS), help=f"comma-separated, from {', '.join(GRAPHS)}")
    ap.add_argument("-P", default="16,64,256,512")
    ap.add_argument("--methods", default="hypergraph,graph,random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eps", type=float, default=0.03)
    ap.add_argument("--no-cache", dest="cache", action="store_false")
    ap.add_argument("--backends", action="store_true", help="also compare the hypergraph backends")
    ap.add_argument("--backend-P", default="64", help="process counts for the backend comparison")
    ap.add_argument("--edges", action="store_true", help="also run the edge partitioners")
    ap.add_argument("--edge-P", default="16,64", help="process counts for edge partitioning")
    ap.add_argument("--scale", type=int, default=20, help="R-MAT scale for the analysis timing (0: skip)")
    ap.add_argument("--skip-table", action="store_true")
    ap.add_argument("--json", help="write all measurements here")
    args = ap.parse_args(argv)
    args.graphs = [g for g in args.graphs.split(",") if g]
    unknown = sorted(set(args.graphs) - set(GRAPHS))
    if unknown:
        ap.error(f"unknown graph(s) {', '.join(unknown)}; choose from {', '.join(GRAPHS)}")
    args.P = [int(x) for x in args.P.split(",")]
    args.backend_P = [int(x) for x in args.backend_P.split(",")]
    args.edge_P = [int(x) for x in args.edge_P.split(",")]
    args.methods = [m for m in args.methods.split(",") if m]
    if "random" not in args.methods:
        args.methods.append("random")  # the normaliser
    result = {"commit": git_commit(), "seed": args.seed, "eps": args.eps}
    print(f"bench partition at commit {result['commit']}, seed {args.seed}, eps {args.eps}")
    if not args.skip_table:
        result["table2"] = table2(args)
    if args.backends:
        result["backends"] = backends(args)
    if args.edges:
        result["edges"] = edges(args)
    if args.scale:
        result["analysis"] = analysis_speed(args)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
