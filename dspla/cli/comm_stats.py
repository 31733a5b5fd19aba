"""dspla comm-stats GRAPH -P 16,64 --methods hypergraph,graph,random [-K 64] [--json out.json]

Exact traffic of the 1D p2p product A @ B for each (method, P), printed in the layout of Demirci et al.'s
Table 2 (average and maximum volume and messages per process, normalised to random partitioning)
and optionally written as JSON: one record per (method, P), volumes in rows of B.
"""
from __future__ import annotations

import json

import numpy as np

from ..analysis import comm_stats
from ..errors import DataFormatError, DsplaError, UnknownNameError
from ..formats.files import atomic_write, check_writable
from ..formats.graph import load_graph
from ..formats.npy import load_npy
from ..partition import METHODS, partition
from ..partition.balance import imbalance
from ..partition.partitioner import as_pattern
from ..partition.simple import random_parts
from .arguments import POSITIVE, int_list
from .partition import add_graph_args, add_partition_args, method_params

ABBREV = {"hypergraph": "HP", "graph": "GP", "random": "RP", "block": "BP", "stochastic-hypergraph": "SHP"}
COLUMNS = ("volume_avg", "volume_max", "messages_avg", "messages_max")


def register(sub, common):
    p = sub.add_parser("comm-stats", parents=[common], help="exact communication of 1D plans per partitioner",
                       description="For each method and process count: partition (cached), then count exactly "
                                   "the rows of B and messages each process sends in the 1D p2p product A @ B.")
    add_graph_args(p)
    p.add_argument("-P", type=int_list(1, 1 << 20), default=None,
                   help="process counts, comma separated (default 16,64,256,512; with --partition-file: its own)")
    p.add_argument("--methods", default=None,
                   help="comma-separated methods (default hypergraph,graph,random; none with --partition-file)")
    p.add_argument("-K", type=POSITIVE, default=64, help="width of B: sets the words fields of the --json "
                   "records (words_total = rows x K); the table counts rows of B and is the same for any K")
    p.add_argument("--partition-file", help="also analyse this saved partition (.npy, row -> process) (default: "
                   "none)")
    p.add_argument("--name", default="file", help="method name for --partition-file records")
    add_partition_args(p)
    p.add_argument("--json", help="write the records to this file (default: not written)")
    p.set_defaults(func=run)


def _load_partition_file(path: str, n: int):


    parts = load_npy(path)
    if parts.ndim != 1 or parts.size != n or not np.issubdtype(parts.dtype, np.integer):
        raise DataFormatError(path, f"expected {n} integer process ids, got shape {parts.shape}, dtype {parts.dtype}")
    if parts.size and parts.min() < 0:
        raise DataFormatError(path, f"negative process id {parts.min()}")
    return parts.astype(np.int64)


def record(method: str, A, parts, P: int, K: int, imbalance: float, seconds: float, b_parts=None, **extra) -> dict:
    """One JSON record of comm-stats (the fixed fields first, then extras)."""

    s = comm_stats(A, parts, P, K, b_parts=b_parts).summary()
    rec = {"method": method, "P": P, "volume_total": s["volume_total"], "volume_avg": s["volume_avg"],
           "volume_max": s["volume_max"], "messages_total": s["messages_total"], "messages_avg": s["messages_avg"],
           "messages_max": s["messages_max"], "imbalance": imbalance, "seconds": seconds}
    rec.update(K=K, words_total=s["words_total"], km1=s["km1"], volume_recv_max=s["volume_recv_max"],
               messages_recv_max=s["messages_recv_max"], load_max=s["load_max"], load_imbalance=s["load_imbalance"])
    rec.update(extra)
    return rec


