"""GP: METIS on the symmetrised graph (Demirci et al. §4.3.1).

Every directed edge (i, j) becomes an undirected edge {i, j} of unit cost; self loops are dropped
(METIS forbids them); vertex weight = nonzeros of row i of A (at least 1: METIS and KaHyPar need
positive weights).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import PlanError
from .registry import Job, Method, register


def symmetrised_graph(A: sp.csr_matrix) -> sp.csr_matrix:
    """Pattern of A + A^T without the diagonal, sorted, unit values."""
    S = sp.csr_matrix(A, dtype=np.int8, copy=True)
    S.data[:] = 1
    S = (S + S.T).tocsr()
    S.setdiag(0)
    S.eliminate_zeros()
    S.sort_indices()
    S.data[:] = 1
    return S


def metis_parts(G: sp.csr_matrix, P: int, eps: float, seed: int, vweights: np.ndarray | None = None,
                eweights: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """pymetis k-way partition of a symmetric pattern G; returns (parts, edge cut)."""
    import pymetis  # a native library: loaded by the runs that partition with METIS only

    n = G.shape[0]
    if P == 1:
        return np.zeros(n, dtype=np.int64), 0
    # METIS's ufactor is the allowed imbalance in thousandths (1.03 -> 30)
    opts = pymetis.Options(seed=int(seed), ufactor=max(1, int(round(eps * 1000))))
    xadj, adjncy = G.indptr.astype(np.int64), G.indices.astype(np.int64)
    if hasattr(pymetis, "CSRAdjacency"):  # pymetis >= 2025.2; older ones take xadj/adjncy keywords
        graph = {"adjacency": pymetis.CSRAdjacency(xadj, adjncy)}
    else:
        graph = {"xadj": xadj, "adjncy": adjncy}
    cut, parts = pymetis.part_graph(int(P), **graph,
                                    vweights=None if vweights is None else np.asarray(vweights, np.int64),
                                    eweights=None if eweights is None else np.asarray(eweights, np.int64),
                                    options=opts)
    return np.asarray(parts, dtype=np.int64), int(cut)


def _graph(job: Job) -> np.ndarray:
    n, m = job.A.shape
    if n != m:
        raise PlanError(f"the graph model needs a square matrix, got {n}x{m}; use 'hypergraph' for rectangular A")
    with job.progress.phase("symmetrise"):
        G = symmetrised_graph(job.A)
    with job.progress.phase(f"METIS k-way, P={job.P}"):
        parts, cut = metis_parts(G, job.P, job.eps, job.seed, vweights=np.maximum(job.row_nnz(), 1))
    job.info["edge_cut"] = cut
    return parts


register(Method("graph", _graph, weight="nnz", square_only=True, backends=("metis",),
                summary="METIS on the symmetrised graph, vertex weight = row nonzeros (GP)"))
