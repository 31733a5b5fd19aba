"""What the algorithm examples share: reading a graph (or generating one) on every rank, and
printing on rank 0 only. Every rank runs the script (``mpiexec -n 4 python examples/bfs.py``)."""
from __future__ import annotations

import argparse

import dspla as dp


def arguments(doc: str, extra=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--graph", help="a graph file (.mtx, SNAP edge list, ...); default: a generated R-MAT graph")
    ap.add_argument("--scale", type=int, default=12, help="R-MAT scale of the generated graph (2**scale nodes)")
    if extra:
        extra(ap)
    return ap.parse_args()


def load(args, weights: bool = False):
    """The graph, on every rank (only rank 0's copy is read by dspla; the others' are not used)."""
    from dspla.formats.graph import load_graph
    from dspla.generate import rmat
    A = load_graph(args.graph, quiet=True).matrix if args.graph else rmat(scale=args.scale, edge_factor=8, seed=1,
                                                                     directed=True)
    if weights and not args.graph:
        A.data[:] = 1.0 + (A.indices % 7)   # deterministic lengths 1..7
    return A


def say(*text):
    comm = dp.world()
    if comm is None or comm.rank == 0:
        print(*text, flush=True)
