"""Single-source shortest paths over min_plus (Bellman-Ford), driven from Python.

    d' = min(d, A^T min.+ d)

``d`` is a sparse n x 1 vector: a missing entry means "not reached yet" (not zero, not a
large number). The loop stops at the fixed point, when an iteration changes nothing.
"""
from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

import dspla as dp


def sssp_step() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))                 # A[i, j] = weight of edge i -> j
    d = dp.sparse("d", ("n", 1))
    relaxed = dp.ewise_add(d, dp.mxm(A.T, d, "min_plus"), "min")
    changed = dp.reduce_all(dp.ewise_add(relaxed, d, "ne"), "lor")  # an entry new or different
    return dp.function(outputs={"d": relaxed, "changed": changed})


def sssp(adjacency, source: int, max_iter: int | None = None):
    """Distances from ``source`` as a float vector with inf where unreachable, and iterations."""
    n = adjacency.shape[0]
    step = sssp_step()
    d = sp.csr_array(([0.0], ([source], [0])), shape=(n, 1))
    for it in range(1, (max_iter or n) + 1):  # noqa: B007 - the count is returned
        out = step(A=adjacency, d=d)
        d = out["d"].to_scipy()
        if not out["changed"].to_numpy(fill=False)[0, 0]:
            break
    dist = out["d"].to_numpy(fill=np.inf)[:, 0]
    return dist, it


def main(argv=None):
    from dspla.generate import rmat

    A = rmat(scale=12, edge_factor=8, seed=2, directed=True)
    rng = np.random.default_rng(0)
    A = sp.csr_array((rng.uniform(1, 10, A.nnz), A.indices, A.indptr), shape=A.shape)
    dist, iters = sssp(A, 0)
    reach = np.isfinite(dist)
    print(f"SSSP (min_plus) from node 0 on {A.shape[0]} nodes / {A.nnz} weighted edges: {iters} iterations, "
          f"{reach.sum()} reached, max distance {dist[reach].max():.3f}")


if __name__ == "__main__":
    sys.exit(main())
