"""Betweenness centrality by batched Brandes: one BFS from every source at once counts shortest
paths level by level, then the dependencies are accumulated from the deepest level back
(examples/betweenness.dspla has the definition). Unnormalised, over the directed paths of A;
an undirected graph counts each pair from both ends (networkx's value times 2)."""
from __future__ import annotations

import sys

import numpy as np
from _common import arguments, load, say

import dspla as dp


def betweenness_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    sources = dp.vector("sources", "ns", "int64")
    # paths[i, v]: the number of shortest paths from sources[i] to v found so far
    paths = dp.build(dp.apply(sources, "rowindex"), sources, dp.cast(dp.apply(sources, "one"), "float64"), "ns", "n")
    frontier = dp.mxm(paths, A, "plus_first", mask=paths, complement=True, structure=True)

    def forward(frontier, paths, levels):   # levels: each depth's frontier, the deepest on top
        levels = dp.push(levels, frontier)
        paths = dp.update(paths, frontier, accum="plus")         # paths += frontier (in place)
        frontier = dp.mxm(frontier, A, "plus_first", mask=paths, complement=True, structure=True)
        return frontier, paths, levels

    _, paths, levels = dp.while_loop(lambda f, p, lv: dp.nvals(f) > 0, forward, (frontier, paths, dp.stack(paths)),
                                     "n")

    def backward(bc, here, levels):   # bc[i, v] = 1 + the dependency of sources[i] on v
        above = dp.top(levels)                                      # the nodes one level up
        w = dp.mask(bc / paths, here, structure=True)
        up = dp.mxm(w, A.T, "plus_first", mask=above, structure=True)
        return dp.update(bc, up * paths, accum="plus"), above, dp.pop(levels)

    bc, _, _ = dp.while_loop(lambda bc, h, lv: dp.height(lv) > 1, backward,
                             (dp.full(paths, 1.0), dp.top(levels), dp.pop(levels)), "n")
    return dp.function({"centrality": bc.reduce_columnwise() - dp.nvals(sources)}, inputs=[A, sources])


def betweenness(adjacency, sources, f=None) -> np.ndarray:
    """The centrality of every node from ``sources`` (node ids; a batch)."""
    f = f or betweenness_function()
    return f(A=adjacency, sources=np.asarray(sources, dtype=np.int64))["centrality"].to_numpy()


def main():
    args = arguments(__doc__, lambda ap: ap.add_argument("--sources", type=int, default=32,
                                                         help="how many sources: nodes 0, 1, ..."))
    A = load(args)
    c = betweenness(A, np.arange(min(args.sources, A.shape[0])))
    top = np.argsort(-c, kind="stable")[:5]
    say(f"betweenness from {min(args.sources, A.shape[0])} sources on {A.shape[0]} nodes, {A.nnz} edges")
    say("  top nodes:", ", ".join(f"{i} ({c[i]:.6g})" for i in top))


if __name__ == "__main__":
    sys.exit(main())
