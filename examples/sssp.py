"""Single-source shortest paths by Bellman-Ford over min_plus, as a loop of the program that
relaxes only the edges of the nodes whose distance changed in the last round (the frontier):
their distances pushed along their out-edges (fᵀ min.+ A, GraphBLAS's vxm: its work is the
frontier's edges), kept where they reach a node first or shorten its path. Unreached nodes have
no entry (no distance), not infinity."""
from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp
from _common import arguments, load, say

import dspla as dp

INF = float("inf")


def sssp_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))                  # A[u, v]: the length of u -> v
    s = dp.sparse("s", ("n", 1))
    d = s * 0

    def relax(d, frontier):
        reach = frontier.vxm(A, "min_plus")          # the least frontier distance + length, per node
        # better: reached for the first time (no d), or shorter than d
        better = dp.ewise_union(reach, d, "lt", INF, INF)
        improved = dp.mask(reach, better)
        return dp.update(d, improved, mask=improved, structure=True), improved

    (d, _), its = dp.while_loop(lambda d, frontier: dp.nvals(frontier) > 0, relax, (d, d), "n", count=True)
    return dp.function({"d": d, "iterations": its}, inputs=[A, s])


def sssp(adjacency, source: int, f=None):
    """(distances with inf where unreachable, iterations)."""
    f = f or sssp_function()
    n = adjacency.shape[0]
    out = f(A=adjacency, s=sp.csr_array(([1.0], ([source], [0])), shape=(n, 1)))
    return out["d"].to_numpy(fill=np.inf)[:, 0], int(out["iterations"].to_numpy()[0, 0])


def main():
    args = arguments(__doc__, lambda ap: ap.add_argument("--source", type=int, default=0))
    A = load(args, weights=True)
    dist, its = sssp(A, args.source)
    reached = np.isfinite(dist)
    say(f"SSSP from node {args.source} on {A.shape[0]} nodes: {int(reached.sum())} reached in {its} rounds, "
        f"farthest {dist[reached].max():.3f}")


if __name__ == "__main__":
    sys.exit(main())
