"""PageRank with dangling nodes, the iteration a loop of the program (planned once, run without
returning to Python; under mpiexec every rank runs it on its rows).

    r' = d Aᵀ (r / outdeg) + (d dangling + 1 - d) / n,   until the L1 change is below tol

r / outdeg is an intersection: dangling nodes (their out-degree is missing) drop out of the
product, and their rank is spread evenly with the teleport term. The damping is folded into the
degrees once (w = r / (outdeg / d)), so an iteration does not scale the product again.
"""
from __future__ import annotations

import sys

import numpy as np
from _common import arguments, load, say

import dspla as dp


def pagerank_function(damping: float = 0.85, tol: float = 1e-10, max_iter: int = 200) -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    r0 = dp.dense("r0", ("n", 1))
    outdeg = dp.reduce_rows(A)                       # n x 1, missing for dangling nodes
    scaled = outdeg / damping                        # computed once, at planning
    n = dp.reduce_all(dp.apply(r0, "one"))           # 1 x 1: the number of nodes

    def step(r, delta):
        w = r / scaled                               # d r / outdeg
        dangling = damping * dp.reduce_all(r) - dp.reduce_all(w * outdeg)   # d times the dangling rank
        new = A.T @ w + (dangling + (1 - damping)) / n
        return new, dp.reduce_all(dp.abs(new - r))

    r = r0 / dp.reduce_all(r0)
    (r, delta), its = dp.while_loop(lambda r, delta: delta > tol, step, (r, dp.reduce_all(r)), max_iter, count=True)
    return dp.function({"r": r, "delta": delta, "iterations": its}, inputs=[A, r0])


def pagerank(adjacency, damping: float = 0.85, tol: float = 1e-10, max_iter: int = 200, f=None):
    """(ranks as a numpy vector, iterations). Every rank calls it inside an MPI job."""
    f = f or pagerank_function(damping, tol, max_iter)
    out = f(A=adjacency, r0=np.ones((adjacency.shape[0], 1)))
    return out["r"].to_numpy()[:, 0], int(out["iterations"].to_numpy()[0, 0])


def main():
    args = arguments(__doc__)
    A = load(args)
    ranks, its = pagerank(A)
    top = np.argsort(-ranks)[:5]
    say(f"PageRank on {A.shape[0]} nodes, {A.nnz} edges: {its} iterations, sum {ranks.sum():.6f}")
    say("  top nodes:", ", ".join(f"{i} ({ranks[i]:.5f})" for i in top))


if __name__ == "__main__":
    sys.exit(main())
