"""PageRank over plus_times, driven from Python: one dspla step function, iterated to tolerance.

    r' = d * A^T (r / outdeg) + (1 - d * sum of r over nodes with out-edges) / n

Dangling nodes (no out-edges) have a missing out-degree, so ``r / outdeg`` (an intersection)
drops them, and their rank is spread evenly through the teleport term. Every quantity is
a dspla expression; Python only loops.
"""
from __future__ import annotations

import sys

import numpy as np

import dspla as dp


def pagerank_step(damping: float = 0.85) -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    r = dp.dense("r", ("n", 1))
    outdeg = dp.reduce_rows(A, "plus")                        # n x 1, missing for dangling nodes
    n = dp.reduce_all(dp.apply(r, "one"))                     # 1 x 1: the number of nodes
    live = dp.reduce_all(dp.ewise_mult(r, outdeg, "first"))   # rank held by nodes with out-edges
    teleport = (1 - damping * live) / n                       # 1 x 1
    r_new = damping * (A.T @ (r / outdeg)) + teleport        # the 1 x 1 broadcasts over the union
    delta = dp.reduce_all(dp.abs(r_new - r), "plus")
    return dp.function(outputs={"r": r_new, "delta": delta}, inputs=[A, r])


def pagerank(adjacency, damping: float = 0.85, tol: float = 1e-10, max_iter: int = 200):
    """Returns (ranks as a numpy vector, iterations)."""
    step = pagerank_step(damping)
    n = adjacency.shape[0]
    r = np.full((n, 1), 1.0 / n)
    for it in range(1, max_iter + 1):
        out = step(A=adjacency, r=r)
        r = out["r"].to_numpy()
        if out["delta"].to_numpy()[0, 0] < tol:
            return r[:, 0], it
    return r[:, 0], max_iter


def main(argv=None):
    from dspla.generate import rmat

    A = rmat(scale=14, edge_factor=8, seed=1, directed=True)
    ranks, iters = pagerank(A)
    top = np.argsort(-ranks)[:5]
    print(f"PageRank on an R-MAT graph ({A.shape[0]} nodes, {A.nnz} edges): {iters} iterations, "
          f"sum {ranks.sum():.6f}")
    print("  top nodes:", ", ".join(f"{i} ({ranks[i]:.5f})" for i in top))
    print(pagerank_step().explain())


if __name__ == "__main__":
    sys.exit(main())
