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

import math

import graphblas as gb
import numpy as np
import scipy.sparse as sp

from ...instr import AlltoallSparse, BcastSparse, StackedMxM
from ...kernels.buffers import csr_pack
from .. import spmd
from ..spgemm_size import operand, output_entries
from . import register_plan
from .p2p1d import column_groups

EMPTY = object()   # a root's piece with no entries


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


@register_plan("summa2d_sparse", check=_check, spmd=True)
def lower(ctx):
    """Sparse SUMMA on a pr x pc grid: sparse pieces broadcast along rows and columns, one product."""
    P, rows, cols, pl = ctx.P, ctx.rows, ctx.cols, ctx.product.pl
    b_node = ctx.node.args[1]
    bcols = pl.dims[b_node.type.ncols]
    pr, pc = grid(P)
    S = pr * pc // math.gcd(pr, pc)
    g = P // S
    prow = ctx.add_split([r // pc for r in range(P)])
    pcol = ctx.add_split([r % pc for r in range(P)])
    stages, _ = column_groups(cols, g)
    J, _ = column_groups(bcols, pr)
    I = [np.concatenate([rows.owned[m] for m in range(i * pc, (i + 1) * pc)]) for i in range(pr)]
    stage_of, in_stage = positions(stages, cols.size)
    jblk_of, in_J = positions(J, bcols.size)
    _, in_I = positions(I, rows.size)
    A_at = entries_at(ctx, ctx.A, rows, lambda s, c: (s // pc) * pc + stage_of[c] % pc)
    B_at = entries_at(ctx, operand(ctx, b_node, csr=True), cols, lambda s, c: ((s // g) % pr) * pc + jblk_of[c])
    M_at = entries_at(ctx, operand(ctx, ctx.node.args[2], csr=True), rows, lambda s, c: (s // pc) * pc + jblk_of[c]) \
        if ctx.masked else {}
    A_own = {r: pieces(A_at[r], stage_of[A_at[r][1]], in_I, in_stage, lambda t, r=r: (I[r // pc].size,
                       stages[t].size)) for r in ctx.ranks}
    B_own = {r: pieces(B_at[r], stage_of[B_at[r][0]], in_stage, in_J, lambda t, r=r: (stages[t].size,
                       J[r % pc].size)) for r in ctx.ranks}
    del A_at, B_at
    nnz_A = ctx.per_rank(lambda r: {t: int(m.nnz) for t, m in A_own[r].items()})
    nnz_B = ctx.per_rank(lambda r: {t: int(m.nnz) for t, m in B_own[r].items()})
    # every 1D rank's rows against every column block: estimated entries and exact multiply-adds
    sizes = [[output_entries(ctx, r, ctx.rows_of(r), j, J[j]) for j in range(pc)] for r in ctx.ranks]
    sizes = ctx.per_rank(lambda r: sizes[ctx.ranks.index(r)])
    for r in ctx.ranks:
        i, j = divmod(r, pc)
        prog, a_parts, b_parts = [], [], []
        for t in range(S):
            a_root, b_root = t % pc, t % pr
            blk = A_own[r].get(t, EMPTY) if j == a_root else None
            a_parts.append(_bcast(ctx, r, blk, a_root, (I[i].size, stages[t].size), nnz_A[i * pc + a_root].get(t, 0),
                                  prow, prog))
            blk = B_own[r].get(t, EMPTY) if i == b_root else None
            b_parts.append(_bcast(ctx, r, blk, b_root, (stages[t].size, J[j].size), nnz_B[b_root * pc + j].get(t, 0),
                                  pcol, prog))
        mask = {}
        if ctx.masked:
            M = M_at[r]
            blk = sp.csr_array((M[2], (in_I[M[0]], in_J[M[1]])), shape=(I[i].size, J[j].size))
            mask = {**ctx.mask, "mask": ctx.const(r, gb.io.from_scipy_sparse(blk))}
        C = ctx.slot()
        members = range(i * pc, (i + 1) * pc)
        prog.append(StackedMxM(C, tuple(a_parts), tuple(b_parts), ctx.semiring, **mask,
                               out_entries=sum(sizes[m][j][0] for m in members),
                               flops=sum(sizes[m][j][1] for m in members), product=ctx.index))
        sent = [sizes[m][j][0] for m in members if m != r]
        got = [sizes[r][q][0] for q in range(pc) if q != j]
        bounds = np.r_[0, np.cumsum(rows.counts[i * pc:(i + 1) * pc])].astype(np.int64)
        prog.append(AlltoallSparse(ctx.out, C, bounds, J[j].astype(np.int64), int(rows.counts[r]), bcols.size,
                                   group=prow, expect=(sum(sent), sum(x > 0 for x in sent), sum(got),
                                                       sum(x > 0 for x in got)), product=ctx.index))
        ctx.emit_rank(r, prog)
    ctx.info.predicted["grid"] = f"{pr} x {pc}"
    ctx.info.notes.append(f"summa2d_sparse: {pr} x {pc} grid, {S} stages; C's entries returned to their rows' "
                          "owners are estimated (Cohen's size estimate), the broadcasts' words are exact")


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
