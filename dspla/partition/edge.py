"""Edge partitioning (Schlag et al., Scalable Edge Partitioning): blocks of edges, objective the
vertex cut sum_v (|I(v)| - 1).

Two methods, same table style as the row partitioners:

- ``spac``: the split-and-connect graph (§2.3). Vertex v becomes d(v) split nodes joined in a
  cycle by unit auxiliary edges; each edge {u, v} becomes a dominant edge between one split node
  of u and one of v. A node partitioner (METIS) runs on it. Dominant edges have infinite weight,
  i.e. are never cut; we realise that by contracting them before METIS (which only takes finite
  weights), so each contracted node is exactly one edge of G.
- ``hypergraph``: a vertex per edge, a net per node holding its incident edges; connectivity-1 of
  this hypergraph is exactly the vertex cut, minimised by the KaHyPar family.

The graph is the symmetrised pattern of A without self loops; edge e joins ``edges[e] = (u, v)``,
u < v, in row-major order of the upper triangle.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import PlanError
from . import cache as _cache
from .backends import BACKENDS, partition_hypergraph
from .balance import backend_eps, rebalance
from .balance import imbalance as _imb
from .graph import metis_parts, symmetrised_graph
from .hypergraph import Hypergraph, drop_small_nets
from .partitioner import _check_request, _params_key, _unknown_params, as_pattern
from .progress import as_progress
from .registry import EDGE_METHODS, Job, Method, get, register


def undirected_edges(A) -> np.ndarray:
    """(m, 2) int64 array of the undirected edges {u, v}, u < v, of the symmetrised pattern."""
    U = sp.triu(symmetrised_graph(as_pattern(A)), k=1).tocsr()
    return np.column_stack([np.repeat(np.arange(U.shape[0], dtype=np.int64), np.diff(U.indptr)),
                            U.indices.astype(np.int64)])


def vertex_cut(edges: np.ndarray, parts: np.ndarray, n: int, P: int) -> tuple[int, np.ndarray]:
    """(sum_v (|I(v)| - 1) over vertices with an edge, |I(v)| for every vertex)."""
    ends = np.r_[edges[:, 0], edges[:, 1]]
    key = np.sort(ends * P + np.r_[parts, parts])
    key = key[np.r_[True, key[1:] != key[:-1]]] if key.size else key
    spans = np.bincount(key // P, minlength=n)
    return int((spans - 1).clip(min=0).sum()), spans


@dataclass(frozen=True)
class SplitGraph:
    """The SPAC split graph of G: split node s belongs to vertex ``owner[s]``; node ids are the
    positions of the symmetric CSR adjacency (the s-th entry is the split node of its row vertex
    for the edge to its column vertex)."""

    owner: np.ndarray  # (2m,) vertex of G of each split node
    dominant: np.ndarray  # (m, 2) split-node pairs joined by a dominant (infinite) edge; row e = edge e
    auxiliary: np.ndarray  # (k, 2) split-node pairs joined by a unit auxiliary edge (cycles per vertex)

    @property
    def num_nodes(self) -> int:
        return int(self.owner.size)


def split_graph(A) -> SplitGraph:
    """Build the split-and-connect graph of the symmetrised pattern of A."""
    S = symmetrised_graph(as_pattern(A))
    n = S.shape[0]
    deg = np.diff(S.indptr).astype(np.int64)
    owner = np.repeat(np.arange(n, dtype=np.int64), deg)
    col = S.indices.astype(np.int64)
    pos = np.arange(owner.size, dtype=np.int64)
    # the twin of entry (u, v) is entry (v, u): find it by searching v's sorted row for u
    keys = owner * n + col  # sorted: CSR rows ascending, columns sorted within rows
    twin = np.searchsorted(keys, col * n + owner)
    up = owner < col
    dominant = np.column_stack([pos[up], twin[up]])
    # cycle through each vertex's split nodes: s -> next in the same row (wrapping around)
    first = np.repeat(S.indptr[:-1].astype(np.int64), deg)
    nxt = first + (pos - first + 1) % np.maximum(np.repeat(deg, deg), 1)
    a, b = np.minimum(pos, nxt), np.maximum(pos, nxt)
    aux = np.unique(np.column_stack([a, b])[a != b], axis=0)  # d = 2 gives the same pair twice
    return SplitGraph(owner=owner, dominant=dominant, auxiliary=aux)


def contracted_split_graph(sg: SplitGraph) -> sp.csr_matrix:
    """The split graph with every dominant edge contracted: one node per edge of G, auxiliary
    edges summed into integer weights."""
    m = sg.dominant.shape[0]
    edge_of = np.empty(sg.num_nodes, dtype=np.int64)
    edge_of[sg.dominant[:, 0]] = np.arange(m)
    edge_of[sg.dominant[:, 1]] = np.arange(m)
    r, c = edge_of[sg.auxiliary[:, 0]], edge_of[sg.auxiliary[:, 1]]
    keep = r != c
    W = sp.coo_matrix((np.ones(keep.sum(), dtype=np.int64), (r[keep], c[keep])), shape=(m, m)).tocsr()
    W = (W + W.T).tocsr()
    W.sum_duplicates()
    W.sort_indices()
    return W


def _spac(job: Job) -> np.ndarray:
    with job.progress.phase("build split graph"):
        sg = split_graph(job.A)
        W = contracted_split_graph(sg)
    job.info.update(split_nodes=sg.num_nodes, auxiliary_edges=int(sg.auxiliary.shape[0]))
    with job.progress.phase(f"METIS on the split graph, P={job.P}"):
        parts, cut = metis_parts(W, job.P, job.eps, job.seed, eweights=W.data)
    job.info["split_graph_cut"] = cut
    return parts


def edge_hypergraph(edges: np.ndarray, n: int) -> Hypergraph:
    """A vertex per edge, a net per node of G with the edges incident to it (Schlag et al., §2.3)."""
    m = edges.shape[0]
    ends = np.r_[edges[:, 0], edges[:, 1]]
    eid = np.r_[np.arange(m, dtype=np.int64), np.arange(m, dtype=np.int64)]
    order = np.lexsort((eid, ends))
    ptr = np.r_[0, np.cumsum(np.bincount(ends, minlength=n))].astype(np.int64)
    ptr, pins, w = drop_small_nets(ptr, eid[order], np.ones(n, dtype=np.int64))
    return Hypergraph(n=m, ptr=ptr, pins=pins, node_weights=np.ones(m, dtype=np.int64), net_weights=w)


def _edge_hgp(job: Job) -> np.ndarray:
    edges = job.params["_edges"]
    with job.progress.phase("build edge hypergraph"):
        hg = edge_hypergraph(edges, job.A.shape[0])
    with job.progress.phase(f"partition edge hypergraph ({job.backend}), P={job.P}"):
        return partition_hypergraph(hg, job.P, backend_eps(hg.node_weights, job.P, job.eps), job.seed,
                                    job.backend, job.params.get("preset"))


register(Method("spac", _spac, weight="edges", square_only=True, backends=("metis",),
                summary="split-and-connect graph + METIS (Schlag et al., §2.3)"), EDGE_METHODS)
register(Method("hypergraph", _edge_hgp, weight="edges", square_only=True, backends=BACKENDS, params=("preset",),
                summary="hypergraph model of edge partitioning, KM1 = vertex cut"), EDGE_METHODS)


@dataclass(frozen=True)
class EdgePartitionResult:
    """An edge partition: edge ``edges[e] = (u, v)`` goes to part ``parts[e]``."""

    edges: np.ndarray
    parts: np.ndarray
    P: int
    method: str
    eps: float
    seed: int
    backend: str | None
    vertex_cut: int  # sum over vertices of (parts holding one of its edges - 1): the replicas
    replication_factor: float  # average number of parts per vertex that has an edge
    imbalance: float  # max edges per part / average - 1
    seconds: float
    cached: bool = False
    moved: int = 0
    info: dict[str, Any] = field(default_factory=dict)

    def counts(self) -> np.ndarray:
        return np.bincount(self.parts, minlength=self.P)


def edge_partition(A, P: int, method: str = "spac", eps: float = 0.03, seed: int = 0, *,
                   backend: str | None = None, cache: bool = True, progress=None, **params) -> EdgePartitionResult:
    """Partition the undirected edges of A's symmetrised pattern into P blocks of about equal size,
    minimising the vertex cut. Methods: ``dspla.partition.EDGE_METHODS`` (spac, hypergraph)."""

    m_ = get(method, EDGE_METHODS, "edge partitioning method")
    _unknown_params(m_, params)
    A = as_pattern(A)
    n = A.shape[0]
    if A.shape[0] != A.shape[1]:
        raise PlanError(f"edge partitioning needs a square (graph) matrix, got {A.shape[0]}x{A.shape[1]}")
    edges = undirected_edges(A)
    backend = _check_request(A, P, eps, m_, backend, edges.shape[0], "edges")
    P, eps, seed = int(P), float(eps), int(seed)
    ones = np.ones(edges.shape[0], dtype=np.int64)
    prog = as_progress(progress, f"edge-partition {method} P={P}")
    pkey, keyable = _params_key(params)
    key = None
    if cache and keyable and P > 1:
        key = _cache.entry_key(_cache.matrix_hash(A), kind="edges", P=P, method=method, eps=eps, seed=seed,
                               backend=backend, params=pkey)
        hit = _cache.load(key)
        if hit is not None and hit[0]["parts"].size == edges.shape[0]:
            parts, meta = hit[0]["parts"], hit[1]
            return _edge_result(edges, parts, n, P, method, eps, seed, backend, meta["seconds"], True,
                                meta.get("moved", 0), meta.get("info", {}))
    t0 = time.perf_counter()
    if P == 1:
        parts, info = np.zeros(edges.shape[0], dtype=np.int64), {}
    else:
        job = Job(A=A, P=P, eps=eps, seed=seed, backend=backend, params={**params, "_edges": edges}, progress=prog)
        parts, info = np.asarray(m_.run(job), dtype=np.int64), job.info
    moved = 0
    if _imb(parts, ones, P) > eps + 1e-12:
        parts, moved = rebalance(parts, ones, P, eps)
    seconds = time.perf_counter() - t0
    if key is not None:
        _cache.store(key, {"parts": parts}, {"seconds": seconds, "moved": moved, "info": info})
    return _edge_result(edges, parts, n, P, method, eps, seed, backend, seconds, False, moved, info)


def _edge_result(edges, parts, n, P, method, eps, seed, backend, seconds, cached, moved, info):
    cut, spans = vertex_cut(edges, parts, n, P)
    touched = spans > 0
    counts = np.bincount(parts, minlength=P)
    avg = edges.shape[0] / P
    return EdgePartitionResult(edges=edges, parts=parts, P=P, method=method, eps=eps, seed=seed, backend=backend,
                               vertex_cut=cut,
                               replication_factor=float(spans[touched].mean()) if touched.any() else 0.0,
                               imbalance=float(counts.max() / avg - 1.0) if avg else 0.0, seconds=float(seconds),
                               cached=cached, moved=int(moved), info=dict(info))
