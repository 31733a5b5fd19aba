"""The gradient of a shortest-path distance with respect to the edge weights, by reverse mode
through Bellman-Ford over min_plus: the indicator of the edges on the shortest path (when it is
unique). min_plus routes each gradient to the winning term (docs/autodiff.md); ties go to the
lowest index.

The loop is unrolled in Python (loops of the program are not differentiated): ``rounds``
relaxations d' = min(d, Wᵀ min.+ d) reach every node within ``rounds`` edges.

    python examples/sssp_grad.py --scale 8            # the target: the farthest node reached
    python examples/sssp_grad.py --graph roads.mtx --source 0 --target 17
"""
from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp
from _common import arguments, load, say

import dspla as dp


def sssp_grad_function(rounds: int) -> dp.Function:
    W = dp.param("W", ("n", "n"), kind="sparse")   # W[u, v]: the length of u -> v (a parameter)
    s = dp.sparse("s", ("n", 1))                     # the source (one entry)
    t = dp.sparse("t", ("n", 1))                     # the target (one entry)
    WT = W.T
    d = s * 0
    for _ in range(rounds):
        d = dp.ewise_add(d, dp.mxv(WT, d, "min_plus"), "min")
    dist = dp.reduce_all(dp.mask(d, t, structure=True))   # d[target]: missing when unreachable
    return dp.function({"dist": dist, "dW": dp.grad(dist, W)})


def unit(n: int, i: int) -> sp.csr_array:
    return sp.csr_array(([1.0], ([i], [0])), shape=(n, 1))


def path_gradient(W, source: int, target: int, rounds: int | None = None, f=None):
    """(distance, dW as scipy CSR with W's pattern): dW[u, v] = 1 on the path's edges, else 0."""
    n = W.shape[0]
    f = f or sssp_grad_function(rounds or n - 1)
    out = f(W=W, s=unit(n, source), t=unit(n, target))
    dist = out["dist"].to_numpy(fill=np.inf)[0, 0]
    return dist, out["dW"].to_scipy()


def main():
    args = arguments(__doc__, lambda ap: (ap.add_argument("--source", type=int, default=0),
                                          ap.add_argument("--target", type=int,
                                                          help="default: the farthest node reached (sssp.py)"),
                                          ap.add_argument("--rounds", type=int, default=16)))
    W = load(args, weights=True)
    if args.target is None:
        from sssp import sssp
        d, _ = sssp(W, args.source)
        reach = np.flatnonzero(np.isfinite(d) & (np.arange(len(d)) != args.source))
        if not reach.size:
            say(f"node {args.source} reaches no other node")
            return 0
        args.target = int(reach[np.argmax(d[reach])])
    dist, dW = path_gradient(W, args.source, args.target, args.rounds)
    if not np.isfinite(dist):
        say(f"node {args.target} is not reached from {args.source} within {args.rounds} edges")
        return 0
    r, c = dW.nonzero()
    nxt, edges, u = dict(zip(r.tolist(), c.tolist())), [], args.source
    while u in nxt and len(edges) < len(nxt):   # the path, in order from the source
        edges.append((u, nxt[u]))
        u = nxt[u]
    say(f"distance {args.source} -> {args.target}: {dist:g}; d(distance)/d(weight) is 1 on {len(edges)} edges: "
        + ", ".join(f"{u}->{v}" for u, v in edges))
    return 0


if __name__ == "__main__":
    sys.exit(main())
