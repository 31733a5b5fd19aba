"""Triangles of the undirected graph as LAGraph's Sandia LL method counts them: L = tril(A, -1)
of the undirected pattern, then the sum of C<L> = L plus.pair L, a scalar (0 with no triangle).
triangles.py is the same count (examples/triangles_ll.dspla)."""
from __future__ import annotations

import sys

from _common import arguments, load, say

import dspla as dp


def triangles_ll_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    L = dp.tril(dp.cast(dp.ewise_add(A, A.T, "pair"), "int64"), -1)
    C = dp.mxm(L, L, "plus_pair", mask=L, structure=True)
    return dp.function({"triangles": C.reduce_scalar() + 0 * dp.nvals(C)}, inputs=[A])


def triangles_ll(adjacency, f=None) -> int:
    return int((f or triangles_ll_function())(A=adjacency)["triangles"])


def main():
    args = arguments(__doc__)
    A = load(args)
    say(f"{triangles_ll(A)} triangles in {A.shape[0]} nodes, {A.nnz} edges (Sandia LL)")


if __name__ == "__main__":
    sys.exit(main())
