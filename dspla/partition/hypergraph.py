"""The column-net hypergraph model of a row partition (Demirci et al. §4.3.2, eq. 10).

A vertex per row of A, weighted by the row's nonzeros; a net per column j whose pins are the rows
with a nonzero in column j. For a square A the net also gets vertex j (the diagonal the paper's
A + I carries): the owner of row j of B is a pin, so KM1 of the partition is exactly the volume of
the 1D plan even when A has no self loops.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Hypergraph:
    """Nets in CSR form: net e has pins ``pins[ptr[e]:ptr[e+1]]``."""

    n: int
    ptr: np.ndarray  # int64 (nets + 1)
    pins: np.ndarray  # int64
    node_weights: np.ndarray  # int64 (n,)
    net_weights: np.ndarray  # int64 (nets,)

    @property
    def num_nets(self) -> int:
        return int(self.ptr.size - 1)

    @property
    def num_pins(self) -> int:
        return int(self.pins.size)

    def km1(self, parts: np.ndarray) -> int:
        """Connectivity-1 of ``parts`` (weighted by the net weights)."""
        P = int(parts.max()) + 1 if parts.size else 1
        net = np.repeat(np.arange(self.num_nets, dtype=np.int64), np.diff(self.ptr))
        key = np.sort(net * P + parts[self.pins])
        first = np.r_[True, key[1:] != key[:-1]] if key.size else np.zeros(0, bool)
        lam = np.bincount(key[first] // P, minlength=self.num_nets)
        return int(((lam - 1).clip(min=0) * self.net_weights).sum())


def drop_small_nets(ptr: np.ndarray, pins: np.ndarray, weights: np.ndarray, min_size: int = 2):
    """Remove nets with fewer than ``min_size`` pins (a single-pin net is never cut)."""
    sizes = np.diff(ptr)
    keep = sizes >= min_size
    if keep.all():
        return ptr, pins, weights
    pins = pins[np.repeat(keep, sizes)]
    ptr = np.r_[0, np.cumsum(sizes[keep])].astype(np.int64)
    return ptr, pins, weights[keep]


def column_net(A: sp.csr_matrix, *, node_weights: np.ndarray | None = None,
               diagonal: bool | None = None) -> Hypergraph:
    """Column-net hypergraph of A, with single-pin nets dropped (they are never cut).

    ``diagonal`` (default: A is square) adds vertex j to net j. Node weights default to the row
    nonzeros of A.
    """
    A = sp.csr_matrix(A)
    n, m = A.shape
    if diagonal is None:
        diagonal = n == m
    C = A.tocsc()
    if diagonal:
        # pins of net j: rows of column j plus j itself (deduplicated)
        rows = np.r_[C.indices.astype(np.int64), np.arange(m, dtype=np.int64)]
        cols = np.r_[np.repeat(np.arange(m, dtype=np.int64), np.diff(C.indptr)), np.arange(m, dtype=np.int64)]
        key = np.sort(cols * n + rows)
        key = key[np.r_[True, key[1:] != key[:-1]]]
        pins, net = key % n, key // n
        ptr = np.r_[0, np.cumsum(np.bincount(net, minlength=m))].astype(np.int64)
    else:
        C.sort_indices()
        C.sum_duplicates()
        pins, ptr = C.indices.astype(np.int64), C.indptr.astype(np.int64)
    weights = np.ones(ptr.size - 1, dtype=np.int64)
    ptr, pins, weights = drop_small_nets(ptr, pins, weights)
    if node_weights is None:
        node_weights = np.diff(A.indptr).astype(np.int64)
    return Hypergraph(n=n, ptr=ptr, pins=pins, node_weights=np.asarray(node_weights, dtype=np.int64),
                      net_weights=weights)
