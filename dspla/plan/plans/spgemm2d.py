"""summa2d_sparse — Sparse SUMMA (Buluç and Gilbert, "Parallel Sparse Matrix-Matrix Multiplication
and Indexing: Implementation and Experiments"; CombBLAS's 2D SpGEMM) for C = A ⊕.⊗ B with both
operands sparse and static, on a pr x pc grid, square or not (pr, pc ≥ 2).

Rank r = (i, j) = (r // pc, r % pc). Row block I_i of A and C: the 1D rows of process row i's
ranks; column block J_j of B and C: the 1D rows of B's column dim owned by ranks j·pr ... (j+1)·pr
- 1; the inner dimension in S = lcm(pr, pc) stages, stage t the rows owned by ranks t·P/S ...
A_it lives on (i, t mod pc), B_tj on (t mod pr, j). Stage t broadcasts A_it along process row i
and B_tj down process column j; once all have arrived, one product of the stacked pieces
(StackedMxM: accumulating a product per stage merged C once per stage), inside the mask's block
when masked (the mask applied in the local product: the unmasked product is never formed). C_ij's
rows then go to their 1D owners in the process row (AlltoallSparse). Each entry of A moves to
pc - 1 ranks and each of B to pr - 1, exactly as planned; the entries of C that move depend on
the product and are estimated (plan/spgemm_size.py).
"""
from __future__ import annotations

import gc
import math

import graphblas as gb
import numpy as np
import scipy.sparse as sp

from ...instr import AlltoallSparse, BcastSparse, StackedMxM
from ...kernels.buffers import csr_pack
from .. import spmd
from ..options import memory_cap
from ..spgemm_size import operand, output_entries
from . import register_plan
from .p2p1d import column_groups

EMPTY = object()   # a root's piece with no entries
RETURN_LIMIT = 4   # (C's entries over A's and B's: past it the 2D/3D return outweighs p2p1d's rows)


def grid(P: int) -> tuple[int, int]:
    """(pr, pc): the most nearly square grid, pr ≤ pc."""
    pr = max(d for d in range(1, math.isqrt(P) + 1) if P % d == 0)
    return pr, P // pr


def sparse_static_check(ctx) -> str | None:
    """check() shared by the sparse x sparse plans: both operands sparse and static (their pieces
    are planned from their entries), a mask static too."""
    pl = ctx.product.pl
    if not (ctx.b_sparse and ctx.b_wide):
        return "for sparse x sparse products (B sparse, its columns distributed too)"
    if not pl.is_static(ctx.node.args[1]):
        return "B is computed at run time (its pieces are planned from a static B's entries)"
    if ctx.masked and not pl.is_static(ctx.node.args[2]):
        return "the mask is computed at run time (its blocks are planned from a static mask)"
    return None if ctx.masked else _output_too_big(ctx)


def _output_too_big(ctx) -> str | None:
    """Without a mask, C's entries all return to their rows' owners: when the estimate says C
    holds over RETURN_LIMIT times the entries of A and B (p2p1d moves B's rows at most), the
    plan is not lowered (A @ A of soc-Slashdot0902: 99M against 2M; lowering it cost each rank
    ~60 MB of planning pieces for nothing)."""
    sizes = ctx.per_rank(lambda r: (output_entries(ctx, r, ctx.rows_of(r)) or (0, 0))[0])
    inputs = sum(ctx.per_rank(lambda r: int(ctx.rows_of(r).nnz)))
    b = operand(ctx, ctx.node.args[1])
    inputs += sum(ctx.per_rank(lambda r: int(b.nvals) if ctx.me is not None else 0)) or int(b.nvals)
    if sum(sizes) > RETURN_LIMIT * inputs:
        return (f"C's ~{sum(sizes):,} estimated entries would return to their rows' owners, over {RETURN_LIMIT}x the "
                f"{inputs:,} of A and B (p2p1d moves B's rows at most)")
    return None


def _check(ctx):
    pr, pc = grid(ctx.P)
    if pr < 2:
        return (f"no grid of at least 2 x 2 for P={ctx.P} (one process row or column holds an operand whole: "
                "p2p1d's case)")
    return sparse_static_check(ctx)


