"""Single-source shortest paths by Bellman-Ford over min_plus, to a fixed point, as a loop of the
program: d' = min(d, Aᵀ min.+ d). Unreached nodes have no entry (no distance), not infinity."""
from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp
from _common import arguments, load, say

import dspla as dp


def sssp_function() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))                  # A[u, v]: the length of u -> v
    s = dp.sparse("s", ("n", 1))
    AT = A.T
    d = s * 0
    def relax(d, reached, changed):
        new = dp.ewise_add(d, dp.mxm(AT, d, "min_plus"), "min")
        # a change: a node reached for the first time, or a shorter path to one reached before
        now = dp.nvals(new)               # entries present, as 1 x 1
        changed = dp.ewise_add(now > reached, dp.reduce_all(new < d, "lor"), "lor")
        return new, now, changed

    (d, _, _), its = dp.while_loop(lambda d, reached, changed: changed, relax, (d, dp.nvals(d), dp.nvals(d) > 0), "n",
                                   count=True)
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
