"""dspla partition GRAPH -P 64 --method hypergraph [--eps 0.03] [--seed 0] [--no-cache] --out part.npy"""
from __future__ import annotations

from ..analysis import comm_stats
from ..errors import UnknownNameError
from ..formats.files import check_writable
from ..formats.graph import load_graph
from ..partition import METHODS, partition
from ..partition.partitioner import as_pattern
from .arguments import NP, POSITIVE, SEED, number


def add_graph_args(p) -> None:
    """GRAPH and --directed/--undirected, shared with comm-stats."""
    p.add_argument("graph", metavar="GRAPH", help="graph or matrix file (.mtx[.gz], SNAP .txt[.gz], .npz)")
    d = p.add_mutually_exclusive_group()
    d.add_argument("--directed", dest="directed", action="store_const", const=True, default=None,
                   help="read an edge list as directed (the default for edge lists)")
    d.add_argument("--undirected", dest="directed", action="store_const", const=False,
                   help="symmetrise the graph (A + A^T pattern) (default: as the file says; edge lists directed)")


def add_partition_args(p) -> None:
    p.add_argument("--eps", type=number(0, 1, hi_open=True), default=0.03,
                   help="allowed imbalance, from 0 to below 1")
    p.add_argument("--seed", type=SEED, default=0, help="random seed (same seed, same partition)")
    p.add_argument("--backend", help="hypergraph backend: mtkahypar (default) or kahypar")
    p.add_argument("--preset", help="mtkahypar preset (default, quality, ...) or kahypar config name (default: the "
                   "backend's default)")
    p.add_argument("--trials", type=POSITIVE, help="hypergraph: partition with this many seeds, keep the best "
                   "(default: 1)")
    p.add_argument("--no-cache", dest="cache", action="store_false",
                   help="recompute even if a cached partition exists (and do not store it)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")


def method_params(args) -> dict:
    return {k: v for k, v in (("preset", args.preset), ("trials", args.trials)) if v is not None}


def register(sub, common):
    p = sub.add_parser("partition", parents=[common], help="partition the rows of a graph over P processes",
                       description="Partition the rows of a graph/matrix over P processes and save the "
                                   "row -> process map as .npy. Results are cached on disk "
                                   "($DSPLA_CACHE_DIR, default $XDG_CACHE_HOME/dspla/partitions).")
    add_graph_args(p)
    p.add_argument("-P", type=NP, required=True, help="number of processes (required)")
    p.add_argument("--method", "-m", default="hypergraph",
                   help="block, random, graph, hypergraph, stochastic-hypergraph")
    add_partition_args(p)
    p.add_argument("--out", "-o", help="write the partition (int64 .npy, row -> process) (default: not written)")
    p.set_defaults(func=run)


def run(args):

    if args.method not in METHODS:  # fail before loading a big file
        raise UnknownNameError("partitioning method", args.method, METHODS)
    if args.out:
        check_writable(args.out if args.out.endswith(".npy") else args.out + ".npy", "partition (--out)",
                       inputs=[args.graph])
    A = as_pattern(load_graph(args.graph, directed=args.directed).matrix)
    r = partition(A, args.P, args.method, eps=args.eps, seed=args.seed, backend=args.backend, cache=args.cache,
                  progress=False if args.quiet else None, **method_params(args))
    line = (f"{r.method} P={r.P}: imbalance {r.imbalance:.4f} (by {r.weight}; vs average "
            f"{r.imbalance_vs_average:.4f}), {r.seconds:.2f} s{' (cached)' if r.cached else ''}")
    if A.shape[0] == A.shape[1]:
        s = comm_stats(A, r.parts, r.P).summary()
        line += (f"\nvolume (rows of B): total {s['volume_total']}, avg {s['volume_avg']:.1f}, max "
                 f"{s['volume_max']}; messages: total {s['messages_total']}, avg {s['messages_avg']:.1f}, "
                 f"max {s['messages_max']}")
    written = r.save(args.out) if args.out else None   # written before anything is printed
    print(line)
    if written:
        print(f"wrote {written}")
