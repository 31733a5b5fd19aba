"""Triangle count of the undirected graph: with L its strictly lower triangle, the entries of
L plus.pair L inside L's pattern, summed (a masked product: only those entries are computed;
on P processes L's rows move as their entries, by p2p1d's sparse exchange). ``undirected=True``
promises that A holds each edge both ways (as LAGraph's undirected graphs): it is then read as
it is, not symmetrised."""
from __future__ import annotations

import sys

from _common import arguments, load, say

import dspla as dp


def triangles_function(undirected: bool = False) -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    S = A if undirected else dp.ewise_add(A, A.T, "pair")   # an edge either way
    L = dp.cast(dp.select(S, "tril", -1), "int64")
    T = dp.mxm(L, L, "plus_pair", mask=L, structure=True)
    # a sum of no entries is missing (GraphBLAS): with no triangle the count is 0, made present here
    count = dp.reduce_all(T)
    return dp.function({"triangles": dp.ewise_add(count, dp.full(count, 0))}, inputs=[A])


def triangles(adjacency, f=None) -> int:
    f = f or triangles_function()
    return int(f(A=adjacency)["triangles"].to_numpy()[0, 0])


def main():
    args = arguments(__doc__)
    A = load(args)
    say(f"{triangles(A)} triangles in {A.shape[0]} nodes, {A.nnz} edges")


if __name__ == "__main__":
    sys.exit(main())
