"""Local clustering coefficient of every node of the undirected graph (self-loops dropped):
2 t / (d (d - 1)) for a node on t triangles with d neighbours, 0 where d < 2 (networkx's
clustering). The triangles on each edge come from one masked product (examples/lcc.dspla)."""
from __future__ import annotations

import sys

import numpy as np
from _common import arguments, load, say

import dspla as dp


def lcc_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    S = dp.cast(dp.select(dp.ewise_add(A, A.T, "pair"), "offdiag"), "float64")
    deg = S.reduce_rowwise()
    C = dp.mxm(S, S, "plus_pair", mask=S, structure=True)      # C[i, j]: the triangles on edge (i, j)
    lcc = C.reduce_rowwise() / (deg * (deg - 1))
    zeros = dp.full(dp.eye("n").reduce_rowwise(), 0.0)
    return dp.function({"lcc": dp.ewise_add(lcc, zeros, "first")}, inputs=[A])


def lcc(adjacency, f=None) -> np.ndarray:
    return (f or lcc_function())(A=adjacency)["lcc"].to_numpy()


def main():
    args = arguments(__doc__)
    A = load(args)
    c = lcc(A)
    say(f"local clustering on {A.shape[0]} nodes, {A.nnz} edges: mean {c.mean():.6f}, "
        f"{int((c == 1).sum())} nodes at 1, {int((c == 0).sum())} at 0")


if __name__ == "__main__":
    sys.exit(main())
