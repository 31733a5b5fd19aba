"""Connected components of the undirected graph by label propagation over min_second with
pointer jumping, as a loop of the program: every node takes the least label of itself and its
neighbours, then its label's label (the shortcut of FastSV: A Distributed-Memory Connected
Component Algorithm with Fast Convergence), until nothing changes; a node's label is then the
least node number of its component. A label is always a node of the same component and never
grows, so the shortcut keeps the answer and cuts the rounds (soc-Slashdot0902: 4 against 9).
``undirected=True`` promises that A holds each edge both ways (as LAGraph's undirected
graphs): it is then read as it is, not symmetrised."""
from __future__ import annotations

import sys

import numpy as np
from _common import arguments, load, say

import dspla as dp


def cc_function(undirected: bool = False) -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    S = A if undirected else dp.ewise_add(A, A.T, "pair")   # an edge either way (pair: the pattern only)
    S = dp.cast(S, "bool")
    labels = dp.apply(dp.reduce_rows(dp.eye("n")), "rowindex")   # node i: label i

    def propagate(labels, changed):
        new = dp.ewise_add(labels, dp.mxm(S, labels, "min_second"), "min")
        new = dp.gather(new, new)   # each node's label's label: the same component, no larger
        return new, dp.reduce_all(new < labels, "lor")

    (labels, _), its = dp.while_loop(lambda labels, changed: changed, propagate,
                                     (labels, dp.reduce_all(labels, "min") >= 0), "n", count=True)
    return dp.function({"labels": labels, "iterations": its}, inputs=[A])


def components(adjacency, f=None):
    """(label of every node, number of components)."""
    f = f or cc_function()
    labels = f(A=adjacency)["labels"].to_numpy()[:, 0]
    return labels, int(np.unique(labels).size)


def main():
    args = arguments(__doc__)
    A = load(args)
    labels, k = components(A)
    sizes = np.bincount(np.unique(labels, return_inverse=True)[1])
    say(f"{k} connected components on {A.shape[0]} nodes; the largest has {sizes.max()} nodes")


if __name__ == "__main__":
    sys.exit(main())
