"""vertexcut — SpMM on an edge partition (a vertex cut: Schlag, Schulz, Seemaier, Strash,
"Scalable Edge Partitioning").

Every nonzero (i, j), i != j, belongs to the part of its undirected edge {i, j} in the edge
partition ``--partition spac | hypergraph-edge`` computes (the vertices' owners are the parts
holding most of their edges, partition/vertex_owners.py); a diagonal entry to its row's owner.
Rank r multiplies its edges: it receives, from their owners, the rows of B its edges' columns
name (send sets as p2p1d's), forms partial rows C_r for its edges' rows, and sends each partial
row to the row's owner, which sums the partials it receives into its own: an accumulation
written as a product with a selection whose entries u leave a value unchanged (u ⊗ x = x: the
multiply's identity, or any u for ``second``), so any semiring whose multiply has one.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...algebra import MONOIDS
from ...errors import PlanError
from ...instr import DropRows, Empty, Fill, Free, MxM, Pack, Recv, RecvMxM, Send, WaitSends
from ...partition.vertex_owners import EDGE_OF, edge_owner, entry_owner
from ..spmd import exchange, route
from . import register_plan
from .p2p1d import add_remote_block, by_owner, narrow_only, own_recvs


def _check(ctx):
    if ctx.me is not None and ctx.rows.edges is None:
        return ("vertexcut from shards needs a set sharded on an edge partition (dspla shard --partition spac or "
                "hypergraph-edge), which holds each rank's edges' parts")
    if ctx.me is None and ctx.opt.partition not in EDGE_OF:
        return "vertexcut runs on an edge partition: --partition spac or hypergraph-edge"
    if ctx.masked or ctx.b_sparse:
        return "vertexcut multiplies dense rows without a mask"
    if multiply_unit(ctx) is None:
        return (f"vertexcut sums partial rows by a product with a selection, which needs a multiply with an "
                f"identity (times, plus, min, max, land, lor) or second; semiring {ctx.semiring.name!r} has "
                f"{ctx.semiring.mult.name!r}")
    if ctx.rows.size != ctx.A.shape[1] or ctx.rows.key != ctx.cols.key:
        return "vertexcut needs a square A whose rows and columns are distributed alike (a graph)"
    return narrow_only(ctx)


def multiply_unit(ctx):
    """The value u with u ⊗ x = x under the semiring's multiply (None: there is none)."""
    mult = ctx.semiring.mult
    if mult.func is not None:     # a user's operator: no identity known
        return None
    if mult.name == "second":
        return np.ones(1, dtype=ctx.compute.np)[0]
    monoid = MONOIDS.get(mult.name)
    return monoid.identity(ctx.compute) if monoid is not None else None


def selection(ctx, n_rows: int, targets: np.ndarray, cols: np.ndarray | None = None, width: int | None = None):
    """n_rows x width: column cols[k] (default k) has the multiply's unit in row targets[k]."""
    k = targets.size
    cols = np.arange(k) if cols is None else cols
    shape = (n_rows, k if width is None else width)
    return sp.csr_array((np.full(k, multiply_unit(ctx)), (targets, cols)), shape=shape)


@register_plan("vertexcut", check=_check, spmd=lambda ctx: lower_spmd(ctx), auto=False, general=False)
def lower(ctx):
    """Each rank multiplies its edges of an edge partition; partial rows summed at their owners."""
    rows, cols, P = ctx.rows, ctx.cols, ctx.P
    A = ctx.A
    if rows.edges is not None:   # (the edge partition the rows were cut from: partitioning kept it)
        owner = entry_owner(A, np.arange(A.shape[0]), *rows.edges, rows.parts)
    else:
        owner = edge_owner(A, P, ctx.opt.partition, ctx.opt.eps, ctx.opt.seed, rows.parts, cache=ctx.opt.cache)
    row = np.repeat(np.arange(A.shape[0], dtype=np.int64), np.diff(A.indptr))
    pieces, need = {}, {}
    for r in range(P):
        mine = owner == r
        A_r = sp.csr_array((A.data[mine], (row[mine], A.indices[mine])), shape=A.shape)
        R = np.flatnonzero(np.diff(A_r.indptr))
        A_r = A_r[R]
        pieces[r] = (R, A_r)
        need[r] = own_recvs(A_r, cols, r, P)
    # each rank's partial rows by their owners, once: what r sends to q is what q receives from r
    outs = {q: by_owner(pieces[q][0], rows.parts, q, P) for q in range(P)}
    for r in ctx.ranks:
        R, A_r = pieces[r]
        sends_b = {q: need[q][r] for q in range(P) if r in need[q]}
        part_in = {q: outs[q][r] for q in range(P) if r in outs[q]}
        rank_program(ctx, r, R, A_r, need[r], sends_b, outs[r], part_in)


