"""Bottleneck refinement: lower the largest per-process send volume and message count.

KM1 partitioners minimise the TOTAL volume; a 1D plan waits for the process that sends most.
Starting from their result, two greedy phases move (or swap) single rows:

1. volume: take rows off the busiest sender -- rows j whose column many parts need, so owning j
   means sending row j of B to lambda_j - 1 peers -- and give them to the least busy senders;
2. messages: for the process with the most messages, remove its smallest messages (peers it sends
   only a row or two) by moving the rows involved to one side.

A step is taken only if every part stays within the weight bound, no process ends up at the
current maximum (of the phase's metric) or above the other metric's maximum, and the total
volume has grown by at most ``km1_budget`` of the start.

State is exact: net j's pins are the rows with a nonzero in column j plus row j (its owner), so
process p sends sum over its rows j of (lambda_j - 1) rows, V[p, x] of them to process x, and
moving row v only touches the nets v is a pin of. Each step costs O(sum of those nets' sizes);
loops run over steps (hundreds), not over rows.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

MAX_DENSE_P = 4096  # V is a dense P x P int32 matrix (64 MB at 4096)


@dataclass
class Delta:
    nets: np.ndarray  # the nets v is a pin of
    dl: np.ndarray  # change of lambda per net
    keys: np.ndarray  # flat indices src * P + dst of V entries that change
    dv: np.ndarray  # their change
    parts: np.ndarray  # processes whose send volume or message count changes
    dS: np.ndarray  # change of send volume of ``parts``
    dM: np.ndarray  # change of message count of ``parts``

    @property
    def dkm1(self) -> int:
        return int(self.dl.sum())


class SendState:
    """parts, net connectivities lambda, pair volumes V, per-part send volume S, messages M, weight W."""

    def __init__(self, A: sp.csr_matrix, parts: np.ndarray, w: np.ndarray, P: int):
        n = A.shape[0]
        M = sp.csr_matrix((np.ones(A.nnz, dtype=np.int8), A.indices, A.indptr), shape=A.shape)
        M = (M + sp.identity(n, dtype=np.int8, format="csr")).tocsr()
        M.sort_indices()
        self.rows_ptr, self.rows_idx = M.indptr.astype(np.int64), M.indices.astype(np.int64)  # v -> its nets
        C = M.tocsc()
        C.sort_indices()
        self.pins_ptr, self.pins = C.indptr.astype(np.int64), C.indices.astype(np.int64)  # net -> pins
        self.pins_size = np.diff(self.pins_ptr)
        self.P = P
        self.parts = np.array(parts, dtype=np.int64, copy=True)
        self.w = np.asarray(w, dtype=np.int64)
        self.W = np.bincount(self.parts, weights=self.w, minlength=P).astype(np.int64)
        net = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.pins_ptr))
        key = np.sort(net * P + self.parts[self.pins])
        key = key[np.r_[True, key[1:] != key[:-1]]]
        jn, x = key // P, key % P
        self.lam = np.bincount(jn, minlength=n).astype(np.int64)
        src = self.parts[jn]
        far = src != x
        self.V = np.bincount(src[far] * P + x[far], minlength=P * P).astype(np.int32).reshape(P, P)
        self.S = self.V.sum(axis=1).astype(np.int64)
        self.M = np.count_nonzero(self.V, axis=1).astype(np.int64)
        # a distinct number per state: a move gets a fresh one, its undo restores the one before
        self.version, self._versions, self._before = 0, 0, []
        self._rows: dict = {}  # v -> (version, what _row computed)

    def _gather(self, nets: np.ndarray):
        starts, sizes = self.pins_ptr[nets], self.pins_size[nets]
        idx = np.repeat(starts - np.r_[0, np.cumsum(sizes)[:-1]], sizes) + np.arange(sizes.sum())
        return self.parts[self.pins[idx]], np.repeat(np.arange(nets.size), sizes)

    def _row(self, v: int):
        """What every move of v shares, whatever its target: v's nets, the parts of their pins,
        how many of them lie in v's part, and the parts v's own net reaches. Kept per state: a
        step tries one row against many targets, and a tentative move in between is undone by
        its inverse, which returns to the state (and ``version``) before it."""
        got = self._rows.get(v)
        if got is not None and got[0] == self.version:
            return got[1]
        nets = self.rows_idx[self.rows_ptr[v]:self.rows_ptr[v + 1]]
        pp, which = self._gather(nets)
        p = self.parts[v]
        in_p = np.bincount(which[pp == p], minlength=nets.size)
        own = nets == v
        o = self.parts[nets]
        lam_set = np.unique(self.parts[self.pins[self.pins_ptr[v]:self.pins_ptr[v + 1]]])
        leaves = in_p == 1
        other_leaves = ~own & leaves
        val = (nets, pp, which, own, o, lam_set, leaves, o[other_leaves] * self.P + p, bool(leaves[own][0]))
        if len(self._rows) > 256:
            self._rows.clear()
        self._rows[v] = (self.version, val)
        return val

    def delta(self, v: int, q: int) -> Delta:
        """Exact effect of moving row v to part q, without applying it."""
        P, p = self.P, int(self.parts[v])
        nets, pp, which, own, o, lam_set, leaves, k_leave, own_leaves = self._row(v)
        joins = np.bincount(which[pp == q], minlength=nets.size) == 0
        dl = joins.astype(np.int64) - leaves
        # other nets: their owner stops sending to p / starts sending to q
        k_join = o[~own & joins] * P + q
        # v's own net changes owner: p stops sending row v, q sends it to the parts then in the net
        after = lam_set
        if own_leaves:
            after = after[after != p]
        if joins[own][0] and not (after == q).any():
            after = np.sort(np.r_[after, q])
        before_r, after_r = lam_set[lam_set != p], after[after != q]
        keys = np.concatenate((k_leave, k_join, p * P + before_r, q * P + after_r))
        dv = np.concatenate((np.full(k_leave.size, -1, dtype=np.int64), np.ones(k_join.size, dtype=np.int64),
                             np.full(before_r.size, -1, dtype=np.int64), np.ones(after_r.size, dtype=np.int64)))
        keys, inv = np.unique(keys, return_inverse=True)
        dv = np.bincount(inv, weights=dv).astype(np.int64)
        nz = dv != 0
        keys, dv = keys[nz], dv[nz]
        old = self.V.ravel()[keys]
        new = old + dv
        src = keys // P
        touched, sinv = np.unique(src, return_inverse=True)
        dS = np.bincount(sinv, weights=dv, minlength=touched.size).astype(np.int64)
        dM = np.bincount(sinv, weights=(new > 0).astype(np.int64) - (old > 0), minlength=touched.size)
        return Delta(nets, dl, keys, dv, touched, dS, dM.astype(np.int64))

    def apply(self, v: int, q: int, d: Delta | None = None) -> int:
        d = d if d is not None else self.delta(v, q)
        p = int(self.parts[v])
        self.lam[d.nets] += d.dl
        self.V.ravel()[d.keys] += d.dv.astype(np.int32)
        self.S[d.parts] += d.dS
        self.M[d.parts] += d.dM
        self.parts[v] = q
        self.W[p] -= self.w[v]
        self.W[q] += self.w[v]
        self._before.append(self.version)
        self._versions += 1
        self.version = self._versions
        return d.dkm1

    def undo(self, v: int, p: int, d: Delta) -> None:
        """Move v back to p after ``apply(v, q, d)``: the inverse of d, so nothing is recomputed
        and the state (``version`` included) is as it was."""
        q = int(self.parts[v])
        self.lam[d.nets] -= d.dl
        self.V.ravel()[d.keys] -= d.dv.astype(np.int32)
        self.S[d.parts] -= d.dS
        self.M[d.parts] -= d.dM
        self.parts[v] = p
        self.W[q] -= self.w[v]
        self.W[p] += self.w[v]
        self.version = self._before.pop()


def refine_bottleneck(A: sp.csr_matrix, parts: np.ndarray, w: np.ndarray, P: int, bound: float,
                      km1_budget: float = 0.01, volume_share: float = 0.6, msg_weight: float = 4.0,
                      time_limit: float = 60.0,
                      progress=None) -> tuple[np.ndarray, dict]:
    """Both phases (volume, then messages); returns (new parts, before/after numbers)."""
    if P < 2 or P > MAX_DENSE_P or A.shape[0] != A.shape[1]:
        return np.asarray(parts), {"skipped": True}
    st = SendState(A, parts, w, P)
    info = {"max_send_before": int(st.S.max()), "max_messages_before": int(st.M.max()),
            "volume_before": int(st.S.sum())}
    t_end = time.perf_counter() + time_limit
    spent, steps = 0, 0
    # the volume phase may use part of the budget, the message phase the rest
    for phase, share in ((_volume_step, volume_share), (_message_step, 1.0)):
        budget = int(km1_budget * share * info["volume_before"])
        while time.perf_counter() < t_end:
            step = phase(st, bound, budget - spent, msg_weight)
            if step is None:
                break
            for v, q in step:
                spent += st.apply(v, q)
            steps += 1
    info.update(max_send_after=int(st.S.max()), max_messages_after=int(st.M.max()), volume_after=int(st.S.sum()),
                steps=steps)
    if progress is not None:
        progress.note(f"bottleneck refinement: max send {info['max_send_before']} -> {info['max_send_after']}, "
                      f"max messages {info['max_messages_before']} -> {info['max_messages_after']}, volume "
                      f"{info['volume_before']} -> {info['volume_after']} ({steps} steps)")
    return st.parts, info


def _within(st: SendState, deltas: list[Delta], base_S: np.ndarray, base_M: np.ndarray, target: int, smax: int,
            mmax: int, volume_phase: bool) -> bool:
    """Do the steps ``deltas`` (the first already applied to ``st`` when there are two) keep
    every process within the limits, compared with the state before the step (base_S, base_M)?
    The phase's metric: the target drops below its maximum and nobody rises to it; the other
    metric: nobody rises above its maximum."""
    parts = np.union1d(np.concatenate([d.parts for d in deltas]), [target])
    s, m = st.S[parts].copy(), st.M[parts].copy()
    last = deltas[-1]  # only the last delta is not yet in st
    at = np.searchsorted(parts, last.parts)
    s[at] += last.dS
    m[at] += last.dM
    s0, m0 = base_S[parts], base_M[parts]
    t = np.searchsorted(parts, target)
    if volume_phase:
        return bool(s[t] < smax and (s[s > s0] < smax).all() and (m <= mmax).all())
    return bool(m[t] < mmax and (m[m > m0] < mmax).all() and (s <= smax).all())


def _try(st: SendState, v: int, q: int, target: int, bound: float, smax: int, mmax: int, volume_phase: bool,
         budget: int):
    """Move v to q, or swap it with a light-sending row of q when q lacks room.
    Returns ((change of total volume, change of total messages), steps) or None."""
    p = int(st.parts[v])
    d = st.delta(v, q)
    if d.dkm1 > budget:
        return None
    if st.W[q] + st.w[v] <= bound:
        ok = _within(st, [d], st.S, st.M, target, smax, mmax, volume_phase)
        return ((d.dkm1, int(d.dM.sum())), [(v, q)]) if ok else None
    # q must give weight back to p: its rows of about v's weight that send least themselves
    need, room_p = st.W[q] + st.w[v] - bound, bound - (st.W[p] - st.w[v])
    inq = np.flatnonzero(st.parts == q)
    cand = inq[(st.w[inq] >= need) & (st.w[inq] <= room_p)]
    if cand.size == 0:
        return None
    cand = cand[np.argsort(st.lam[cand], kind="stable")[:4]]
    base_S, base_M = st.S.copy(), st.M.copy()
    st.apply(v, q, d)  # tentatively, so the partner's effect is exact
    try:
        best = None
        for u in cand:
            du = st.delta(int(u), p)
            total = d.dkm1 + du.dkm1
            if total > budget or (best is not None and total >= best[0][0]):
                continue
            if _within(st, [d, du], base_S, base_M, target, smax, mmax, volume_phase):
                best = ((total, int(d.dM.sum() + du.dM.sum())), [(v, q), (int(u), p)])
        return best
    finally:
        st.undo(v, p, d)


def _volume_step(st: SendState, bound: float, budget: int, msg_weight: float, candidates: int = 8,
                 targets: int = 16):
    """Take one row off the process that sends most, to one of the least busy senders."""
    p = int(np.argmax(st.S))
    smax, mmax = int(st.S[p]), int(st.M.max())
    members = np.flatnonzero(st.parts == p)
    # moving v saves p the lambda_v - 1 sends of row v, but p then sends to v's new part the rows
    # of v's nets p owns: rank by that pessimistic gain
    sizes = st.rows_ptr[members + 1] - st.rows_ptr[members]
    idx = np.repeat(st.rows_ptr[members] - np.r_[0, np.cumsum(sizes)[:-1]], sizes) + np.arange(sizes.sum())
    nets = st.rows_idx[idx]
    mine = (st.parts[nets] == p) & (nets != np.repeat(members, sizes))
    owned = np.bincount(np.repeat(np.arange(members.size), sizes), weights=mine, minlength=members.size)
    gain = st.lam[members] - 1 - owned
    order = np.argsort(-gain, kind="stable")[:candidates]
    order = members[order[gain[order] > 0]]
    quiet = np.argsort(st.S, kind="stable")
    quiet = quiet[quiet != p][:targets]
    best = None
    for v in order:  # most promising first; stop at the first candidate that has a free step
        for q in quiet:
            t = _try(st, int(v), int(q), p, bound, smax, mmax, True, budget)
            if t is not None and (best is None or _cost(t[0], msg_weight) < _cost(best[0], msg_weight)):
                best = t
        if best is not None and _cost(best[0], msg_weight) <= 0:
            break
    return best[1] if best is not None else None


def _message_step(st: SendState, bound: float, budget: int, msg_weight: float, pairs: int = 6):
    """Remove one of the smallest messages of the process that sends the most messages."""
    p = int(np.argmax(st.M))
    smax, mmax = int(st.S.max()), int(st.M[p])
    row = st.V[p]
    peers = np.flatnonzero(row)
    peers = peers[np.argsort(row[peers], kind="stable")[:pairs]]
    members = np.flatnonzero(st.parts == p)
    pp, which = st._gather(members)  # parts of the pins of the nets p owns
    for x in peers:
        x = int(x)
        rows_sent = members[np.unique(which[pp == x])]  # rows p sends to x
        # either the rows go to x, or x's rows that need them come to p
        moves = [(int(j), x) for j in rows_sent]
        for j in rows_sent:
            pins = st.pins[st.pins_ptr[j]:st.pins_ptr[j + 1]]
            moves += [(int(i), p) for i in pins[st.parts[pins] == x]]
        if len(moves) > 8:
            continue
        tries = [t for v, q in moves if (t := _try(st, v, q, p, bound, smax, mmax, False, budget)) is not None]
        if tries:
            return min(tries, key=lambda t: _cost(t[0], msg_weight))[1]
    return None


def _cost(delta: tuple[int, int], msg_weight: float) -> float:
    """What a step costs: added volume (rows) plus added messages at ``msg_weight`` rows each."""
    return delta[0] + msg_weight * delta[1]
