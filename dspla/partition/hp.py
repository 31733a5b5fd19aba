"""HP: the column-net hypergraph model minimising connectivity-1 = exact volume (Demirci et al. §4.3.2).

Defaults chosen by measurement (docs/partitioning.md): Mt-KaHyPar's ``quality`` preset, one
trial, then the bottleneck refinement (refine.py), which lowers the largest per-process send
volume and message count for at most 1 % more total volume. ``trials`` > 1 partitions with
several seeds in parallel worker processes and keeps the trial with the lowest score
(average + maximum rows sent per process, plus ``msg_weight`` x (average + maximum messages)).
"""
from __future__ import annotations

import numpy as np

from ..analysis import comm_stats
from .backends import BACKENDS, partition_hypergraph_many
from .balance import backend_eps
from .hypergraph import column_net
from .refine import refine_bottleneck
from .registry import Job, Method, register

DEFAULT_PRESET = {"mtkahypar": "quality", "kahypar": "km1_kway"}


def score(A, parts, P: int, msg_weight: float = 4.0) -> float:
    s = comm_stats(A, parts, P).summary()
    return s["volume_avg"] + s["volume_max"] + msg_weight * (s["messages_avg"] + s["messages_max"])


def _hypergraph(job: Job) -> np.ndarray:
    A, P, p = job.A, job.P, job.params
    square = A.shape[0] == A.shape[1]
    w = job.row_nnz()
    with job.progress.phase("build column-net hypergraph"):
        hg = column_net(A, node_weights=np.maximum(w, 1))  # KaHyPar needs weights >= 1
    job.info.update(nets=hg.num_nets, pins=hg.num_pins)
    trials = max(1, int(p.get("trials", 1)))
    preset = p.get("preset") or DEFAULT_PRESET[job.backend]
    seeds = [job.seed + 1000003 * t for t in range(trials)]  # distinct, reproducible
    eps_b = backend_eps(w, P, job.eps, hg.node_weights)
    with job.progress.phase(f"{job.backend} ({preset}) KM1, P={P}, {trials} trial(s)"):
        results = partition_hypergraph_many(hg, P, eps_b, seeds, job.backend, preset)
    refine = bool(p.get("refine", True)) and square
    bound = (1.0 + job.eps) * w.sum() / P
    best, best_score = None, None
    for _t, parts in enumerate(results):
        if refine:
            parts, rinfo = refine_bottleneck(A, parts, w, P, bound, km1_budget=float(p.get("km1_budget", 0.01)),
                                             time_limit=float(p.get("refine_seconds", 60.0)), progress=job.progress)
            job.info.setdefault("refinement", []).append(rinfo)
        sc = score(A, parts, P) if trials > 1 else 0.0
        if best_score is None or sc < best_score:
            best, best_score = parts, sc
    job.info["preset"] = preset
    return best


register(Method("hypergraph", _hypergraph, weight="nnz", backends=BACKENDS,
                params=("preset", "trials", "refine", "km1_budget", "refine_seconds"),
                summary="column-net hypergraph, KM1 = exact volume, Mt-KaHyPar or KaHyPar, "
                        "then bottleneck refinement (HP)"))
