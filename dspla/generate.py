"""Seeded synthetic graphs of any size, built with vectorised numpy (no Python loop per edge).

Every generator takes ``seed`` (an int, or a ``numpy.random.Generator``) and returns the same
graph for the same arguments. Adjacency matrices are ``scipy.sparse.csr_array`` n x n with
float64 values 1.0; duplicate edges collapse to one entry and self loops are dropped.
Undirected graphs (the default) are stored symmetrically, so ``A.nnz`` = 2 x edges.

- :func:`rmat`: R-MAT / Kronecker power-law graphs (Graph500-style);
- :func:`erdos_renyi`: G(n, p) with p set from the average degree;
- :func:`random_geometric`: points in the unit square joined within a radius (mesh/road-like);
- :func:`contextual_sbm`: a stochastic block model with class-dependent noisy Gaussian
  features and train/val/test splits, for node classification (the GCN demo).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .errors import DsplaError
from .formats.snap import edges_to_csr

_CHUNK = 1 << 22  # edges drawn per batch: bounds temporary memory for huge graphs


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _to_csr(src, dst, n: int, directed: bool) -> sp.csr_array:
    """Edges -> csr pattern: self loops dropped, duplicates collapsed, symmetric if undirected."""
    return edges_to_csr(np.asarray(src), np.asarray(dst), n, directed=directed, self_loops=False)


def _sorted_unique(x: np.ndarray) -> np.ndarray:
    """np.unique by sorting (numpy 2's hash-based unique is several times slower here)."""
    x = np.sort(x)
    return x[np.r_[True, x[1:] != x[:-1]]] if len(x) else x


def _check(cond: bool, message: str):
    if not cond:
        raise DsplaError(message)


# ---------------------------------------------------------------------------------- R-MAT

def rmat(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         seed=0, directed: bool = False, permute: bool = True) -> sp.csr_array:
    """R-MAT graph on n = 2**scale vertices from ``edge_factor * n`` sampled edges.

    Each edge picks one quadrant of the adjacency matrix per bit of the vertex ids, with
    probabilities a, b, c and d = 1 - a - b - c (defaults: Graph500). ``permute`` relabels the
    vertices with a random permutation (as Graph500 does) so that the high-degree vertices are
    not all at small ids. Duplicates and self loops are removed, so nnz is somewhat below
    ``edge_factor * n`` (x2 when undirected)."""
    _check(0 <= scale <= 40, f"rmat: scale must be in 0..40, got {scale}")
    d = 1.0 - a - b - c
    _check(min(a, b, c, d) >= 0, f"rmat: a, b, c must be >= 0 with a + b + c <= 1 (d = {d:g})")
    _check(edge_factor >= 0, f"rmat: edge_factor must be >= 0, got {edge_factor}")
    rng = _rng(seed)
    n, m = 1 << scale, edge_factor << scale
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    for lo in range(0, m, _CHUNK):
        k = min(_CHUNK, m - lo)
        s = np.zeros(k, np.int64)
        t = np.zeros(k, np.int64)
        for _ in range(scale):
            r = rng.random(k)
            # quadrant a: (0,0), b: (0,1), c: (1,0), d: (1,1)
            row_bit = r >= a + b
            col_bit = ((r >= a) & (r < a + b)) | (r >= a + b + c)
            s = 2 * s + row_bit
            t = 2 * t + col_bit
        src[lo:lo + k], dst[lo:lo + k] = s, t
    if permute:
        perm = rng.permutation(n)
        src, dst = perm[src], perm[dst]
    return _to_csr(src, dst, n, directed)


# ------------------------------------------------------------------------------ G(n, p)

def erdos_renyi(n: int, avg_degree: float, seed=0, directed: bool = False) -> sp.csr_array:
    """G(n, p) with p = avg_degree / (n - 1): each possible edge (ordered pair if directed)
    independently. Sampled without the O(n^2) coin flips: the edge count is drawn from its
    binomial law, then that many distinct pairs uniformly."""
    _check(n >= 0 and avg_degree >= 0, "erdos_renyi: n and avg_degree must be >= 0")
    rng = _rng(seed)
    if n < 2:
        return sp.csr_array((n, n), dtype=np.float64)
    p = min(1.0, avg_degree / (n - 1))
    pairs = n * (n - 1) // (1 if directed else 2)
    m = int(rng.binomial(pairs, p))
    keys = np.zeros(0, np.int64)
    while len(keys) < m:  # top up after removing loops and repeats; a round or two
        need = m - len(keys)
        u = rng.integers(0, n, size=need + need // 8 + 16)
        v = rng.integers(0, n, size=len(u))
        ok = u != v
        u, v = u[ok], v[ok]
        if not directed:
            u, v = np.minimum(u, v), np.maximum(u, v)
        keys = _sorted_unique(np.concatenate([keys, u * np.int64(n) + v]))
    # The distinct values of uniform draws form a uniformly random set given its size, and a
    # random m-subset of it is a uniformly random m-set of pairs: exactly G(n, p) given m.
    keys = np.sort(keys[rng.permutation(len(keys))[:m]])
    return _to_csr(keys // n, keys % n, n, directed)


# ------------------------------------------------------------------- random geometric

def random_geometric(n: int, radius: float | None = None, avg_degree: float | None = None,
                     seed=0, return_coords: bool = False):
    """Undirected random geometric graph: n uniform points in the unit square, an edge between
    every pair closer than ``radius``. Give ``radius`` or ``avg_degree`` (then radius =
    sqrt(avg_degree / (pi n)); boundary effects make the realised degree slightly lower).

    Points are bucketed into a grid of cells of side >= radius, so only pairs in the same or
    adjacent cells are compared: O(n * degree) work, never O(n^2). Node ids are the order the
    points were drawn (random, not spatial). ``return_coords=True`` also returns the n x 2 points.
    """
    _check((radius is None) != (avg_degree is None), "random_geometric: give radius or avg_degree")
    _check(n >= 0, "random_geometric: n must be >= 0")
    if radius is None:
        _check(avg_degree >= 0, "random_geometric: avg_degree must be >= 0")
        radius = math.sqrt(avg_degree / (math.pi * max(n, 1)))
    _check(radius > 0, "random_geometric: radius must be > 0")
    rng = _rng(seed)
    pts = rng.random((n, 2))
    # cells per side: each of side 1/g >= radius, and no more cells than ~points (memory)
    g = max(1, min(int(1.0 / radius), math.isqrt(max(n, 1)) + 1))
    cx = np.minimum((pts[:, 0] * g).astype(np.int64), g - 1)
    cy = np.minimum((pts[:, 1] * g).astype(np.int64), g - 1)
    order = np.argsort(cx * g + cy, kind="stable")  # points grouped by cell
    cx, cy, xy = cx[order], cy[order], pts[order]
    counts = np.bincount(cx * g + cy, minlength=g * g)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    r2 = radius * radius
    src_parts, dst_parts = [], []
    # Half of the 3x3 stencil: each unordered cell pair once; within a cell, i < j.
    for dx, dy in ((0, 0), (1, -1), (1, 0), (1, 1), (0, 1)):
        nx, ny = cx + dx, cy + dy
        valid = (nx < g) & (ny >= 0) & (ny < g)
        cell = np.where(valid, nx * g + ny, 0)
        cnt = np.where(valid, counts[cell], 0)
        i = np.repeat(np.arange(n), cnt)
        first = np.repeat(start[cell] - (np.cumsum(cnt) - cnt), cnt)
        j = first + np.arange(len(i))  # walks each neighbour cell's members
        keep = ((xy[i] - xy[j]) ** 2).sum(axis=1) < r2
        if dx == 0 and dy == 0:
            keep &= i < j
        src_parts.append(i[keep])
        dst_parts.append(j[keep])
    src = order[np.concatenate(src_parts)] if src_parts else np.zeros(0, np.int64)
    dst = order[np.concatenate(dst_parts)] if dst_parts else np.zeros(0, np.int64)
    A = _to_csr(src, dst, n, directed=False)
    return (A, pts) if return_coords else A


# ---------------------------------------------------------------------- contextual SBM

@dataclass(frozen=True)
class SBMData:
    """A node-classification dataset (same fields as :class:`dspla.formats.planetoid.PlanetoidData`)."""

    adjacency: sp.csr_array   # n x n symmetric, no self loops, values 1.0
    features: np.ndarray      # n x f dense
    labels: np.ndarray        # int64 in 0..n_classes-1
    train_idx: np.ndarray
    val_idx: np.ndarray
    test_idx: np.ndarray
    name: str = "csbm"
    homophily: float = field(default=float("nan"))  # realised fraction of intra-class edges

    @property
    def n_nodes(self) -> int:
        return self.adjacency.shape[0]

    @property
    def n_classes(self) -> int:
        return int(self.labels.max()) + 1


def contextual_sbm(n: int, n_classes: int = 7, avg_degree: float = 10.0, homophily: float = 0.8,
                   *, p_in: float | None = None, p_out: float | None = None,
                   n_features: int = 64, feature_signal: float = 1.0, seed=0,
                   train_per_class: int = 20, n_val: int = 500, n_test: int = 1000,
                   dtype=np.float32) -> SBMData:
    """Contextual stochastic block model: communities = classes, features = noisy class means.

    Graph: each node gets a uniform random class; ``n * avg_degree / 2`` edges are drawn, each
    from a uniform node u to a uniform node of u's class with probability ``homophily``, else to
    a uniform node of another class (so expected degree ``avg_degree``, a little less after
    removing repeats and loops). Alternatively give the SBM probabilities ``p_in`` (same class)
    and ``p_out`` (different classes); they set avg_degree and homophily.

    Features: x_i = feature_signal * mu[y_i] + z_i with z_i ~ N(0, I) and mu[c] random unit
    vectors, so two classes' means are about ``feature_signal * sqrt(2)`` apart against unit
    noise: with the default 1.0 a classifier on features alone is weak, while averaging over
    ~avg_degree mostly same-class neighbours (what a GCN layer does) shrinks the noise by
    ~sqrt(avg_degree), and the graph alone only gives communities up to a label permutation
    -- a 2-layer GCN needs both.

    Splits (seeded, disjoint): ``train_per_class`` nodes of each class, then ``n_val`` and
    ``n_test`` nodes from the rest (the Planetoid protocol)."""
    rng = _rng(seed)
    _check(n_classes >= 1 and n >= n_classes, f"contextual_sbm: need n >= n_classes >= 1 (n={n})")
    if p_in is not None or p_out is not None:
        _check(p_in is not None and p_out is not None, "contextual_sbm: give both p_in and p_out")
        size = n / n_classes
        deg_in, deg_out = p_in * (size - 1), p_out * (n - size)
        avg_degree = deg_in + deg_out
        homophily = deg_in / avg_degree if avg_degree > 0 else 1.0
    _check(0 <= homophily <= 1, f"contextual_sbm: homophily must be in [0, 1], got {homophily}")
    _check(n_classes > 1 or homophily == 1 or avg_degree == 0,
           "contextual_sbm: one class leaves no other class for inter-class edges")

    labels = rng.integers(0, n_classes, size=n)
    by_class = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels, minlength=n_classes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    _check(sizes.min() >= 1, "contextual_sbm: a class came out empty; use a larger n")

    m = int(round(n * avg_degree / 2))
    u = rng.integers(0, n, size=m)
    same = rng.random(m) < homophily
    target = labels[u].copy()
    if n_classes > 1:
        shift = rng.integers(1, n_classes, size=m)  # another class, uniformly
        target[~same] = (target[~same] + shift[~same]) % n_classes
    v = by_class[starts[target] + (rng.random(m) * sizes[target]).astype(np.int64)]
    A = _to_csr(u, v, n, directed=False)
    C = A.tocoo()
    realised = float(np.mean(labels[C.row] == labels[C.col])) if A.nnz else float("nan")

    mu = rng.standard_normal((n_classes, n_features))
    mu /= np.linalg.norm(mu, axis=1, keepdims=True)
    X = rng.standard_normal((n, n_features)).astype(dtype)
    X += (feature_signal * mu[labels]).astype(dtype)

    train_idx, val_idx, test_idx = _splits(rng, labels, n_classes, train_per_class, n_val, n_test)
    return SBMData(A, X, labels.astype(np.int64), train_idx, val_idx, test_idx, "csbm", realised)


def _splits(rng, labels, n_classes, per_class, n_val, n_test):
    n = len(labels)
    _check(per_class * n_classes + n_val + n_test <= n,
           f"contextual_sbm: {n} nodes cannot hold {per_class} x {n_classes} train + {n_val} "
           f"val + {n_test} test nodes; lower them or raise n")
    perm = rng.permutation(n)
    # the first per_class nodes of each class in a random order
    rank = np.empty(n, np.int64)
    lab = labels[perm]
    order = np.argsort(lab, kind="stable")
    sizes = np.bincount(lab, minlength=n_classes)
    rank[order] = np.arange(n) - np.repeat(np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
    is_train = rank < per_class
    _check(sizes.min() >= per_class, f"contextual_sbm: a class has fewer than {per_class} nodes")
    train = np.sort(perm[is_train])
    rest = perm[~is_train]
    return train, np.sort(rest[:n_val]), np.sort(rest[n_val:n_val + n_test])
