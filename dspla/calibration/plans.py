"""Every plan run on generated graphs, timed, with the cost model's counts of each: the records
the end-to-end refit (``dspla.costmodel.fit.refit``) fits the coefficients to."""
from __future__ import annotations

import gc

import numpy as np

from ..errors import DsplaError
from ..frontend.dsl import dense, sparse
from ..function import function
from ..generate import erdos_renyi, random_geometric, rmat
from ..plan.options import Options
from ..plan.plans import plan_names
from ..session import DistSession


def _graphs(quick: bool):
    n = 1 << (13 if quick else 14)
    out = [("rmat", rmat(13 if quick else 14, 8, seed=1), "random"),
           ("geometric", random_geometric(n, avg_degree=10, seed=2), "block"),
           ("erdos", erdos_renyi(n, 6, seed=3), "random"),
           # a communication-aware partition, as real runs use: p2p1d then moves little
           ("rmat-hp", rmat(13 if quick else 14, 8, seed=5), "hypergraph"),
           # few entries per row, numbered along space (a road network or a mesh as files hold
           # them): the per-output-row terms (delta, beta_fill) then weigh as much as the
           # per-entry one (gamma), which graphs of 6-10 entries per row cannot tell apart
           ("geometric-local", _spatial(random_geometric(n, avg_degree=3, seed=4, return_coords=True)), "block")]
    return out


def _spatial(graph):
    """The graph renumbered in the order of its points along rows of cells of the unit square."""
    A, pts = graph
    side = max(1, int(np.sqrt(A.shape[0] / 4)))
    cell = np.minimum((pts * side).astype(np.int64), side - 1)
    order = np.lexsort((pts[:, 0], cell[:, 0], cell[:, 1]))
    return A[order][:, order].tocsr()


def plan_runs(comm, quick: bool = False, say=None, repeat: int = 3) -> list | None:
    """Every plan on each generated graph and K, on this communicator. Rank 0 returns records
    {graph, K, plan, counts (per rank), measured_s (median iteration)}; the others None."""
    A_ = sparse("A", ("n", "n"))
    X_ = dense("X", ("n", "k"))
    f = function(outputs={"C": A_ @ X_})
    rng = np.random.default_rng(0)
    records = []
    Ks = (16, 64) if quick else (16, 64, 256)
    for gname, A, part in _graphs(quick):
        for K in Ks:
            X = rng.random((A.shape[0], K)) if comm.rank == 0 else None
            for plan in plan_names():   # (every plan explain prices, auto's or asked for by name)
                opts = Options(plan=plan, partition=part, seed=0, replication=2 if comm.size % 2 == 0 else 1,
                               cache=True, progress=False)
                s = DistSession(f.compiled, comm, opts)
                inputs = {"A": A, "X": X} if comm.rank == 0 else None
                try:
                    s.run(inputs, repeat=1)                     # plans: a plan that cannot run here is refused
                except DsplaError:   # (on every rank alike: 2d at a P that is not square)
                    continue
                s.run(inputs, repeat=repeat)
                if comm.rank == 0:
                    info = s.plan.products[0]
                    if info.plan == plan and plan in info.counts:
                        records.append({"graph": gname, "K": K, "plan": plan, "counts": info.counts[plan],
                                        "measured_s": s.last_stats["iteration_s_median"]})
                if hasattr(s, "runtime") and s.runtime is not None:
                    s.runtime.close()
                del s
                gc.collect()   # (the session's plan and matrices sit in reference cycles: freed now)
            if say:
                say(f"plans on {gname} (n={A.shape[0]}, nnz={A.nnz}), K={K}")
    return records if comm.rank == 0 else None


