"""Part weights, imbalance, and a fix-up that moves vertices out of overloaded parts.

Imbalance is measured against the smallest achievable maximum part weight,
L0 = max(total / P, heaviest single vertex): when one row alone is heavier than the average part
(soc-Slashdot0902 at P = 512: a row with 2511 nonzeros against an average of 1852) no partition
can do better than that row, so eps is honoured relative to L0. ``imbalance_vs_average`` is the
plain max / average - 1 for readers who want that.
"""
from __future__ import annotations

import heapq

import numpy as np


def part_weights(parts: np.ndarray, w: np.ndarray, P: int) -> np.ndarray:
    return np.bincount(parts, weights=w, minlength=P)


def lower_bound(w: np.ndarray, P: int) -> float:
    """The smallest possible maximum part weight: max(average, heaviest vertex)."""
    if w.size == 0:
        return 0.0
    return max(float(w.sum()) / P, float(w.max()))


def imbalance(parts: np.ndarray, w: np.ndarray, P: int) -> float:
    """max part weight / L0 - 1 (0 means the best any partition can do)."""
    L0 = lower_bound(w, P)
    return float(part_weights(parts, w, P).max() / L0 - 1.0) if L0 > 0 else 0.0


def imbalance_vs_average(parts: np.ndarray, w: np.ndarray, P: int) -> float:
    avg = float(w.sum()) / P
    return float(part_weights(parts, w, P).max() / avg - 1.0) if avg > 0 else 0.0


def backend_eps(w: np.ndarray, P: int, eps: float, backend_w: np.ndarray | None = None) -> float:
    """The epsilon to hand a KaHyPar-family tool so that its bound, (1 + e) * ceil(total' / P) over
    the weights it is given (``backend_w``, e.g. zero weights raised to 1), never exceeds ours,
    (1 + eps) * total / P over the true weights."""
    total = float(w.sum())
    btotal = float((w if backend_w is None else backend_w).sum())
    if total <= 0 or btotal <= 0:
        return eps
    return max(0.0, (1.0 + eps) * (total / P) / np.ceil(btotal / P) - 1.0)


def rebalance(parts: np.ndarray, w: np.ndarray, P: int, eps: float,
              cost: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Move vertices until every part weighs at most (1 + eps) * L0. Returns (parts, moves).

    From each overloaded part, vertices leave in order of ``cost`` (cheapest first; default: the
    heaviest first, so few vertices move) to the currently lightest part that has room.
    Loops over moved vertices only, which are few when the partitioner nearly met the bound.
    """
    parts = np.array(parts, dtype=np.int64, copy=True)
    w = np.asarray(w, dtype=np.float64)
    bound = (1.0 + eps) * lower_bound(w, P) * (1 + 1e-12)
    W = part_weights(parts, w, P)
    over = np.flatnonzero(W > bound)
    if over.size == 0:
        return parts, 0
    heap = [(W[q], q) for q in range(P) if W[q] <= bound]
    heapq.heapify(heap)
    moves = 0
    for p in over:
        members = np.flatnonzero(parts == p)
        order = np.argsort(-w[members] if cost is None else cost[members], kind="stable")
        for v in members[order]:
            if W[p] <= bound:
                break
            if w[v] == 0:
                continue
            # lightest part with room for v (stale heap entries are refreshed lazily)
            while heap:
                wq, q = heap[0]
                if wq != W[q]:
                    heapq.heapreplace(heap, (W[q], q))
                    continue
                break
            if not heap or W[heap[0][1]] + w[v] > bound:
                continue  # v fits nowhere; try a lighter one
            q = heap[0][1]
            parts[v] = q
            W[p] -= w[v]
            W[q] += w[v]
            heapq.heapreplace(heap, (W[q], q))
            moves += 1
    if (W > bound).any():
        moves += _swap(parts, w, W, bound, cost)
    if (W > bound).any():
        moves += _repack(parts, w, W, bound)
    return parts, moves


def _swap(parts: np.ndarray, w: np.ndarray, W: np.ndarray, bound: float, cost: np.ndarray | None) -> int:
    """Second phase of ``rebalance``, for parts that single moves could not fix: when every
    vertex of an overloaded part p is heavier than the room left anywhere (a few heavy rows of
    similar weight per part, e.g. ca-HepPh's author cliques at P >= 256), exchange a vertex v of
    p for a lighter vertex u of a part q that stays within the bound. Among the exchanges that
    bring p within the bound, the one moving the least weight is taken, else the one that
    lightens p most. Updates ``parts`` and ``W`` in place; returns the vertices moved.
    Each step costs O(n) vectorised work; steps are few (about one per overloaded part)."""
    moves = 0
    stuck: set[int] = set()
    for _ in range(4 * len(W) + 16):
        over = [int(p) for p in np.flatnonzero(W > bound) if int(p) not in stuck]
        if not over:
            break
        p = max(over, key=lambda q: W[q])
        members = np.flatnonzero(parts == p)
        order = np.argsort(-w[members] if cost is None else cost[members], kind="stable")
        # candidate partners: vertices of parts within the bound
        cand = np.flatnonzero(W[parts] <= bound)
        wu, room = w[cand], bound - W[parts[cand]]
        best = None
        for v in members[order]:
            d = w[v] - wu                      # weight p sheds (and q gains) by the exchange
            ok = (d > 0) & (d <= room)
            if not ok.any():
                continue
            dk = np.where(ok, d, np.inf)
            enough = ok & (d >= W[p] - bound)
            k = int(np.argmin(np.where(enough, d, np.inf))) if enough.any() \
                else int(np.argmin(-np.where(ok, d, -np.inf)))
            best = (v, int(cand[k]), float(dk[k]))
            if enough.any():
                break
        if best is None:
            stuck.add(p)
            continue
        v, u, dd = best
        q = int(parts[u])
        parts[v], parts[u] = q, p
        W[p] -= dd
        W[q] += dd
        moves += 2
    return moves


def _repack(parts: np.ndarray, w: np.ndarray, W: np.ndarray, bound: float) -> int:
    """Last resort of ``rebalance``: the overloaded parts and as many of the lightest parts are
    emptied and their vertices packed again, heaviest first into the lightest of them (LPT);
    the set of lightest parts doubles until the packing fits. Touches few parts: it runs only
    when moves and exchanges left some part over the bound. Returns the vertices moved."""
    P = len(W)
    over = np.flatnonzero(W > bound)
    k = len(over)
    best = None
    while True:
        light = [int(q) for q in np.argsort(W, kind="stable") if W[q] <= bound][:k]
        S = np.concatenate([over, np.asarray(light, dtype=np.int64)])
        pool = np.flatnonzero(np.isin(parts, S))
        pool = pool[np.argsort(-w[pool], kind="stable")]
        heap = [(0.0, int(q)) for q in np.sort(S)]
        heapq.heapify(heap)
        new = np.empty(len(pool), dtype=np.int64)
        for i, v in enumerate(pool):
            a, q = heap[0]
            new[i] = q
            heapq.heapreplace(heap, (a + w[v], q))
        top = max(a for a, _ in heap)
        if best is None or top < best[0]:
            best = (top, pool, new)
        if top <= bound or len(light) + k >= P:
            break
        k *= 2
    top, pool, new = best
    if top >= W.max():
        return 0  # no better than before: leave it
    moved = int((parts[pool] != new).sum())
    parts[pool] = new
    W[:] = np.bincount(parts, weights=w, minlength=P)
    return moved
