"""SHP: the stochastic hypergraph model for mini-batch training (Demirci et al. §4.3.3, Algorithm 3).

b mini-batches are sampled; each gives the column-net hypergraph of its computation subgraph; the
union of their nets over all n vertices is partitioned, which minimises the expected volume of a
random mini-batch. b is the smallest number of batches whose nets reach eq. 14:
|N| >= (P - 1)^2 ln(2 / delta) / (2 error^2), the Hoeffding bound for estimating the expected
connectivity within ``error`` with probability 1 - delta.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import PlanError
from .backends import BACKENDS, partition_hypergraph
from .balance import backend_eps
from .hypergraph import Hypergraph, drop_small_nets
from .registry import Job, Method, register


def nets_needed(P: int, error: float = 1.0, delta: float = 0.05) -> int:
    """Eq. 14 of Demirci et al.: nets needed to estimate the expected connectivity within ``error``
    (in parts) with confidence 1 - delta."""
    if error <= 0 or not 0 < delta < 1:
        raise PlanError(f"need error > 0 and 0 < delta < 1, got error={error}, delta={delta}")
    return max(1, math.ceil((P - 1) ** 2 * math.log(2.0 / delta) / (2.0 * error ** 2)))


@dataclass(frozen=True)
class UniformNodeSampler:
    """A mini-batch: ``batch_size`` target vertices drawn uniformly without replacement, with their
    ``hops``-hop out-neighbourhood. Returns the batch's computation subgraph as the rows it computes
    (targets and their neighbours up to hops-1) and the nonzeros of A those rows read."""

    batch_size: int = 1024
    hops: int = 1

    def __call__(self, A: sp.csr_matrix, rng: np.random.Generator) -> sp.csr_matrix:
        n = A.shape[0]
        rows = rng.choice(n, size=min(self.batch_size, n), replace=False)
        active = np.zeros(n, dtype=bool)
        active[rows] = True
        for _ in range(self.hops - 1):  # rows computed at earlier layers
            active[A[np.flatnonzero(active)].indices] = True
        # the rows of A that the batch computes, others emptied (shape stays n x n)
        sel = np.repeat(active, np.diff(A.indptr))
        indptr = np.r_[0, np.cumsum(np.diff(A.indptr) * active)]
        return sp.csr_matrix((A.data[sel], A.indices[sel], indptr), shape=A.shape)


def _batch_nets(S: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Column-net pins of a subgraph S (n x n, zero rows outside the batch), plus vertex j on net j
    (the owner of row j of the dense operand), single-pin nets dropped."""
    S = sp.csr_matrix(S)
    n = S.shape[0]
    C = S.tocsc()
    used = np.flatnonzero(np.diff(C.indptr) > 0)
    rows = np.r_[C.indices.astype(np.int64), used]
    cols = np.r_[np.repeat(np.arange(n, dtype=np.int64), np.diff(C.indptr)), used]
    key = np.sort(cols * n + rows)
    key = key[np.r_[True, key[1:] != key[:-1]]] if key.size else key
    net = key // n
    ptr = np.r_[0, np.cumsum(np.bincount(net, minlength=n))].astype(np.int64)
    ptr, pins, _ = drop_small_nets(ptr, key % n, np.ones(n, dtype=np.int64))
    return ptr, pins


def stochastic_hypergraph(A: sp.csr_matrix, P: int, rng: np.random.Generator, sampler=None, error: float = 1.0,
                          delta: float = 0.05, max_batches: int = 1000, progress=None) -> tuple[Hypergraph, int, int]:
    """Merge the hypergraphs of sampled batches until eq. 14's net count is reached.

    Returns (hypergraph over all n rows, batches b, nets required)."""
    sampler = sampler or UniformNodeSampler()
    need = nets_needed(P, error, delta)
    ptrs, pinss, have, b = [], [], 0, 0
    while have < need and b < max_batches:
        ptr, pins = _batch_nets(sampler(A, rng))
        b += 1
        if ptr.size > 1:
            ptrs.append(ptr[1:] + sum(p.size for p in pinss))
            pinss.append(pins)
            have += ptr.size - 1
        if progress is not None and b % 50 == 0:
            progress.note(f"{b} batches, {have}/{need} nets")
    pins = np.concatenate(pinss) if pinss else np.zeros(0, dtype=np.int64)
    ptr = np.r_[0, np.concatenate(ptrs)].astype(np.int64) if ptrs else np.zeros(1, dtype=np.int64)
    w = np.maximum(np.diff(A.indptr), 1).astype(np.int64)
    hg = Hypergraph(n=A.shape[0], ptr=ptr, pins=pins, node_weights=w,
                    net_weights=np.ones(ptr.size - 1, dtype=np.int64))
    return hg, b, need


def _shp(job: Job) -> np.ndarray:
    n, m = job.A.shape
    if n != m:
        raise PlanError(f"the stochastic hypergraph model samples a graph: A must be square, got {n}x{m}")
    p = job.params
    sampler = p.get("sampler") or UniformNodeSampler(int(p.get("batch_size", max(1, min(1024, n // 10)))),
                                                     int(p.get("hops", 1)))
    rng = np.random.default_rng(job.seed)
    with job.progress.phase("sample mini-batches"):
        hg, b, need = stochastic_hypergraph(job.A, job.P, rng, sampler, float(p.get("error", 1.0)),
                                            float(p.get("delta", 0.05)), int(p.get("max_batches", 1000)),
                                            job.progress)
    job.info.update(batches=b, nets_required=need, nets=hg.num_nets, pins=hg.num_pins)
    with job.progress.phase(f"partition stochastic hypergraph ({job.backend}), P={job.P}"):
        eps_b = backend_eps(np.diff(job.A.indptr), job.P, job.eps, hg.node_weights)
        return partition_hypergraph(hg, job.P, eps_b, job.seed, job.backend, p.get("preset"))


register(Method("stochastic-hypergraph", _shp, weight="nnz", square_only=True, backends=BACKENDS,
                params=("sampler", "batch_size", "hops", "error", "delta", "max_batches", "preset"),
                summary="merged hypergraphs of sampled mini-batches (SHP, eq. 14 picks b)"))
