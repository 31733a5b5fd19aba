"""A maximal independent set of the undirected graph (self-loops dropped) by Luby's algorithm:
each candidate draws a random score (a function of seed, iteration and node only: the same set on
any number of processes); one that beats all its candidate neighbours joins the set, and it and
its neighbours stop being candidates. Isolated nodes join at once (examples/mis.dspla)."""
from __future__ import annotations

import sys

import numpy as np
from _common import arguments, load, say

import dspla as dp


def mis_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    seed = dp.scalar("seed", "int64")
    S = dp.cast(dp.select(dp.ewise_add(A, A.T, "pair"), "offdiag"), "bool")
    deg = S.reduce_rowwise("lor")                                     # true on the nodes with a neighbour
    nodes = dp.cast(dp.eye("n"), "bool").reduce_rowwise("lor")        # every node, true
    iset = dp.mask(nodes, deg, complement=True, structure=True)       # isolated nodes
    candidates = dp.mask(nodes, deg, structure=True)

    def step(iset, candidates, i):
        score = dp.random(candidates, seed + i)
        best = dp.mxv(S, score, "max_second", mask=candidates, structure=True)   # the best candidate neighbour's
        new = dp.mask(candidates, dp.ewise_union(score, best, "gt", 0.0, -1.0))  # beats it, or has none
        iset = dp.ewise_add(iset, new, "lor")
        taken = dp.ewise_add(new, dp.mxv(S, new, "any_pair", mask=candidates, structure=True), "lor")
        return iset, dp.mask(candidates, taken, complement=True, structure=True), i + 1

    (iset, _, _), its = dp.while_loop(lambda s, c, i: dp.nvals(c) > 0, step, (iset, candidates, seed * 0), "n",
                                      count=True)
    return dp.function({"iset": iset, "iterations": its}, inputs=[A, seed])


def independent_set(adjacency, seed: int = 1, f=None) -> np.ndarray:
    """Whether each node is in the set (a bool numpy vector)."""
    return (f or mis_function())(A=adjacency, seed=seed)["iset"].to_numpy(fill=False)


def main():
    args = arguments(__doc__, lambda ap: ap.add_argument("--seed", type=int, default=1))
    A = load(args)
    iset = independent_set(A, args.seed)
    say(f"maximal independent set of {A.shape[0]} nodes, {A.nnz} edges (seed {args.seed}): {int(iset.sum())} nodes, "
        f"the first {', '.join(map(str, np.flatnonzero(iset)[:8]))}")


if __name__ == "__main__":
    sys.exit(main())
