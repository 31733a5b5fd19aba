"""Row (vertex) partitions from an edge partition, for the vertexcut plan: ``spac`` and
``hypergraph-edge`` partition the edges (Schlag, Schulz, Seemaier, Strash, "Scalable Edge
Partitioning"), then give each vertex to the part holding most of its edges, so that the
partial rows a vertex's other parts compute travel to one of them."""
from __future__ import annotations

import numpy as np

from .edge import edge_partition
from .registry import Method, register

EDGE_OF = {"spac": "spac", "hypergraph-edge": "hypergraph"}


def owners_from_edges(edges: np.ndarray, parts: np.ndarray, n: int, P: int, seed: int) -> np.ndarray:
    """Each vertex to the part with most of its edges (ties: the lowest); vertices without an
    edge dealt round robin from a seeded random start."""
    ends = np.concatenate([edges[:, 0], edges[:, 1]])
    part = np.concatenate([parts, parts])
    owner = np.full(n, -1, dtype=np.int64)
    if ends.size:
        key, cnt = np.unique(ends * P + part, return_counts=True)
        v, p = key // P, key % P
        order = np.lexsort((p, -cnt, v))            # per vertex: most edges first, then lowest part
        first = np.r_[True, v[order][1:] != v[order][:-1]]
        owner[v[order][first]] = p[order][first]
    lone = np.flatnonzero(owner < 0)
    owner[lone] = (np.arange(lone.size) + int(np.random.default_rng(seed).integers(P))) % P
    return owner


def edge_owner(A, P: int, method: str, eps: float, seed: int, row_parts: np.ndarray) -> np.ndarray:
    """The rank of every stored entry of A (CSR order) under the edge partition ``method`` (spac,
    hypergraph-edge): an off-diagonal entry its undirected edge's part, a diagonal one its row's."""
    e = edge_partition(A, P, EDGE_OF[method], eps=eps, seed=seed, progress=False)
    n = A.shape[0]
    row = np.repeat(np.arange(n, dtype=np.int64), np.diff(A.indptr))
    col = A.indices.astype(np.int64)
    keys = e.edges[:, 0] * n + e.edges[:, 1]                     # u < v, sorted (triu in CSR order)
    lo, hi = np.minimum(row, col), np.maximum(row, col)
    at = np.searchsorted(keys, lo * n + hi)
    owner = row_parts[row].copy()
    off = row != col
    owner[off] = e.parts[np.minimum(at[off], keys.size - 1)]
    return owner


def _run(method: str):
    def run(job):
        e = edge_partition(job.A, job.P, EDGE_OF[method], eps=job.eps, seed=job.seed, progress=False)
        return owners_from_edges(e.edges, e.parts, job.A.shape[0], job.P, job.seed)
    return run


for _name in EDGE_OF:
    register(Method(_name, _run(_name), weight="rows", square_only=True,
                    summary=f"vertices to the part holding most of their edges in the {EDGE_OF[_name]} edge "
                            "partition (for the vertexcut plan)"))
