"""twoface — the Two-Face thesis (Block, 2024), chapter 4: sync stripes by collectives, async stripes by one-sided gets.

A keeps its 1D rows. Inside each megatile (rows of rank r x columns owned by rank q) the
columns, in q's local order, are cut into stripes of width W. Algorithm 4.1 classifies every
non-local stripe of r as async (fetch only the rows its nonzeros touch, one-sided) or sync
(receive the whole dense stripe by a collective), balancing the two halves by eq. 4.4 with the
cost-model coefficients. Sync stripes of one owner needed by the same set of ranks travel in
one broadcast restricted to that set (a sub-communicator); all async stripes r needs from q are
fetched by one MPI_Rget through an indexed datatype listing their row runs, rows up to
127/K + 1 apart coalesced. A memory cap turns sync stripes async when a process would exceed it.

One thread, non-blocking: the owner exposes B in a window (double-buffered, one barrier per
product), gets and broadcasts are posted, the local part is multiplied while they are in
flight, then each arriving piece is multiplied and accumulated with the semiring's monoid.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...instr import DropRows, Fill, Get, IBcast, MxM, Pack, RecvMxM, WaitSends, WinExpose
from ...kernels.buffers import window_row_bytes
from ..options import memory_cap
from . import register_plan
from .p2p1d import add_remote_block, narrow_only


def default_width(K: int) -> int:
    """Stripe width: the Two-Face thesis uses wide stripes for small K; keep a stripe around 8 KiB of B."""
    return int(max(8, min(512, 1024 // max(1, K) * 8)))


def classify(l: np.ndarray, n: np.ndarray, K: int, W: int, coef: dict) -> np.ndarray:
    """Algorithm 4.1 for one node's non-local stripes: l[i] rows of B stripe i needs, n[i] its
    nonzeros. Returns True where the stripe is async. z_i = K(beta_A l_i + gamma_A n_i) + u (eqs.
    4.8-4.10); stripes are taken async in ascending z while their sum stays below
    S_T (beta_S K W + alpha_S) (eq. 4.11)."""
    l = np.asarray(l, dtype=float)
    n = np.asarray(n, dtype=float)
    u = coef["alpha_A"] + coef["kappa_A"] + coef["beta_S"] * K * W + coef["alpha_S"]
    z = K * (coef["beta_A"] * l + coef["gamma_A"] * n) + u
    limit = l.size * (coef["beta_S"] * K * W + coef["alpha_S"])
    order = np.argsort(z, kind="stable")
    csum = np.cumsum(z[order])
    take = int(np.searchsorted(csum, limit, side="left"))   # while sum + z_i < limit
    out = np.zeros(l.size, dtype=bool)
    out[order[:take]] = True
    return out


def coalesce(rows: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray]:
    """Runs (starts, counts) covering sorted row positions; rows up to 127/K + 1 apart join one
    run (the unused rows between them are fetched too: fewer, larger transfers)."""
    if rows.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    gap = 127 // max(1, K) + 1
    breaks = np.flatnonzero(np.diff(rows) > gap) + 1
    starts = rows[np.r_[0, breaks]]
    ends = rows[np.r_[breaks - 1, rows.size - 1]] + 1
    return starts.astype(np.int64), (ends - starts).astype(np.int64)


@dataclass
class Stripes:
    """The non-local stripes of one rank: owner, stripe index within the owner, width, l, n."""
    owner: np.ndarray
    index: np.ndarray
    width: np.ndarray
    l: np.ndarray
    n: np.ndarray


def column_stripes(cols, r: int, W: int) -> tuple[np.ndarray, np.ndarray]:
    """Each column's global stripe id (-1: the columns rank r owns) and the first stripe id of
    each owner. Per column, not per entry: an entry's stripe is its column's."""
    nstripes = -(-cols.counts // W)                        # per owner
    base = np.r_[0, np.cumsum(nstripes)]
    dt = np.int32 if base[-1] < np.iinfo(np.int32).max else np.int64
    csid = (cols.pos // W).astype(dt)
    csid += base[cols.parts].astype(dt)
    csid[cols.parts == r] = -1
    return csid, base


def column_stats(A_r: sp.csr_array, r: int, cols, W: int) -> tuple[Stripes, np.ndarray, np.ndarray]:
    """Stripe statistics of rank r's rows, each column's stripe id (column_stripes) and whether
    r's rows touch it. From per-column counts: l (distinct columns) and n (entries) of a stripe
    are sums over its columns, so no per-entry array is built."""
    csid, base = column_stripes(cols, r, W)
    colcount = np.bincount(A_r.indices, minlength=A_r.shape[1])   # entries per column
    touched = colcount > 0
    far = touched & (csid >= 0)
    total = int(base[-1])
    l_all = np.bincount(csid[far], minlength=total)
    ids = np.flatnonzero(l_all)                             # the stripes r's rows touch, ascending
    # (float weights: exact, the counts are far below 2^53)
    n = np.bincount(csid[far], weights=colcount[far], minlength=total)[ids].astype(np.int64)
    l = l_all[ids].astype(np.int64)
    own = np.searchsorted(base, ids, side="right") - 1
    idx = ids - base[own]
    width = np.minimum(W, cols.counts[own] - idx * W)
    return Stripes(own, idx, width, l, n), csid, touched


def stripes_of(A_r: sp.csr_array, r: int, cols, W: int) -> tuple[Stripes, np.ndarray]:
    """Stripe statistics of rank r's rows (vectorised) and each entry's global stripe id (-1 local)."""
    st, csid, _ = column_stats(A_r, r, cols, W)
    return st, csid[A_r.indices].astype(np.int64)


def apply_memory_cap(st: Stripes, is_async: np.ndarray, K: int, itemsize: int, base_bytes: float, cap: float):
    """Turn sync stripes async, those saving the most memory (W - l rows) first, while the
    process's buffers would exceed ``cap`` bytes. Returns the new mask and how many moved."""
    is_async = is_async.copy()
    need = base_bytes + K * itemsize * (np.where(is_async, st.l, st.width).sum())
    if need <= cap:
        return is_async, 0
    sync = np.flatnonzero(~is_async)
    saving = (st.width[sync] - st.l[sync]) * K * itemsize
    order = sync[np.argsort(-saving, kind="stable")]
    cum = need - np.cumsum(np.sort(saving)[::-1])
    k = int(np.searchsorted(-cum, -cap, side="left")) + 1 if cum.size else 0
    k = min(k, order.size)
    is_async[order[:k]] = True
    return is_async, k


