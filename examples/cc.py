"""Connected components of the undirected graph, as a loop of the program; a node's label is the
least node number of its component. Two methods:

- ``lp`` (default): label propagation over min_second with pointer jumping: every node takes the
  least label of itself and its neighbours, then its label's label (the shortcut of FastSV: A
  Distributed-Memory Connected Component Algorithm with Fast Convergence), until nothing changes.
  A label is always a node of the same component and never grows, so the shortcut keeps the
  answer and cuts the rounds where labels form chains (soc-Slashdot0902: 4 against 9), but a
  graph of long paths (roads, meshes) still takes about a round per node of its diameter.
- ``fastsv``: FastSV itself: each node's parent hooks onto the least grandparent among the node's
  neighbours (stochastic hooking, a scatter with min), the node takes that grandparent too
  (aggressive hooking) and its own grandparent (shortcutting): about log2 n rounds on any graph
  (luxembourg_osm: 11 against 199), each costing more than a round of ``lp``.

``undirected=True`` promises that A holds each edge both ways (as LAGraph's undirected graphs): it
is then read as it is, not symmetrised."""
from __future__ import annotations

import sys

import numpy as np
from _common import arguments, load, say

import dspla as dp

METHODS = ("lp", "fastsv")


def cc_function(undirected: bool = False, method: str = "lp") -> dp.Function:
    if method not in METHODS:
        raise ValueError(f"method {method!r}: one of {', '.join(METHODS)}")
    A = dp.sparse("A", ("n", "n"))
    S = A if undirected else dp.ewise_add(A, A.T, "pair")   # an edge either way (pair: the pattern only)
    S = dp.cast(S, "bool")
    labels = dp.apply(dp.reduce_rows(dp.eye("n")), "rowindex")   # node i: label i
    start = dp.reduce_all(labels, "min") >= 0                   # (true: the loop runs once at least)
    if method == "fastsv":
        return _fastsv(S, labels, start, A)

    def propagate(labels, changed):
        new = dp.ewise_add(labels, dp.mxm(S, labels, "min_second"), "min")
        new = dp.gather(new, new)   # each node's label's label: the same component, no larger
        return new, dp.reduce_all(new < labels, "lor")

    (labels, _), its = dp.while_loop(lambda labels, changed: changed, propagate, (labels, start), "n", count=True)
    return dp.function({"labels": labels, "iterations": its}, inputs=[A])


def _fastsv(S, f, start, A) -> dp.Function:
    """f: each node's parent, gf its grandparent; the labels are the grandparents once no
    grandparent changes (then every tree is a star on its component's least node)."""
    zero = f * 0   # (build's column numbers: a column of parents)

    def step(f, gf, changed):
        mngf = dp.mxm(S, gf, "min_second")   # the least grandparent among each node's neighbours
        f = dp.ewise_add(f, dp.build(f, zero, mngf, ("n", 1), dup_op="min"), "min")   # f[f[u]] min= mngf[u]
        f = dp.ewise_add(dp.ewise_add(f, mngf, "min"), gf, "min")                     # f[u] min= mngf[u], gf[u]
        new = dp.gather(f, f)
        return f, new, dp.reduce_all(new < gf, "lor")

    (_, labels, _), its = dp.while_loop(lambda f, gf, changed: changed, step, (f, f, start), "n", count=True)
    return dp.function({"labels": labels, "iterations": its}, inputs=[A])


def components(adjacency, f=None):
    """(label of every node, number of components)."""
    f = f or cc_function()
    labels = f(A=adjacency)["labels"].to_numpy()[:, 0]
    return labels, int(np.unique(labels).size)


def main():
    args = arguments(__doc__, lambda ap: ap.add_argument("--method", choices=METHODS, default="lp"))
    A = load(args)
    labels, k = components(A, cc_function(method=args.method))
    sizes = np.bincount(np.unique(labels, return_inverse=True)[1])
    say(f"{k} connected components on {A.shape[0]} nodes; the largest has {sizes.max()} nodes")


if __name__ == "__main__":
    sys.exit(main())
