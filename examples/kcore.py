"""Core numbers of the undirected graph (self-loops dropped; networkx's core_number) by peeling,
level by level: at level k (the least degree left) remove every node of degree <= k, lower its
neighbours' degrees, and repeat until none is left at k (examples/kcore.dspla)."""
from __future__ import annotations

import sys

import numpy as np
from _common import arguments, load, say

import dspla as dp


def kcore_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    S = dp.cast(dp.select(dp.ewise_add(A, A.T, "pair"), "offdiag"), "int64")
    deg = dp.ewise_add(S.reduce_rowwise(), dp.full(dp.eye("n", "int64").reduce_rowwise(), 0))  # 0: isolated
    core = dp.select(deg, "<", 0)                   # empty: no node has its core number yet

    def level(deg, core, k):
        k = deg.reduce_scalar("min")

        def peel(deg, core, peel):
            core = dp.update(core, k, mask=peel, structure=True)
            deg = dp.mask(deg, peel, complement=True, structure=True)
            deg = dp.update(deg, dp.vxm(peel, S, "plus_pair"), accum="minus", mask=deg, structure=True)
            return deg, core, dp.select(deg, "<=", k)

        deg, core, _ = dp.while_loop(lambda d, c, p: dp.nvals(p) > 0, peel, (deg, core, dp.select(deg, "<=", k)), "n")
        return deg, core, k

    _, core, _ = dp.while_loop(lambda d, c, k: dp.nvals(d) > 0, level, (deg, core, dp.nvals(deg) * 0), "n")
    return dp.function({"core": core}, inputs=[A])


def core_numbers(adjacency, f=None) -> np.ndarray:
    return (f or kcore_function())(A=adjacency)["core"].to_numpy()


def main():
    args = arguments(__doc__)
    A = load(args)
    core = core_numbers(A)
    say(f"core numbers on {A.shape[0]} nodes, {A.nnz} edges: the largest {core.max()}, "
        f"{int((core == core.max()).sum())} nodes in that core")


if __name__ == "__main__":
    sys.exit(main())
