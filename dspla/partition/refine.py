"""Bottleneck refinement: lower the largest per-process send volume of a row partition.

KM1 partitioners minimise the TOTAL volume; the 1D plan waits for the process that sends most.
Starting from their result, this moves (or swaps) the rows that make the busiest sender busy --
rows j whose column is needed by many parts, so that owning j means sending row j of B to
lambda_j - 1 peers -- to the least busy senders, as long as

- every part keeps weight <= the balance bound,
- no other process ends up sending as much as the current maximum,
- the total volume grows by at most ``km1_budget`` (a fraction of the start).

Exact gains: net j's pins are the rows with a nonzero in column j plus row j itself (its owner),
so the send volume of part p is sum over rows j it owns of (lambda_j - 1), and moving row v only
changes lambda on the nets v is a pin of. Each step costs O(sum of those nets' sizes); the loop
runs over moves (a few hundred), not over rows.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp


class SendState:
    """parts, net connectivities lambda, per-part send volume S and weight W, kept exact."""

    def __init__(self, A: sp.csr_matrix, parts: np.ndarray, w: np.ndarray, P: int):
        n = A.shape[0]
        M = sp.csr_matrix((np.ones(A.nnz, dtype=np.int8), A.indices, A.indptr), shape=A.shape)
        M = (M + sp.identity(n, dtype=np.int8, format="csr")).tocsr()
        M.sort_indices()
        self.rows_ptr, self.rows_idx = M.indptr.astype(np.int64), M.indices.astype(np.int64)  # v -> its nets
        C = M.tocsc()
        C.sort_indices()
        self.pins_ptr, self.pins = C.indptr.astype(np.int64), C.indices.astype(np.int64)  # net -> pins
        self.P = P
        self.parts = np.array(parts, dtype=np.int64, copy=True)
        self.w = np.asarray(w, dtype=np.int64)
        self.W = np.bincount(self.parts, weights=self.w, minlength=P).astype(np.int64)
        net = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.pins_ptr))
        key = np.sort(net * P + self.parts[self.pins])
        key = key[np.r_[True, key[1:] != key[:-1]]]
        self.lam = np.bincount(key // P, minlength=n).astype(np.int64)
        self.S = np.bincount(self.parts, weights=self.lam - 1, minlength=P).astype(np.int64)

    def nets_of(self, v: int) -> np.ndarray:
        return self.rows_idx[self.rows_ptr[v]:self.rows_ptr[v + 1]]

    def delta(self, v: int, q: int):
        """Effect of moving row v to part q: (nets, change of lambda per net, parts whose send
        changes, their change), without applying it."""
        p = int(self.parts[v])
        nets = self.nets_of(v)
        starts, ends = self.pins_ptr[nets], self.pins_ptr[nets + 1]
        sizes = ends - starts
        # gather the pins of all of v's nets at once
        idx = np.repeat(starts - np.r_[0, np.cumsum(sizes)[:-1]], sizes) + np.arange(sizes.sum())
        pp = self.parts[self.pins[idx]]
        which = np.repeat(np.arange(nets.size), sizes)
        in_p = np.bincount(which, weights=pp == p, minlength=nets.size)
        in_q = np.bincount(which, weights=pp == q, minlength=nets.size)
        dl = (in_q == 0).astype(np.int64) - (in_p == 1).astype(np.int64)
        owners = self.parts[nets]
        own = nets == v
        dS = np.bincount(owners[~own], weights=dl[~own], minlength=self.P)
        lam_v = int(self.lam[v])
        dS[p] -= lam_v - 1
        dS[q] += lam_v + int(dl[own].sum()) - 1
        touched = np.flatnonzero(dS)
        return nets, dl, touched, dS[touched].astype(np.int64)

    def apply(self, v: int, q: int, d=None) -> int:
        nets, dl, touched, dS = d if d is not None else self.delta(v, q)
        p = int(self.parts[v])
        self.lam[nets] += dl
        self.S[touched] += dS
        self.parts[v] = q
        self.W[p] -= self.w[v]
        self.W[q] += self.w[v]
        return int(dl.sum())


def reduce_max_send(A: sp.csr_matrix, parts: np.ndarray, w: np.ndarray, P: int, bound: float,
                    km1_budget: float = 0.02, candidates: int = 8, targets: int = 16, time_limit: float = 60.0,
                    progress=None) -> tuple[np.ndarray, dict]:
    """Greedy bottleneck descent; returns (new parts, stats). ``bound``: maximum part weight."""
    st = SendState(A, parts, w, P)
    start_max, start_total = int(st.S.max()), int(st.S.sum())
    budget = int(km1_budget * start_total)
    spent, moves, swaps = 0, 0, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < time_limit:
        p = int(np.argmax(st.S))
        smax = int(st.S[p])
        best = _best_step(st, p, smax, bound, candidates, targets, budget - spent)
        if best is None:
            break
        for v, q in best:
            spent += st.apply(v, q)
        moves += len(best)
        swaps += len(best) == 2
    if progress is not None:
        progress.note(f"bottleneck refinement: max send {start_max} -> {int(st.S.max())}, total "
                      f"{start_total} -> {int(st.S.sum())}, {moves} moves ({swaps} swaps)")
    return st.parts, {"max_send_before": start_max, "max_send_after": int(st.S.max()),
                      "volume_before": start_total, "volume_after": int(st.S.sum()), "moves": moves}


def _best_step(st: SendState, p: int, smax: int, bound: float, candidates: int, targets: int, budget: int):
    """The cheapest move or swap taking row v off the busiest sender p without any part reaching
    smax; None when there is none."""
    members = np.flatnonzero(st.parts == p)
    contrib = st.lam[members] - 1
    order = np.argsort(-contrib, kind="stable")[:candidates]
    quiet = np.argsort(st.S, kind="stable")
    quiet = quiet[quiet != p][:targets]
    best, best_key = None, None
    for v in members[order]:
        if st.lam[v] <= 1:
            break
        for q in quiet:
            q = int(q)
            step = _try(st, int(v), q, p, smax, bound, budget)
            if step is None:
                continue
            key = step[0]
            if best_key is None or key < best_key:
                best, best_key = step[1], key
        if best is not None:
            return best  # the best target for the most loaded candidate that has one
    return None


def _try(st: SendState, v: int, q: int, p: int, smax: int, bound: float, budget: int):
    """Move v to q, or swap it with a row u of q when q lacks room. Returns (key, steps) or None."""
    d = st.delta(v, q)
    nets, dl, touched, dS = d
    new = st.S[touched] + dS
    if new.max(initial=0) >= smax or dl.sum() > budget:
        return None
    if st.W[q] + st.w[v] <= bound:
        return (int(dl.sum()), int(new.max(initial=0))), [(v, q)]
    # q needs to give back weight: try its rows that send little, of about v's weight
    need = st.W[q] + st.w[v] - bound
    room_p = bound - (st.W[p] - st.w[v])
    inq = np.flatnonzero(st.parts == q)
    ok = (st.w[inq] >= need) & (st.w[inq] <= room_p)
    cand = inq[ok]
    if cand.size == 0:
        return None
    cand = cand[np.argsort(st.lam[cand], kind="stable")[:4]]  # rows that send least themselves
    st.apply(v, q, d)  # tentatively, to evaluate the partner exactly
    try:
        best = None
        for u in cand:
            du = st.delta(int(u), p)
            newu = st.S[du[2]] + du[3]
            total = int(dl.sum() + du[1].sum())
            if newu.max(initial=0) >= smax or total > budget:
                continue
            if best is None or total < best[0][0]:
                best = ((total, int(newu.max(initial=0))), [(v, q), (int(u), p)])
        return best
    finally:
        st.apply(v, p)  # undo
