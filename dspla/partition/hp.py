"""HP: the column-net hypergraph model minimising connectivity-1 = exact volume (seed 000 §4.3.2)."""
from __future__ import annotations

import numpy as np

from .backends import BACKENDS, partition_hypergraph
from .balance import backend_eps
from .hypergraph import column_net
from .registry import Job, Method, register


def send_volumes(hg, parts: np.ndarray, P: int) -> np.ndarray:
    """Rows of B each process sends under ``parts``, from the hypergraph (net e's owner is its
    vertex ``owner[e]``, the diagonal pin). Used to rank trials; the analysis module is the
    reference for reporting."""
    net = np.repeat(np.arange(hg.num_nets, dtype=np.int64), np.diff(hg.ptr))
    key = np.sort(net * P + parts[hg.pins])
    key = key[np.r_[True, key[1:] != key[:-1]]]
    lam = np.bincount(key // P, minlength=hg.num_nets)
    return np.bincount(parts[hg.owner], weights=(lam - 1) * hg.net_weights, minlength=P)


def _hypergraph(job: Job) -> np.ndarray:
    A, P = job.A, job.P
    p = job.params
    with job.progress.phase("build column-net hypergraph"):
        w = np.maximum(job.row_nnz(), 1)  # KaHyPar needs weights >= 1; empty rows cost ~nothing
        hg = column_net(A, node_weights=w)
    job.info.update(nets=hg.num_nets, pins=hg.num_pins)
    eps_b = backend_eps(job.row_nnz(), P, job.eps)
    trials = max(1, int(p.get("trials", 1)))
    best, best_score = None, None
    for t in range(trials):
        seed = job.seed + 1000003 * t  # distinct, reproducible seeds per trial
        with job.progress.phase(f"{job.backend} KM1 P={P} (trial {t + 1}/{trials})"):
            parts = partition_hypergraph(hg, P, eps_b, seed, job.backend, p.get("preset"))
        km1 = hg.km1(parts)
        score = (km1,)
        if best_score is None or score < best_score:
            best, best_score = parts, score
        job.progress.note(f"trial {t + 1}: km1 {km1}")
    job.info["km1_model"] = int(best_score[0])
    return best


register(Method("hypergraph", _hypergraph, weight="nnz", backends=BACKENDS, params=("preset", "trials"),
                summary="column-net hypergraph, KM1 = exact volume, via Mt-KaHyPar or KaHyPar (HP)"))
