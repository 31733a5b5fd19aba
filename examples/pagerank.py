"""PageRank with dangling nodes, the iteration a loop of the program (planned once, run without
returning to Python; under mpiexec every rank runs it on its rows).

    r' = d Aᵀ (r / outdeg) + (d dangling + 1 - d) / n,   until the L1 change is below tol

r / outdeg is an intersection: dangling nodes (their out-degree is missing) drop out of the
product, and their rank is spread evenly with the teleport term. The damping is folded into the
degrees once (w = r / (outdeg / d)), and the dangling nodes' weights into a sparse column
(d / n at each dangling node, computed once), so an iteration reads the dangling ranks alone and
adds the teleport term with them in one step. ``dtype="float32"`` computes as LAGraph's
LAGr_PageRank does.
"""
from __future__ import annotations

import sys

import numpy as np
from _common import arguments, load, say

import dspla as dp


def pagerank_function(damping: float = 0.85, tol: float = 1e-10, max_iter: int = 200,
                      dtype: str = "float64") -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    r0 = dp.dense("r0", ("n", 1), dtype)
    G = A if dtype == "float64" else dp.cast(A, dtype)   # (computed once, at planning)
    outdeg = dp.reduce_rows(G)                       # n x 1, missing for dangling nodes
    scaled = outdeg / damping
    ones = dp.apply(r0, "one")
    n = dp.reduce_all(ones)                          # 1 x 1: the number of nodes
    teleport = (1 - damping) / n
    sinks = dp.mask(ones, outdeg, complement=True, structure=True) * (damping / n)   # d / n where dangling

    def step(r, delta):
        w = r / scaled                               # d r / outdeg
        # teleport + d (the dangling nodes' rank) / n; with no dangling node the sum is missing
        # and the union keeps the teleport term alone
        spread = dp.ewise_union(dp.reduce_all(r * sinks), teleport, "plus", 0, 0)
        new = G.T @ w + spread
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
