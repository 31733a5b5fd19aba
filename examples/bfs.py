"""Breadth-first search levels as a loop of the program: each level is Aᵀ any.pair frontier,
masked by the complement of the nodes with a level (only unvisited nodes are computed; on one
process the frontier is pushed or pulled by its size), written into the levels in place, on one
process or on every rank of an MPI job (the frontier moves as its present entries only)."""
from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp
from _common import arguments, load, say

import dspla as dp


def bfs_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    s = dp.sparse("s", ("n", 1), "bool")               # the sources
    AT = dp.cast(A.T, "bool")
    levels = dp.cast(s, "int64") * 0
    depth = dp.reduce_all(levels, "max")

    def level(frontier, levels, depth):
        depth = depth + 1
        frontier = dp.mxm(AT, frontier, "any_pair", mask=levels, complement=True, structure=True)
        levels = dp.update(levels, depth, mask=frontier, structure=True)
        return frontier, levels, depth

    (_, levels, depth), its = dp.while_loop(lambda f, lv, d: dp.nvals(f) > 0, level,
                                            (s, levels, depth), "n", count=True)
    return dp.function({"levels": levels, "iterations": its}, inputs=[A, s])


def bfs_levels(adjacency, source: int, f=None) -> np.ndarray:
    """Level of every node from ``source`` (-1 where unreachable)."""
    f = f or bfs_function()
    n = adjacency.shape[0]
    s = sp.csr_array(([True], ([source], [0])), shape=(n, 1))
    return f(A=adjacency, s=s)["levels"].to_numpy(fill=-1)[:, 0]


def main():
    args = arguments(__doc__, lambda ap: ap.add_argument("--source", type=int, default=0))
    A = load(args)
    level = bfs_levels(A, args.source)
    say(f"BFS from node {args.source} on {A.shape[0]} nodes: {int((level >= 0).sum())} reached, "
        f"depth {level.max()}")


if __name__ == "__main__":
    sys.exit(main())
