"""3d — SpMM on an X x Y x Z process grid: the 3D algorithm of "Reducing Communication in Graph
Neural Network Training" (section IV-D, Split-3D-SpMM) on the general grid Plexus uses.

Rank r = (x, y, z), r = (x Y + y) Z + z. Row block x of A and C is the union of the 1D rows of
ranks (x, ·, ·); inner block y (A's columns, B's rows) the union of the 1D rows of ranks
(·, y, ·); the K columns split into Z ranges J_z. Rank (x, y, z) multiplies A_xy by B_y,Jz into a
partial C_x,Jz; the partials are reduced along y. Redistribution is explicit: B's 1D rows reach
B_y,Jz by an all-to-all inside (x, y, ·) (each rank's rows, cut by column range) and an
all-gather inside (·, y, z); the reduced C_x,Jz returns to 1D rows by an all-to-all inside
(x, y, ·). CAGNET's version broadcasts A's blocks in every product; A is static here, so the Z
ranks of a fiber each keep their block A_xy (A held Z times in all), as Plexus does. The grid is
``Options.grid`` or the factorisation of P closest to a cube with Z <= K. Random row partitions balance the
blocks' nonzeros up to their hubs; ``--partition dealt`` (rows dealt by nonzeros) balances them as
Plexus's double permutation does (``block_imbalance``).
"""
from __future__ import annotations

import numpy as np

from ...costmodel.cagnet import grid3
from ...instr import AllgatherRows, Allreduce, Alltoall, DropRows, Empty, Fill, Free, MxM, TakeRows
from . import register_plan
from .p2p1d import narrow_only
from .summa2d import k_ranges


def grid_of(ctx) -> tuple:
    g = getattr(ctx.opt, "grid", None)
    return tuple(g) if g else grid3(ctx.P, zmax=ctx.K)


def _check(ctx):
    if ctx.masked:
        return "3d does not run masked products (its blocks of C span other processes' rows)"
    if ctx.b_wide:
        return narrow_only(ctx)
    X, Y, Z = grid_of(ctx)
    if X * Y * Z != ctx.P:
        return f"3d: grid {X}x{Y}x{Z} has {X * Y * Z} ranks, not P={ctx.P}"
    if Z > ctx.K:
        return f"3d: Z={Z} column ranges need K >= Z (K={ctx.K})"
    return None


def coords(r: int, Y: int, Z: int) -> tuple:
    return r // (Y * Z), (r // Z) % Y, r % Z


