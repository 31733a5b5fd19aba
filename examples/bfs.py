"""Breadth-first search levels over any_pair with a complemented structural mask.

    next = (A^T any.pair frontier) masked by NOT visited
"""
from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

import dspla as dp


def bfs_step() -> dp.Function:
    A = dp.sparse("A", ("n", "n"), dtype="bool")
    frontier = dp.sparse("frontier", ("n", 1), dtype="bool")
    visited = dp.sparse("visited", ("n", 1), dtype="bool")
    nxt = dp.mask(dp.mxm(A.T, frontier, "any_pair"), visited, complement=True, structure=True)
    return dp.function(outputs={"next": nxt, "visited": dp.ewise_add(visited, nxt, "lor")})


def bfs_levels(adjacency, source: int):
    """Level of every node from ``source`` (-1 where unreachable)."""
    n = adjacency.shape[0]
    A = sp.csr_array(adjacency, dtype=bool)
    step = bfs_step()
    level = np.full(n, -1, dtype=np.int64)
    level[source] = 0
    frontier = sp.csr_array(([True], ([source], [0])), shape=(n, 1))
    visited = frontier
    depth = 0
    while frontier.nnz:
        depth += 1
        out = step(A=A, frontier=frontier, visited=visited)
        frontier, visited = out["next"].to_scipy(), out["visited"].to_scipy()
        level[out["next"].to_coo()[0]] = depth
    return level


def main(argv=None):
    from dspla.generate import rmat

    A = rmat(scale=14, edge_factor=8, seed=3, directed=False)
    level = bfs_levels(A, 0)
    print(f"BFS from node 0 on {A.shape[0]} nodes: {int((level >= 0).sum())} reached, depth {level.max()}")


if __name__ == "__main__":
    sys.exit(main())