def run(args):


    explicit = args.P or None
    default = "" if args.partition_file else "hypergraph,graph,random"
    methods = [m for m in (args.methods if args.methods is not None else default).split(",") if m]
    for m in methods:
        if m not in METHODS:
            raise UnknownNameError("partitioning method", m, METHODS)
    if args.backend and not any(args.backend in METHODS[m].backends for m in methods):
        valid = sorted({b for m in methods for b in METHODS[m].backends})
        raise DsplaError(f"--backend {args.backend!r} applies to none of the methods; valid: {', '.join(valid)}")
    if args.json:
        check_writable(args.json, "records (--json)", inputs=[args.graph, args.partition_file])
    A = as_pattern(load_graph(args.graph, directed=args.directed).matrix)
    n, ncols = A.shape
    b_parts = None if n == ncols else "auto"  # rectangular: B's rows go where their column is used most
    params = method_params(args)
    quiet = False if args.quiet else None
    records, baseline = [], {}
    file_parts = _load_partition_file(args.partition_file, n) if args.partition_file else None
    Pf = None
    if file_parts is not None:
        used = int(file_parts.max()) + 1 if n else 1
        Pf = explicit[0] if explicit and len(explicit) == 1 else used
        if Pf < used:
            raise DsplaError(f"{args.partition_file} names process {used - 1} but -P is {Pf}")
        Ps = sorted(set(explicit or []) | {Pf})
    else:
        Ps = explicit or [16, 64, 256, 512]
    for P in Ps:
        for m in methods:
            r = partition(A, P, m, eps=args.eps, seed=args.seed,
                          backend=args.backend if args.backend in METHODS[m].backends else None, cache=args.cache,
                          progress=quiet, **({k: v for k, v in params.items() if k in METHODS[m].params}))
            records.append(record(m, A, r.parts, P, args.K, r.imbalance, r.seconds, b_parts,
                                  imbalance_vs_average=r.imbalance_vs_average, cached=r.cached, backend=r.backend))
        if P == Pf:
            w = np.diff(A.indptr)
            records.append(record(args.name, A, file_parts, P, args.K, imbalance(file_parts, w, P), 0.0, b_parts))
        if "random" not in methods:  # the table normalises to RP: compute it, keep it out of the JSON
            baseline[P] = record("random", A, random_parts(n, P, args.seed), P, args.K, 0.0, 0.0, b_parts)
    if args.json:   # written before anything is printed
        with atomic_write(args.json, "w") as f:
            json.dump(records, f, indent=1)
    print(format_table(records, baseline))
    if args.json:
        print(f"wrote {args.json}")


def format_table(records: list[dict], baseline: dict | None = None) -> str:
    """Demirci et al.'s Table 2 layout per P: each method's average/maximum volume and messages relative
    to RP, an HP/GP row when both are present, then the absolute numbers."""
    baseline = dict(baseline or {})
    for r in records:
        if r["method"] == "random":
            baseline.setdefault(r["P"], r)
    out = []
    cached = False
    for P in sorted({r["P"] for r in records}):
        recs = [r for r in records if r["P"] == P]
        rp = baseline.get(P)
        out.append(f"P = {P}")
        if rp is not None:
            out.append(f"  {'normalised to RP':<22}{'Volume':>16}{'Messages':>16}")
            out.append(f"  {'':<22}{'Avg':>8}{'Max':>8}{'Avg':>8}{'Max':>8}")
            byname = {}
            for r in recs:
                if r["method"] == "random":
                    continue
                ratios = [r[c] / rp[c] if rp[c] else float("nan") for c in COLUMNS]
                byname[r["method"]] = ratios
                out.append(f"  {ABBREV.get(r['method'], r['method']):<22}" + "".join(f"{x:8.2f}" for x in ratios))
            if "hypergraph" in byname and "graph" in byname:
                hg = [a / b if b else float("nan") for a, b in zip(byname["hypergraph"], byname["graph"])]
                out.append(f"  {'HP/GP':<22}" + "".join(f"{x:8.2f}" for x in hg))
        out.append(f"  {'absolute':<22}{'vol total':>11}{'avg':>10}{'max':>8}{'msg avg':>9}{'max':>6}"
                   f"{'imbal':>8}{'seconds':>9}")
        for r in recs:
            # a partition read from the cache: its seconds are those of the run that made it
            mark = " (cached)" if r.get("cached") else ""
            cached = cached or bool(mark)
            out.append(f"  {ABBREV.get(r['method'], r['method']):<22}{r['volume_total']:>11}{r['volume_avg']:>10.1f}"
                       f"{r['volume_max']:>8}{r['messages_avg']:>9.1f}{r['messages_max']:>6}{r['imbalance']:>8.3f}"
                       f"{r['seconds']:>9.2f}{mark}")
    if cached:
        out.append("(cached): the partition was read from the cache (--no-cache to partition again); its seconds "
                   "are the partitioning time of the run that made it")
    return "\n".join(out)
