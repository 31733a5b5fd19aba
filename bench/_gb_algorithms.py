"""LAGraph's algorithms written directly in python-graphblas, the way an experienced user would
(graphblas-algorithms' formulation where it has one: k-truss, the local clustering coefficient;
LAGraph's otherwise), for ``dspla bench algorithms`` to time examples/ against. Each takes a scipy
CSR matrix and converts it, as the dspla side does."""
from __future__ import annotations

import graphblas as gb
import numpy as np
import scipy.sparse as sp
from graphblas import binary, monoid, select, semiring

from dspla.ops.random import uniform  # the same draws as examples/mis (a result checked equal)


def _undirected(A: sp.csr_array, dtype) -> gb.Matrix:
    """The pattern of A + Aᵀ without self-loops ("offdiag" of graphblas-algorithms' Graph)."""
    G = gb.io.from_scipy_sparse(A)
    return G.ewise_add(G.T, binary.pair).new(dtype=dtype).select("offdiag").new()


def gb_betweenness(A: sp.csr_array, sources: np.ndarray) -> gb.Vector:
    """Batched Brandes (LAGraph's LAGr_Betweenness): the levels of the BFS kept as a list."""
    G = gb.io.from_scipy_sparse(A)
    n, ns = G.nrows, len(sources)
    paths = gb.Matrix.from_coo(np.arange(ns), sources, 1.0, nrows=ns, ncols=n)
    frontier = gb.Matrix(float, ns, n)
    frontier(~paths.S, replace=True) << paths.mxm(G, semiring.plus_first)
    levels = []
    while frontier.nvals:
        levels.append(frontier.dup(dtype=bool))
        paths(binary.plus) << frontier
        frontier(~paths.S, replace=True) << frontier.mxm(G, semiring.plus_first)
    bc = gb.Matrix(float, ns, n)
    bc << 1.0                               # 1 + each node's dependency, accumulated level by level
    W = gb.Matrix(float, ns, n)
    GT = G.T
    for d in range(len(levels) - 1, 0, -1):
        W(levels[d].S, replace=True) << bc.ewise_mult(paths, binary.truediv)
        W(levels[d - 1].S, replace=True) << W.mxm(GT, semiring.plus_first)
        bc(binary.plus) << W.ewise_mult(paths, binary.times)
    c = bc.reduce_columnwise(monoid.plus).new()
    c(binary.minus) << gb.Vector.from_dense(np.full(n, float(ns)))
    return c


def gb_ktruss(A: sp.csr_array, k: int) -> gb.Matrix:
    """graphblas-algorithms' k_truss (for k >= 3; the matrix of supports, before it drops nodes)."""
    S = _undirected(A, np.int64)
    last = S.nvals
    C = gb.Matrix(np.int64, S.nrows, S.ncols)
    while True:
        C(S.S, replace=True) << semiring.plus_pair(S @ S.T)
        C << select.value(k - 2 <= C)
        if C.nvals == last:
            return C
        last = C.nvals
        S = C


def gb_lcc(A: sp.csr_array) -> gb.Vector:
    """graphblas-algorithms' clustering: per-node triangles from L and U, over d (d - 1)."""
    S = _undirected(A, np.float64)
    L, U = S.select("tril", -1).new(), S.select("triu", 1).new()
    C = semiring.plus_pair(L @ L.T).new(mask=L.S)
    D = semiring.plus_pair(U @ L.T).new(mask=U.S)
    tri = (C.reduce_rowwise().new() + C.reduce_columnwise().new() + D.reduce_rowwise().new()).new()
    deg = S.reduce_rowwise().new()
    lcc = (2 * tri / (deg * (deg - 1))).new()
    out = gb.Vector.from_dense(np.zeros(S.nrows))
    out(lcc.S) << lcc
    return out


def gb_kcore(A: sp.csr_array) -> gb.Vector:
    """Core numbers by peeling level by level (LAGraph's k-core decomposition)."""
    S = _undirected(A, np.int64)
    n = S.nrows
    deg = gb.Vector.from_dense(np.zeros(n, dtype=np.int64))
    deg(binary.plus) << S.reduce_rowwise()
    core = gb.Vector(np.int64, n)
    drop = gb.Vector(np.int64, n)
    while deg.nvals:
        k = deg.reduce(monoid.min).value
        peel = deg.select("<=", k).new()
        while peel.nvals:
            core(peel.S) << k
            deg = deg.dup(mask=~peel.S)
            drop(deg.S, replace=True) << peel.vxm(S, semiring.plus_pair)   # S is symmetric: pushed
            deg(binary.minus) << drop
            peel = deg.select("<=", k).new()
    return core


def gb_mis(A: sp.csr_array, seed: int) -> gb.Vector:
    """Luby's maximal independent set (LAGraph's), with examples/mis's random scores."""
    S = _undirected(A, bool)
    n = S.nrows
    deg = S.reduce_rowwise(monoid.lor).new()
    iset = gb.Vector(bool, n)
    iset(~deg.S) << True
    cand = gb.Vector(bool, n)
    cand(deg.S) << True
    best = gb.Vector(float, n)
    it = 0
    while cand.nvals:
        idx, _ = cand.to_coo(values=False)
        score = gb.Vector.from_coo(idx, uniform(seed + it, idx, np.zeros_like(idx)), size=n)
        best(cand.S, replace=True) << S.mxv(score, semiring.max_second)
        new = score.ewise_union(best, binary.gt, left_default=0.0, right_default=-1.0).new()
        new(new.V, replace=True) << new
        iset(new.S) << True
        taken = gb.Vector(bool, n)
        taken(cand.S) << S.mxv(new, semiring.any_pair)
        taken(new.S) << True
        cand(~taken.S, replace=True) << cand
        it += 1
    return iset


def gb_triangles_ll(A: sp.csr_array) -> int:
    """Sandia LL: the sum of C<L> = L plus.pair L."""
    L = _undirected(A, np.int64).select("tril", -1).new()
    C = gb.Matrix(np.int64, L.nrows, L.ncols)
    C(mask=L.S) << L.mxm(L, semiring.plus_pair)
    return int(C.reduce_scalar().value or 0)


__all__ = ["gb_betweenness", "gb_kcore", "gb_ktruss", "gb_lcc", "gb_mis", "gb_triangles_ll"]