def block_imbalance(parts: np.ndarray, A, grid: tuple) -> float:
    """Max / mean nonzeros of the blocks A_xy for rows (and columns) owned by ``parts``."""
    X, Y, Z = grid
    x = parts // (Y * Z)
    y = (parts // Z) % Y
    bx = np.repeat(x, np.diff(A.indptr))
    by = y[A.indices]
    counts = np.bincount(bx * Y + by, minlength=X * Y)
    return float(counts.max() / max(counts.mean(), 1e-300))


def _block(ctx, r: int, grid: tuple, inner_y: np.ndarray) -> tuple:
    """(I, A_xy): row block x's rows and rank r's block of A, columns renumbered in inner block
    y's order. Under SPMD planning the Z ranks of a fiber all need A_xy: every rank routes its
    entries Z times, the m-th time to the fiber member m (one Alltoallv round each)."""
    X, Y, Z = grid
    x, y, z = coords(r, Y, Z)
    I = np.concatenate([ctx.rows.owned[m] for m in range(x * Y * Z, (x + 1) * Y * Z)])
    if ctx.me is None:
        return I, ctx.A[I][:, inner_y]
    ycol = (ctx.cols.parts // Z) % Y
    mine = None
    for m in range(Z):
        got = ctx.block_rows(r, I, lambda s, m=m: (s // (Y * Z) * Y + ycol) * Z + m)
        if m == z:
            mine = got
        del got
    return I, mine[:, inner_y]


@register_plan("3d", check=_check, spmd=True, auto=False)
def lower(ctx):
    """3D on an X x Y x Z grid: B gathered per (inner block, column range), partial products reduced."""
    rows, cols, K, P = ctx.rows, ctx.cols, ctx.K, ctx.P
    X, Y, Z = grid_of(ctx)
    J = k_ranges(K, Z)
    fiber = ctx.add_split([r // Z for r in range(P)])                       # (x, y, ·), member z
    column = ctx.add_split([(r // Z) % Y * Z + r % Z for r in range(P)])   # (·, y, z), member x
    row = ctx.add_split([r // (Y * Z) * Z + r % Z for r in range(P)])      # (x, ·, z), member y
    dtype, presence = ctx.b_dtype.value, not ctx.b_full
    in_place = ctx.in_place
    # inner block y: the columns of ranks (·, y, ·) in rank order (the all-gather's order)
    inner = [np.concatenate([cols.owned[r] for r in range(P) if (r // Z) % Y == y] or [np.zeros(0, np.int64)])
             for y in range(Y)]
    blocks = {}
    for r in ctx.ranks:
        x, y, z = coords(r, Y, Z)
        if (x, y) not in blocks:
            blocks[x, y] = _block(ctx, r, (X, Y, Z), inner[y])
    for r in ctx.ranks:
        x, y, z = coords(r, Y, Z)
        lo, hi = J[z]
        width = hi - lo
        I, A_xy = blocks[x, y]
        prog = []
        fib = [(x * Y + y) * Z + m for m in range(Z)]
        # B: my 1D rows cut by column range, across the fiber; then all-gathered down the column
        Bf = ctx.slot()
        if Z > 1:
            mine = np.arange(int(cols.counts[r]))
            prog.append(Alltoall(Bf, ctx.b, tuple(mine for _ in range(Z)), tuple(J),
                                 tuple((int(cols.counts[m]), width) for m in fib), "rows", dtype, z,
                                 presence=presence, group=fiber, product=ctx.index))
        By = ctx.slot()
        src = Bf if Z > 1 else ctx.b
        counts = np.array([sum(int(cols.counts[(xx * Y + y) * Z + m]) for m in range(Z)) for xx in range(X)])
        if X > 1:
            prog.append(AllgatherRows(By, src, counts, width, dtype, presence=presence, group=column, me=x,
                                      product=ctx.index))
        else:
            By = src
        C = ctx.slot()
        if in_place:
            prog.append(Fill(C, I.size, width, ctx.semiring.monoid, ctx.compute.value, product=ctx.index))
        elif A_xy.nnz == 0:
            prog.append(Empty(C, I.size, width, ctx.compute.value, product=ctx.index))
        if A_xy.nnz:
            prog.append(MxM(C, ctx.const(r, ctx.gb(A_xy)), By, ctx.semiring, accumulate=in_place, product=ctx.index))
        temps = tuple({Bf, By} - {ctx.b}) if Z > 1 else ((By,) if X > 1 else ())
        if temps:
            prog.append(Free(temps))
        Cx = ctx.slot()
        if Y > 1:
            prog.append(Allreduce(Cx, C, ctx.semiring.monoid, group=row, entries=int(I.size) * width,
                                  presence=not in_place, product=ctx.index))
            prog.append(Free((C,)))
        else:
            Cx = C
        # C_x,Jz -> 1D rows, all K columns: each member of the fiber takes its rows of every range
        offs = np.r_[0, np.cumsum(rows.counts[x * Y * Z:(x + 1) * Y * Z])]
        if Z > 1:
            prog.append(Alltoall(ctx.out, Cx, tuple(np.arange(offs[y * Z + m], offs[y * Z + m + 1]) for m in range(Z)),
                                 tuple((0, width) for _ in range(Z)),
                                 tuple((int(rows.counts[r]), J[m][1] - J[m][0]) for m in range(Z)), "cols",
                                 ctx.compute.value, z, presence=not in_place, group=fiber, product=ctx.index))
        else:
            prog.append(TakeRows(ctx.out, Cx, np.arange(offs[y * Z + z], offs[y * Z + z + 1]), product=ctx.index))
        prog.append(Free((Cx,)))
        empty = np.flatnonzero(np.diff(ctx.rows_of(r).indptr) == 0)
        if in_place and empty.size:
            prog.append(DropRows(ctx.out, empty, product=ctx.index))
        ctx.emit_rank(r, prog)
