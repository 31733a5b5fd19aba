"""Node-aware point-to-point exchange (Bienz, Gropp, Olson, "Node aware sparse matrix-vector
multiplication"): which member of a node serves which other node, and the three rounds of
messages of p2p1d_node counted from a row partition alone, as its plan sends them
(plan/plans/p2p1d_node.py says how the rows travel).

Ranks form nodes of ``rpn`` consecutive ranks, as launchers place them. Member ``B mod size(A)``
of node A serves node B, both ways. For each row j of B that rank d needs from its owner s:

- same node: s sends it to d in round 3;
- another node: s sends it to the member l of its node serving d's node (round 1, unless s is
  l), l to the member m of d's node serving s's node (round 2), m to d (round 3, unless m is d).

Each round's messages are the distinct (sender, receiver) pairs, each carrying its distinct rows.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..analysis import comm_plan


class Nodes:
    """Ranks 0..P-1 in nodes of ``rpn`` consecutive ranks (the last one may be smaller)."""

    def __init__(self, P: int, rpn: int):
        self.P, self.rpn = P, max(1, min(int(rpn), P))
        self.count = -(-P // self.rpn)

    def of(self, r):
        return np.asarray(r) // self.rpn

    def server(self, A, B):
        """The member of node A that serves node B (sends it A's rows, receives B's for A)."""
        A, B = np.asarray(A), np.asarray(B)
        return A * self.rpn + B % np.minimum(self.rpn, self.P - A * self.rpn)


def _pairs(src, dst, ids, n: int, P: int) -> tuple:
    """(src, dst, rows) of the distinct (sender, receiver) pairs, rows counted once a pair."""
    keep = src != dst
    key = np.unique((src[keep] * P + dst[keep]) * n + ids[keep])
    pair, rows = np.unique(key // n, return_counts=True)
    return pair // P, pair % P, rows.astype(np.float64)


def rounds(A: sp.csr_array, parts: np.ndarray, P: int, rpn: int) -> tuple:
    """The three rounds of p2p1d_node's messages, each (src, dst, rows), and per nonzero of A the
    block its receiver multiplies it in (own rows: the receiver; a round-3 message: its sender;
    rows that arrived in round 2 for the receiver itself: P + the receiver)."""
    n = A.shape[1]
    cp = comm_plan(A, parts, P)
    per = np.diff(cp.ptr)
    s, d, ids = np.repeat(cp.src, per).astype(np.int64), np.repeat(cp.dst, per).astype(np.int64), cp.rows
    nodes = Nodes(P, rpn)
    ns, nd = nodes.of(s), nodes.of(d)
    far = ns != nd
    l, m = nodes.server(ns, nd), nodes.server(nd, ns)
    r1 = _pairs(s[far], l[far], ids[far], n, P)
    r2 = _pairs(l[far], m[far], ids[far], n, P)
    r3 = _pairs(np.where(far, m, s), d, ids, n, P)
    owner_of = np.asarray(parts, dtype=np.int64)
    d_nz = np.repeat(owner_of, np.diff(A.indptr))
    s_nz = owner_of[A.indices]
    m_nz = nodes.server(nodes.of(d_nz), nodes.of(s_nz))
    block = np.where(nodes.of(s_nz) == nodes.of(d_nz), s_nz, np.where(m_nz == d_nz, P + d_nz, m_nz))
    return (r1, r2, r3), d_nz, block