def positions(groups: list, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(group of each global id, its position in its group) for ``groups`` (arrays of ids)."""
    which, pos = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
    for g, ids in enumerate(groups):
        which[ids], pos[ids] = g, np.arange(ids.size)
    return which, pos


def entries_at(ctx, M, dim, owner) -> dict:
    """{rank: (global rows, global columns, values)} of the entries of M each rank holds in this
    plan, ``owner(sender, columns)`` naming it from the 1D owner of the entry's row (``dim``: the
    dim of M's rows). Rank 0 planning: from the whole M, for every rank; SPMD: this rank's, every
    rank sending its rows' entries where they go (spmd.route)."""
    C = M if isinstance(M, sp.csr_array) else sp.csr_array(gb.io.to_scipy_sparse(M, format="csr"))
    if ctx.me is not None:
        dest = owner(ctx.me, np.arange(C.shape[1]))
        return {ctx.me: spmd.route(ctx.comm, C, dim.owned[ctx.me], dest)}
    coo = C.tocoo()
    rows, cols, vals = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
    to = owner(dim.parts[rows], cols)
    order = np.argsort(to, kind="stable")
    cuts = np.searchsorted(to[order], np.arange(ctx.P + 1))
    return {r: (rows[order[cuts[r]:cuts[r + 1]]], cols[order[cuts[r]:cuts[r + 1]]], vals[order[cuts[r]:cuts[r + 1]]])
            for r in range(ctx.P)}


def pieces(coo, key: np.ndarray, row_pos: np.ndarray, col_pos: np.ndarray, shape) -> dict:
    """{piece: scipy CSR} of entries (global rows, columns, values) split by ``key`` (per entry),
    renumbered by ``row_pos`` / ``col_pos`` (global -> position), ``shape(piece)``."""
    rows, cols, vals = coo
    out = {}
    for k in np.unique(key):
        sel = key == k
        out[int(k)] = sp.csr_array((vals[sel], (row_pos[rows[sel]], col_pos[cols[sel]])), shape=shape(int(k)))
    return out


@register_plan("summa2d_sparse", check=_check, spmd=True, general=False)
def lower(ctx):
    """Sparse SUMMA on a pr x pc grid: sparse pieces broadcast along rows and columns, one product."""
    lower_layers(ctx, 1)


class Grid:
    """c layers of pr x pc ranks: rank r = (l, i, j) = (r // q, (r % q) // pc, r % pc), q = pr·pc.
    Row block i (of A and C): the 1D rows of ranks i·P/pr ...; column block j (of B and C): B's
    column dim's 1D rows of ranks j·P/pc ...; the inner dim in c·S stages (S = lcm(pr, pc)) of
    P/(c·S) ranks' rows each, layer l holding stages l·S ... (l+1)·S - 1."""

    def __init__(self, ctx, c: int):
        P, rows, cols = ctx.P, ctx.rows, ctx.cols
        self.c, self.q = c, P // c
        self.pr, self.pc = grid(self.q)
        self.S = self.pr * self.pc // math.gcd(self.pr, self.pc)
        self.bcols = ctx.product.pl.dims[ctx.node.args[1].type.ncols]
        self.rb, self.cb, self.kb = P // self.pr, P // self.pc, P // (c * self.S)   # 1D ranks per block
        self.stages, _ = column_groups(cols, self.kb)
        self.J, _ = column_groups(self.bcols, self.cb)
        self.I = [np.concatenate([rows.owned[m] for m in range(i * self.rb, (i + 1) * self.rb)])
                  for i in range(self.pr)]
        self.stage_of, self.in_stage = positions(self.stages, cols.size)
        self.jblk_of, self.in_J = positions(self.J, self.bcols.size)
        _, self.in_I = positions(self.I, rows.size)

    def rank(self, l: int, i: int, j: int):
        return l * self.q + i * self.pc + j

    def where(self, r: int) -> tuple[int, int, int]:
        return r // self.q, (r % self.q) // self.pc, r % self.pc

    def a_owner(self, sender, k):   # A(g, k): g's block from its 1D owner, stage t = (l, u)
        t = self.stage_of[k]
        return self.rank(t // self.S, sender // self.rb, (t % self.S) % self.pc)

    def b_owner(self, sender, col):   # B(k, col): k's stage from its 1D owner
        t = sender // self.kb
        return self.rank(t // self.S, (t % self.S) % self.pr, self.jblk_of[col])


def lower_layers(ctx, c: int):
    """The plan on c layers (1: 2D), every layer a Sparse SUMMA over its part of the inner dim;
    the layers' partial products summed as their rows return to their owners."""
    P, rows = ctx.P, ctx.rows
    G = Grid(ctx, c)
    prow = ctx.add_split([r // G.pc for r in range(P)])                 # (l, i)
    pcol = ctx.add_split([(r // G.q) * G.pc + r % G.pc for r in range(P)])  # (l, j)
    A_at = entries_at(ctx, ctx.A, rows, G.a_owner)
    B_at = entries_at(ctx, operand(ctx, ctx.node.args[1], csr=True), ctx.cols, G.b_owner)
    A_own = {r: pieces(A_at[r], G.stage_of[A_at[r][1]], G.in_I, G.in_stage,
                       lambda t, r=r: (G.I[G.where(r)[1]].size, G.stages[t].size)) for r in ctx.ranks}
    B_own = {r: pieces(B_at[r], G.stage_of[B_at[r][0]], G.in_stage, G.in_J,
                       lambda t, r=r: (G.stages[t].size, G.J[G.where(r)[2]].size)) for r in ctx.ranks}
    del A_at, B_at
    masks = _mask_blocks(ctx, G) if ctx.masked else {}
    nnz_A = ctx.per_rank(lambda r: {t: int(m.nnz) for t, m in A_own[r].items()})
    nnz_B = ctx.per_rank(lambda r: {t: int(m.nnz) for t, m in B_own[r].items()})
    sizes = ctx.per_rank(lambda r: _sizes(ctx, G, r))   # [l][j] -> (entries, multiply-adds) of 1D rank r's rows
    ranges = column_batches(ctx, G, sizes, nnz_A, nnz_B)
    b = max(1, len(ranges))
    for r in ctx.ranks:
        l, i, j = G.where(r)
        prog, a_parts, b_parts = [], [], []
        for u in range(G.S):
            t, a_root, b_root = l * G.S + u, u % G.pc, u % G.pr
            blk = A_own[r].get(t, EMPTY) if j == a_root else None
            a_parts.append(_bcast(ctx, r, blk, a_root, (G.I[i].size, G.stages[t].size),
                                  nnz_A[G.rank(l, i, a_root)].get(t, 0), prow, prog))
            blk = B_own[r].get(t, EMPTY) if i == b_root else None
            b_parts.append(_bcast(ctx, r, blk, b_root, (G.stages[t].size, G.J[j].size),
                                  nnz_B[G.rank(l, b_root, j)].get(t, 0), pcol, prog))
        mask = {**ctx.mask, "mask": ctx.const(r, masks[r])} if ctx.masked else {}
        C = ctx.slot()
        owners = range(i * G.rb, (i + 1) * G.rb)   # the 1D ranks C's rows here belong to
        held = sum(sizes[m][l][j][0] for m in owners)
        J = G.J[j]
        prog.append(StackedMxM(C, tuple(a_parts), tuple(b_parts), ctx.semiring, **mask, out_entries=held,
                               flops=sum(sizes[m][l][j][1] for m in owners), product=ctx.index,
                               batches=tuple(np.flatnonzero((J >= lo) & (J < hi)) for lo, hi in ranges)))
        sent = [sizes[m][l][j][0] for m in owners if m != r]
        got = [sizes[r][l2][j2][0] for l2 in range(c) for j2 in range(G.pc)
               if G.rank(l2, r // G.rb, j2) != r]
        counts = np.zeros(P, dtype=np.int64)
        counts[i * G.rb:(i + 1) * G.rb] = rows.counts[i * G.rb:(i + 1) * G.rb]
        prog.append(AlltoallSparse(ctx.out, C, np.r_[0, np.cumsum(counts)].astype(np.int64),
                                   G.J[j].astype(np.int64), int(rows.counts[r]), G.bcols.size,
                                   monoid=ctx.semiring.monoid if c > 1 else None,
                                   expect=(sum(sent), b * sum(x > 0 for x in sent), sum(got),
                                           b * sum(x > 0 for x in got)),
                                   held=held, arrive=sum(x[0] for layer in sizes[r] for x in layer), product=ctx.index,
                                   batches=ranges))
        ctx.emit_rank(r, prog)
    A_own = B_own = masks = {}
    gc.collect()   # (the planning pieces' GraphBLAS matrices sit in reference cycles: freed now, not later)
    ctx.info.predicted["grid"] = f"{c} x {G.pr} x {G.pc}" if c > 1 else f"{G.pr} x {G.pc}"
    ctx.info.predicted["batches"] = b
    if b > 1:
        ctx.info.notes.append(f"{ctx.name}: C made in {b} column batches (each returned to its rows' owners before "
                              "the next) to fit the memory per rank")
    ctx.info.notes.append(f"{ctx.name}: {ctx.info.predicted['grid']} grid, {G.S} stages a layer; the entries of C "
                          "returned to their rows' owners are estimated (Cohen's size estimate), the broadcasts' "
                          "words are exact")


MAX_BATCHES = 64


def column_batches(ctx, G: Grid, sizes: list, nnz_A: list, nnz_B: list) -> tuple:
    """C's column batches, as global column ranges [lo, hi): none when every rank's predicted
    memory (the pieces broadcast and stacked, its block of C, the triplets returned, the rows
    arriving: costmodel/counts.py's terms) fits the memory per rank (--memory-per-rank); else
    the fewest that fit (at most MAX_BATCHES), cut where B's columns' entries split evenly. The
    same on every rank: planned from the sizes every rank was given."""
    cap, e = memory_cap(ctx.opt, ctx.P), ctx.compute.np.itemsize
    held_ops = ctx.per_rank(ctx.product.operand_bytes)   # (its rows of A, B and the mask)

    def need(r: int, b: int) -> float:
        l, i, j = G.where(r)
        held = sum(sizes[m][l][j][0] for m in range(i * G.rb, (i + 1) * G.rb))
        arrive = sum(x[0] for layer in sizes[r] for x in layer)
        stacked = sum(nnz_A[G.rank(l, i, u % G.pc)].get(l * G.S + u, 0) +
                      nnz_B[G.rank(l, u % G.pr, j)].get(l * G.S + u, 0) for u in range(G.S))
        out = (held + arrive) * (e + 16) + arrive * (e + 8) if b == 1 else \
            (held + arrive) * (e + 16) / b + 2 * arrive * (e + 8)
        # the pieces: kept as planned, broadcast, then stacked
        return held_ops[r] + 3 * stacked * (e + 8) + held * (e + 8) / b + out

    worst = lambda b: max(need(r, b) for r in range(ctx.P))   # noqa: E731
    b = next((b for b in range(1, MAX_BATCHES + 1) if worst(b) <= cap), MAX_BATCHES)
    if b == 1 or worst(b) >= worst(1):   # (fits unbatched, or batches would not lower the peak)
        return ()
    B = operand(ctx, ctx.node.args[1], csr=True)   # (SPMD: this rank's rows; their column counts summed)
    weight = np.bincount(B.indices, minlength=G.bcols.size).astype(np.int64)
    if ctx.me is not None and ctx.P > 1:
        weight = np.sum(ctx.comm.allgather(weight), axis=0)
    cum = np.cumsum(weight + 1)
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, b) / b)
    cuts = np.unique(np.r_[0, cuts, G.bcols.size])
    return tuple((int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:]))


def _mask_blocks(ctx, G: Grid) -> dict:
    """{rank: its block of the mask (rows I_i, columns J_j)}: every layer's (l, i, j) needs it."""
    out = {}
    M = operand(ctx, ctx.node.args[2], csr=True)
    for l in range(G.c):
        at = entries_at(ctx, M, ctx.rows, lambda s, col, l=l: G.rank(l, s // G.rb, G.jblk_of[col]))
        for r, (rr, cc, vv) in at.items():
            _, i, j = G.where(r)
            if G.where(r)[0] == l:
                out[r] = gb.io.from_scipy_sparse(sp.csr_array((vv, (G.in_I[rr], G.in_J[cc])),
                                                              shape=(G.I[i].size, G.J[j].size)))
    return out


def _sizes(ctx, G: Grid, r: int) -> list:
    """[layer][column block] -> (estimated entries, multiply-adds) of 1D rank r's rows of A
    (its entries in the layer's part of the inner dim) times B's column block."""
    A_r = ctx.rows_of(r)
    layer = G.stage_of[A_r.indices] // G.S
    out = []
    for l in range(G.c):
        A_l = A_r
        if G.c > 1:   # (its pattern only counts: the layer's entries as ones)
            A_l = sp.csr_array(((layer == l).astype(np.float64), A_r.indices.copy(), A_r.indptr.copy()),
                               shape=A_r.shape)
            A_l.eliminate_zeros()
        out.append([output_entries(ctx, r, A_l, j, G.J[j]) for j in range(G.pc)])
    return out


def _bcast(ctx, r: int, blk, root: int, shape: tuple, nnz: int, group: int, prog: list) -> int:
    """One stage's piece broadcast in ``group`` from member ``root`` (this rank when ``blk`` is its
    piece): the slot it arrives in."""
    out = ctx.slot()
    if blk is not None:
        blk = sp.csr_array(shape, dtype=ctx.compute.np) if blk is EMPTY else blk
        src, own = ctx.const(r, csr_pack(blk, ctx.compute)), ctx.const(r, ctx.gb(blk))
    else:
        src = own = None
    prog.append(BcastSparse(out, src, own, root, shape[0], shape[1], nnz, ctx.compute.value, group=group,
                            product=ctx.index))
    return out
