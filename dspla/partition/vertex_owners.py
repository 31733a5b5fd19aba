"""Row (vertex) partitions from an edge partition, for the vertexcut plan: ``spac`` and
``hypergraph-edge`` partition the edges (Schlag, Schulz, Seemaier, Strash, "Scalable Edge
Partitioning"), then give each vertex to the part holding most of its edges, so that the
partial rows a vertex's other parts compute travel to one of them."""
from __future__ import annotations

import numpy as np

from ..formats.shards import edge_share
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


def edge_owner(A, P: int, method: str, eps: float, seed: int, row_parts: np.ndarray, cache: bool = True) -> np.ndarray:
    """The rank of every stored entry of A (CSR order) under the edge partition ``method`` (spac,
    hypergraph-edge): an off-diagonal entry its undirected edge's part, a diagonal one its row's."""
    keys, parts = edge_table(A, P, method, eps, seed, cache=cache)
    return entry_owner(A, np.arange(A.shape[0]), keys, parts, row_parts)


def edge_table(A, P: int, method: str, eps: float, seed: int, rows: np.ndarray | None = None,
               cache: bool = True) -> tuple:
    """The edge partition ``method`` of A's undirected edges as (keys lo * n + hi ascending, parts);
    with ``rows``, of the edges incident to those rows only (a rank's share of it). ``cache``:
    whether the partition cache may serve or keep it."""
    e = edge_partition(A, P, EDGE_OF[method], eps=eps, seed=seed, progress=False, cache=cache)
    keys = e.edges[:, 0].astype(np.int64) * A.shape[0] + e.edges[:, 1]   # u < v, sorted (triu in CSR order)
    parts = np.asarray(e.parts, dtype=np.int64)
    return (keys, parts) if rows is None else edge_share((keys, parts), rows, A.shape[0])


def entry_owner(A_rows, rows: np.ndarray, keys: np.ndarray, parts: np.ndarray, row_parts: np.ndarray) -> np.ndarray:
    """The rank of every stored entry of the rows ``A_rows`` (CSR, global columns; global row ids
    ``rows``) from an edge table (edge_table): its undirected edge's part, a diagonal entry its
    row's owner. An off-diagonal entry whose edge the table lacks is an error."""
    n = A_rows.shape[1]
    row = np.repeat(np.asarray(rows, dtype=np.int64), np.diff(A_rows.indptr))
    col = A_rows.indices.astype(np.int64)
    off = row != col
    want = np.minimum(row[off], col[off]) * n + np.maximum(row[off], col[off])
    at = np.minimum(np.searchsorted(keys, want), max(keys.size - 1, 0))
    missing = np.ones(want.size, dtype=bool) if keys.size == 0 else keys[at] != want
    if missing.any():
        bad = int(np.flatnonzero(missing)[0])
        raise ValueError(f"entry ({int(row[off][bad])}, {int(col[off][bad])}) is not an edge of the edge partition "
                         "(it was made for another graph)")
    owner = row_parts[row].copy()
    owner[off] = parts[at]
    return owner


def _run(method: str):
    def run(job):
        e = edge_partition(job.A, job.P, EDGE_OF[method], eps=job.eps, seed=job.seed, progress=False, cache=job.cache)
        return owners_from_edges(e.edges, e.parts, job.A.shape[0], job.P, job.seed)
    return run


for _name in EDGE_OF:
    register(Method(_name, _run(_name), weight="rows", square_only=True,
                    summary=f"vertices to the part holding most of their edges in the {EDGE_OF[_name]} edge "
                            "partition (for the vertexcut plan)"))