def _width(ctx) -> int:
    return int(ctx.opt.stripe_width or default_width(ctx.K))


def _check(ctx):
    return narrow_only(ctx)


@register_plan("twoface", check=_check, spmd=True)
def lower(ctx):
    """Two-Face: per-stripe choice of collective (sync) or one-sided get (async)."""
    W = _width(ctx)
    base = np.r_[0, np.cumsum(-(-ctx.cols.counts // W))]   # each owner's first stripe id
    per_rank, summary = _classify(ctx, W, base)
    groups, split_ids, placed = _sync_groups(ctx, summary, base)
    win = ctx.add_window([(int(ctx.cols.counts[r]), window_row_bytes(ctx.K, ctx.b_dtype, not ctx.b_full))
                          for r in range(ctx.P)])
    gets, served = _async_gets(ctx, per_rank)
    n_async, n_sync, moved = (sum(x[k] for x in summary) for k in (1, 2, 3))
    ctx.info.predicted = {"stripe_width": W, "async_stripes": n_async, "sync_stripes": n_sync,
                          "sync_groups": len(groups), "memory_cap_moved": moved}
    ctx.info.notes.append(f"twoface: W={W}, {n_async} async / {n_sync} sync stripes, {len(groups)} broadcast groups"
                          + (f", {moved} stripes made async by the memory cap" if moved else ""))
    sync = (groups, split_ids, placed, base, W)
    for r, (A_r, _, csid, _, async_col, _, _, _) in per_rank.items():
        pieces, block = _pieces(ctx, r, A_r, csid, async_col, gets[r], sync)
        ctx.emit_rank(r, _rank_program(ctx, r, A_r, pieces, block, gets[r], sync, win, served))


def _classify(ctx, W: int, base: np.ndarray):
    """Every rank's stripes classified (Algorithm 4.1, then the memory cap); under SPMD planning
    each rank its own, and one allgather tells every rank which stripes each needs in sync:
    (per rank: (A_r, stripes, each column's stripe, touched columns, async columns, stripe ids,
    async flags, stripes the cap moved), per rank: (sync stripe ids, #async, #sync, #moved))."""
    rows, cols, K = ctx.rows, ctx.cols, ctx.K
    coef = ctx.coefficients.twoface(K)
    itemsize = ctx.b_dtype.np.itemsize
    cap = memory_cap(ctx.opt, ctx.P)
    total = int(base[-1])
    per_rank = {}
    for r in ctx.ranks:
        A_r = ctx.rows_of(r)
        st, csid, touched = column_stats(A_r, r, cols, W)
        is_async = classify(st.l, st.n, K, W, coef)
        own_bytes = (3 * cols.counts[r] + rows.counts[r]) * K * itemsize  # B, the window (x2), C
        is_async, m = apply_memory_cap(st, is_async, K, itemsize, own_bytes, cap)
        gids = base[st.owner] + st.index
        # the columns of r's rows in async stripes (per column: an entry's stripe is its column's)
        async_ids = np.zeros(total, dtype=bool)
        async_ids[gids[is_async]] = True
        async_col = (csid >= 0) & async_ids[np.maximum(csid, 0)]
        del async_ids
        per_rank[r] = (A_r, st, csid, touched, async_col, gids, is_async, m)
    summary = ctx.per_rank(lambda r: (per_rank[r][5][~per_rank[r][6]], int(per_rank[r][6].sum()),
                                      int((~per_rank[r][6]).sum()), per_rank[r][7]))
    return per_rank, summary


def _sync_groups(ctx, summary: list, base: np.ndarray):
    """Sync stripes of one owner needed by the same set of ranks share one broadcast; groups with
    disjoint members share one sub-communicator split (fewer collective set-ups). Returns
    (groups: (owner, members, stripe ids), the splits' group numbers, each group's split)."""
    P, total = ctx.P, int(base[-1])
    sync_need = np.zeros((total, P), dtype=bool)
    for r, (sync_gids, _, _, _) in enumerate(summary):
        sync_need[sync_gids, r] = True
    groups = []
    for q in range(P):
        need = sync_need[base[q]:base[q + 1]]
        has = np.flatnonzero(need.any(axis=1))
        if not has.size:
            continue
        keys, inv = np.unique(need[has], axis=0, return_inverse=True)
        for g in range(keys.shape[0]):
            members = tuple(sorted(set(np.flatnonzero(keys[g]).tolist()) | {q}))
            groups.append((q, members, base[q] + has[np.flatnonzero(inv.reshape(-1) == g)]))
    splits = []   # each: [colors list, used ranks set, next colour]
    placed = []
    for _, members, _ in groups:
        si = next((k for k, sp_ in enumerate(splits) if sp_[1].isdisjoint(members)), None)
        if si is None:
            splits.append([[None] * P, set(), 0])
            si = len(splits) - 1
        colors, used, color = splits[si]
        for m in members:
            colors[m] = color
        used.update(members)
        splits[si][2] = color + 1
        placed.append(si)
    return groups, [ctx.add_split(colors) for colors, _, _ in splits], placed


def _async_gets(ctx, per_rank: dict):
    """For each (r, q), the rows of q's async stripes r touches (runs coalesced, and every row the
    runs cover), and what each owner serves (its WinExpose's account: words and gets), summed over
    the ranks that get from it."""
    cols, K, P = ctx.cols, ctx.K, ctx.P
    gets = {}
    for r, (_, _, _, touched, async_col, _, _, _) in per_rank.items():
        gets[r] = {}
        sel = touched & async_col                      # the async columns r's rows touch
        for q in np.unique(cols.parts[sel]):
            pos = np.sort(cols.pos[sel & (cols.parts == q)])   # (distinct: one position per column)
            starts, counts = coalesce(pos, K)
            # every row of the ranges, without a Python loop per range
            fetched = np.repeat(starts - np.r_[0, np.cumsum(counts)[:-1]], counts) + np.arange(int(counts.sum()))
            gets[r][int(q)] = (starts, counts, fetched)

    def serves(r):   # words and gets rank r takes from each owner
        words, msgs = np.zeros(P, np.int64), np.zeros(P, np.int64)
        for q, (_, _, fetched) in gets[r].items():
            words[q] += fetched.size * K
            msgs[q] += 1
        return words, msgs
    taken = ctx.per_rank(serves)
    return gets, (sum(w for w, _ in taken), sum(m for _, m in taken))


def _pieces(ctx, r: int, A_r, csid, async_col, gets: dict, sync: tuple):
    """Rank r's column pieces (local, one per owner it gets from, one per broadcast group it is in)
    and ``block(pid, width)``, a piece's entries of A_r with its columns renumbered. Every entry of
    one column goes to the same piece at the same position, so both are worked out per column
    (ckey, cpos) and the entries gathered once per piece: no per-entry int64 arrays, no COO copy."""
    cols = ctx.cols
    groups, _, _, base, W = sync
    ncols = cols.parts.size
    ckey = np.full(ncols, -1, dtype=np.int32)     # -1: no piece; else a piece id
    # the column's position in its piece (int32 when it fits: scipy keeps such indices int32)
    cpos = np.zeros(ncols, dtype=np.int32 if ncols < np.iinfo(np.int32).max else np.int64)
    pieces = []                                    # (kind, info, width)
    mine = cols.parts == r
    ckey[mine] = 0
    cpos[mine] = cols.pos[mine]
    del mine
    pieces.append(("local", None, int(cols.counts[r])))
    for q, (_, _, fetched) in gets.items():
        m = async_col & (cols.parts == q)
        ckey[m] = len(pieces)
        cpos[m] = np.searchsorted(fetched, cols.pos[m])
        pieces.append(("get", q, fetched.size))
    in_group = np.zeros(int(base[-1]), dtype=bool)
    for gi, (q, members, sids) in enumerate(groups):
        if r not in members:
            continue
        stripe_rows = np.concatenate([np.arange(ix * W, min((ix + 1) * W, cols.counts[q])) for ix in sids - base[q]])
        if r == q:
            pieces.append(("root", gi, stripe_rows))
            continue
        in_group[sids] = True
        m = (csid >= 0) & in_group[np.maximum(csid, 0)] & ~async_col
        in_group[sids] = False
        ckey[m] = len(pieces)
        cpos[m] = np.searchsorted(stripe_rows, cols.pos[m])
        pieces.append(("bcast", gi, stripe_rows.size))
    del in_group
    key = ckey.astype(np.int16 if len(pieces) < (1 << 15) else np.int32)[A_r.indices]   # each entry's piece
    del ckey
    assert (key >= 0).all(), "twoface: an entry of A was assigned to no piece"
    # the entries grouped by piece, each group in row order (a stable sort: 16-bit keys sort by
    # radix); one pass for all pieces, where a scan per piece cost nnz x pieces at large P
    order = np.argsort(key, kind="stable")
    bounds = np.searchsorted(key[order], np.arange(len(pieces) + 1))
    del key

    def block(pid, width):
        sel = order[bounds[pid]:bounds[pid + 1]]
        indptr = np.searchsorted(sel, A_r.indptr)   # the piece's entries before each row
        B = sp.csr_array((A_r.data[sel], cpos[A_r.indices[sel]], indptr), shape=(A_r.shape[0], width))
        B.sum_duplicates()   # canonical (sorted columns), as the COO construction made it
        return B
    return pieces, block


def _rank_program(ctx, r: int, A_r, pieces: list, block, gets: dict, sync: tuple, win: int, served: tuple) -> list:
    """Rank r's instructions: expose B, post the gets, post the broadcasts (in group order: the
    same on every member), multiply the local block, then each arriving piece as it completes."""
    cols, K = ctx.cols, ctx.K
    groups, split_ids, placed, _, _ = sync
    dtype, presence, in_place = ctx.b_dtype.value, not ctx.b_full, ctx.in_place
    prog, posted, blocks, row_lists, roots = [], [], [], [], []
    prog.append(WinExpose(win, ctx.b, int(cols.counts[r]), K, dtype, presence=presence,
                          served_words=int(served[0][r]), served_messages=int(served[1][r]), product=ctx.index))
    for pid, (kind, info, width) in enumerate(pieces):
        if kind == "get":
            starts, counts, fetched = gets[info]
            s_ = ctx.slot()
            prog.append(Get(s_, win, info, int(cols.counts[info]), starts, counts, int(fetched.size), K, dtype,
                            presence=presence, product=ctx.index))
            posted.append((s_, pid, width))
    for pid, (kind, info, width) in enumerate(pieces):
        if kind in ("root", "bcast"):
            q, members, _ = groups[info]
            buf = None
            if kind == "root":
                buf = ctx.slot()
                prog.append(Pack(buf, ctx.b, width, presence=presence, product=ctx.index))
            s_ = ctx.slot()
            prog.append(IBcast(s_, buf, members.index(q), int(width.size) if kind == "root" else width, K, dtype,
                               presence=presence, group=split_ids[placed[info]], product=ctx.index))
            if kind == "root":
                roots.append(s_)
            else:
                posted.append((s_, pid, width))
    if in_place:
        prog.append(Fill(ctx.out, int(ctx.rows.counts[r]), K, ctx.semiring.monoid, ctx.compute.value,
                         product=ctx.index))
    prog.append(MxM(ctx.out, ctx.const(r, ctx.gb(block(0, pieces[0][2]))), ctx.b, ctx.semiring,
                    accumulate=in_place, **ctx.mask, product=ctx.index))
    for _, pid, width in posted:
        add_remote_block(ctx, r, block(pid, width), ctx.whole_blocks, blocks, row_lists)
    if posted:
        prog.append(RecvMxM(ctx.out, tuple(p[0] for p in posted), tuple(blocks), ctx.semiring, tuple(row_lists),
                            **ctx.mask, product=ctx.index))
    if roots:
        prog.append(WaitSends(tuple(roots), product=ctx.index))
    empty = np.flatnonzero(np.diff(A_r.indptr) == 0)
    if in_place and empty.size:
        prog.append(DropRows(ctx.out, empty, product=ctx.index))
    return prog
