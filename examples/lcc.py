"""Local clustering coefficient of every node of the undirected graph (self-loops dropped):
2 t / (d (d - 1)) for a node on t triangles with d neighbours, 0 where d < 2 (networkx's
clustering). Each triangle is counted once for each of its nodes from two masked products over
the lower and upper triangles (graphblas-algorithms' formulation; examples/lcc.dspla)."""
from __future__ import annotations

import sys

import numpy as np
from _common import arguments, load, say

import dspla as dp


def lcc_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    S = dp.cast(dp.select(dp.ewise_add(A, A.T, "pair"), "offdiag"), "float64")
    L, U = dp.tril(S, -1), dp.triu(S, 1)
    C = dp.mxm(L, L.T, "plus_pair", mask=L, structure=True)    # triangle i < j < k: at (k, j), for k and j
    D = dp.mxm(U, L.T, "plus_pair", mask=U, structure=True)    # and at (i, k), for i
    t = C.reduce_rowwise() + C.reduce_columnwise() + D.reduce_rowwise()
    deg = S.reduce_rowwise()
    lcc = 2 * t / (deg * (deg - 1))
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
