"""The k-truss of the undirected graph (self-loops dropped): the edges on at least k - 2 triangles
of the truss itself, found by removing the edges with less support until none is removed; the
result holds each edge, both ways, with its support (examples/ktruss.dspla)."""
from __future__ import annotations

import sys

from _common import arguments, load, say

import dspla as dp


def ktruss_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    k = dp.scalar("k", "int64")
    S = dp.cast(dp.select(dp.ewise_add(A, A.T, "pair"), "offdiag"), "int64")

    def peel(T, last):
        # support: the common neighbours of each edge's ends (an edge on no triangle has no entry)
        support = dp.mxm(T, T, "plus_pair", mask=T, structure=True)
        return dp.select(support, ">=", k - 2), dp.nvals(T)

    (T, _), its = dp.while_loop(lambda T, last: dp.nvals(T) < last, peel, (S, dp.nvals(S) + 1), "n", count=True)
    T = dp.ewise_add(T, dp.select(S * 0, ">=", k - 2), "first")   # k <= 2: the edges on no triangle, support 0
    return dp.function({"T": T, "iterations": its}, inputs=[A, k])


def ktruss(adjacency, k: int, f=None):
    """The k-truss as a scipy matrix of supports (both ways), and the number of rounds."""
    out = (f or ktruss_function())(A=adjacency, k=k)
    return out["T"].to_scipy(), int(out["iterations"].to_numpy()[0, 0])


def main():
    args = arguments(__doc__, lambda ap: ap.add_argument("--k", type=int, default=5))
    A = load(args)
    T, rounds = ktruss(A, args.k)
    say(f"{args.k}-truss of {A.shape[0]} nodes, {A.nnz} edges: {T.nnz // 2} edges in {rounds} rounds, "
        f"support {int(T.data.max()) if T.nnz else 0} at most")


if __name__ == "__main__":
    sys.exit(main())