def lower_spmd(ctx):
    """This rank's program from its own rows and its share of the edge partition (the shard set's
    parts of the edges incident to its rows): each entry goes to its edge's part (one routing,
    plan/spmd.py); the rows of B its edges name and the partial rows it will receive follow from
    the ownership map and one exchange each."""
    rows, cols, me = ctx.rows, ctx.cols, ctx.me
    A = ctx.A
    keys, parts = rows.edges
    try:
        owner = entry_owner(A, rows.owned[me], keys, parts, rows.parts)
    except ValueError as e:
        raise PlanError(f"vertexcut: {e}") from None
    grow, gcol, vals = route(ctx.comm, A, rows.owned[me], owner, per_entry=True)
    A_r = sp.csr_array((vals, (grow.astype(np.int64), gcol.astype(np.int64))), shape=(rows.size, A.shape[1]))
    R = np.flatnonzero(np.diff(A_r.indptr))
    A_r = A_r[R]
    need = own_recvs(A_r, cols, me, ctx.P)
    part_out = by_owner(R, rows.parts, me, ctx.P)
    rank_program(ctx, me, R, A_r, need, exchange(ctx.comm, need), part_out, exchange(ctx.comm, part_out))


def rank_program(ctx, r, R, A_r, recvs_b: dict, sends_b: dict, part_out: dict, part_in: dict):
    rows, cols, K = ctx.rows, ctx.cols, ctx.K
    dtype, in_place = ctx.b_dtype.value, ctx.in_place
    presence_b, presence_c = not ctx.b_full, not in_place
    prog, recv1, blocks1, rows1, sent = [], [], [], [], []
    # 1. the rows of B this rank's edges name, from their owners; its edges times them
    for q, ids in sorted(recvs_b.items()):
        s = ctx.slot()
        prog.append(Recv(s, int(q), ctx.tag, ids.size, K, dtype, presence=presence_b, product=ctx.index))
        recv1.append(s)
        add_remote_block(ctx, r, A_r[:, ids], in_place, blocks1, rows1)
    for q, ids in sorted(sends_b.items()):
        s = ctx.slot()
        prog.append(Pack(s, ctx.b, cols.pos[ids], presence=presence_b, product=ctx.index))
        prog.append(Send(s, int(q), ctx.tag, ids.size * K, dtype, presence_b, product=ctx.index))
        sent.append(s)
    Cp = ctx.slot()
    if in_place:
        prog.append(Fill(Cp, R.size, K, ctx.semiring.monoid, ctx.compute.value, product=ctx.index))
    prog.append(MxM(Cp, ctx.const(r, ctx.gb(A_r[:, cols.owned[r]])), ctx.b, ctx.semiring, accumulate=in_place,
                    product=ctx.index))
    if recv1:
        prog.append(RecvMxM(Cp, tuple(recv1), tuple(blocks1), ctx.semiring, tuple(rows1),
                            window=2 * int(ctx.opt.message_bytes), product=ctx.index))
    # 2. partial rows to their owners; this rank's rows: its own partials plus those received
    recv2, blocks2, rows2 = [], [], []
    n_r = int(rows.counts[r])
    for q, ids in sorted(part_in.items()):
        s = ctx.slot()
        prog.append(Recv(s, int(q), ctx.tag + 1, ids.size, K, ctx.compute.value, presence=presence_c,
                         product=ctx.index))
        recv2.append(s)
        add_remote_block(ctx, r, selection(ctx, n_r, rows.pos[ids]), in_place, blocks2, rows2)
    for q, ids in sorted(part_out.items()):
        s = ctx.slot()
        prog.append(Pack(s, Cp, np.searchsorted(R, ids), presence=presence_c, product=ctx.index))
        prog.append(Send(s, int(q), ctx.tag + 1, ids.size * K, ctx.compute.value, presence_c, product=ctx.index))
        sent.append(s)
    own = np.flatnonzero(rows.parts[R] == r)
    S_own = selection(ctx, n_r, rows.pos[R[own]], own, R.size)
    if in_place:
        prog.append(Fill(ctx.out, n_r, K, ctx.semiring.monoid, ctx.compute.value, product=ctx.index))
    elif not own.size:
        prog.append(Empty(ctx.out, n_r, K, ctx.compute.value, product=ctx.index))
    if own.size:
        prog.append(MxM(ctx.out, ctx.const(r, ctx.gb(S_own)), Cp, ctx.semiring, accumulate=in_place,
                        product=ctx.index))
    if recv2:
        prog.append(RecvMxM(ctx.out, tuple(recv2), tuple(blocks2), ctx.semiring, tuple(rows2),
                            window=2 * int(ctx.opt.message_bytes), product=ctx.index))
    if sent:
        prog.append(WaitSends(tuple(sent), product=ctx.index))
    prog.append(Free((Cp,)))
    empty = np.flatnonzero(np.diff(ctx.rows_of(r).indptr) == 0)
    if in_place and empty.size:
        prog.append(DropRows(ctx.out, empty, product=ctx.index))
    ctx.emit_rank(r, prog)
