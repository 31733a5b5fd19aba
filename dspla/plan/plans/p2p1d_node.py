"""p2p1d_node — p2p1d with node-aware messages (Bienz, Gropp, Olson, "Node aware sparse
matrix-vector multiplication": its three-step exchange).

p2p1d sends each rank the rows it needs from every other one directly: at P = 256 a rank sends
up to 255 messages, each paying the network's latency. Here the ranks form nodes of
``ranks_per_node`` consecutive ranks (as launchers place them), and the member ``B mod size(A)``
of node A serves node B (both ways). Rows bound for another node travel in three steps:

1. gather: each rank sends the member of its node that serves node B the rows it owns that any
   rank of B needs (once, however many ranks of B need them; one message for all the nodes that
   member serves);
2. across: that member sends the member of B that serves its node one message, the rows of its
   whole node that B needs (a row crosses the network once per node that needs it);
3. scatter: each rank sends each other member of its node one message, the rows it owns that the
   member needs and the rows that arrived for it in step 2; what arrived for itself it
   multiplies from where it lies.

A rank sends at most ranks_per_node - 1 messages inside its node in steps 1 and 3, and about
nodes / ranks_per_node across. Rows inside one node move in step 3 only; with every rank on one
node the plan is p2p1d's exchange. The rows a rank forwards are stacked after its own
(StackRows) and packed from there. Every list is a set of global row ids, ascending.
"""
from __future__ import annotations

import numpy as np

from ...analysis import comm_plan
from ...costmodel.nodeaware import Nodes
from ...instr import DropRows, Fill, Free, MxM, Pack, Recv, RecvMxM, Send, StackRows, TakeRows, WaitSends
from ..spmd import exchange
from . import register_plan
from .p2p1d import _values_only, add_remote_block, narrow_only, own_recvs, split_by_owner


def ranks_per_node(ctx) -> int:
    """The ranks of one node: the option, else every rank on one node."""
    return int(ctx.opt.ranks_per_node or ctx.P)


def _check(ctx):
    if ctx.masked:
        return "p2p1d_node does not run masked products (p2p1d does)"
    if ctx.b_sparse:
        return "p2p1d_node moves dense rows: a sparse B travels by p2p1d"
    if ctx.opt.ranks_per_node is not None and ctx.opt.ranks_per_node < 1:
        return f"ranks per node must be at least 1, got {ctx.opt.ranks_per_node}"
    return narrow_only(ctx)


def _union(arrays) -> np.ndarray:
    arrays = [a for a in arrays if len(a)]
    return np.unique(np.concatenate(arrays)) if arrays else np.zeros(0, np.int64)


def routes(recvs: dict, owner: np.ndarray, nodes: Nodes, transpose) -> dict:
    """Each rank's lists, from p2p1d's receives ``recvs`` {rank: {owner: ids}} of the ranks planned
    here (every rank, or this one under SPMD: ``transpose`` turns what each asks of its peers into
    what each is asked, {rank: {peer: ids}}). Per rank: {"recv1", "send1", "recv2", "send2",
    "recv3", "send3": {peer: ids}, "self": ids arrived in step 2 for its own product}."""
    out = {r: {} for r in recvs}
    for r, got in recvs.items():   # step 3, as the receiver sees it: from each member of its node
        me = int(nodes.of(r))
        far = {q: v for q, v in got.items() if nodes.of(q) != me}
        via = {q: int(nodes.server(me, nodes.of(q))) for q in far}
        mates = sorted({q for q in got if nodes.of(q) == me} | set(via.values()))
        ask = {m: _union(([got[m]] if m in got else []) + [far[q] for q in far if via[q] == m]) for m in mates}
        out[r]["self"] = ask.pop(r, np.zeros(0, np.int64))
        out[r]["recv3"] = {m: v for m, v in ask.items() if len(v)}
    sends3 = transpose({r: out[r]["recv3"] for r in out})
    for r in out:   # step 2, as the receiver sees it: from the server of each node it serves
        out[r]["send3"] = sends3[r]
        mine = _union([out[r]["self"], *sends3[r].values()])
        srcnode = nodes.of(owner[mine])
        me = int(nodes.of(r))
        out[r]["recv2"] = {int(nodes.server(A, me)): mine[srcnode == A] for A in np.unique(srcnode) if A != me}
    sends2 = transpose({r: out[r]["recv2"] for r in out})
    for r in out:   # step 1, as the server sees it: the rows of its node it sends across
        out[r]["send2"] = sends2[r]
        fwd = _union(list(sends2[r].values()))
        who = owner[fwd]
        out[r]["recv1"] = {int(s): fwd[who == s] for s in np.unique(who) if s != r}
    sends1 = transpose({r: out[r]["recv1"] for r in out})
    for r in out:
        out[r]["send1"] = sends1[r]
    return out


def _transpose_all(lists: dict) -> dict:
    out: dict = {r: {} for r in lists}
    for r in sorted(lists):
        for q, ids in lists[r].items():
            out[q][r] = ids
    return {q: dict(sorted(v.items())) for q, v in out.items()}


@register_plan("p2p1d_node", check=_check, spmd=lambda ctx: lower_spmd(ctx), auto=False)
def lower(ctx):
    """1D rows, p2p messages aggregated per node pair (node-aware, three steps)."""
    plan = comm_plan(ctx.A, ctx.rows.parts, ctx.P, b_parts=ctx.cols.parts)
    nodes = Nodes(ctx.P, ranks_per_node(ctx))
    lists = routes({r: plan.receives(r) for r in range(ctx.P)}, ctx.cols.parts, nodes, _transpose_all)
    for r in ctx.ranks:
        rank_program(ctx, r, ctx.rows_of(r), lists[r])


def lower_spmd(ctx):
    """This rank's program from its own rows: p2p1d's receives from the ownership map, then three
    exchanges of lists (plan/spmd.py), one per step, from the last step back to the first."""
    me = ctx.me
    recvs = own_recvs(ctx.A, ctx.cols, me, ctx.P)
    nodes = Nodes(ctx.P, ranks_per_node(ctx))
    lists = routes({me: recvs}, ctx.cols.parts, nodes, lambda d: {me: exchange(ctx.comm, d[me])})
    rank_program(ctx, me, ctx.A, lists[me])


def _positions(ctx, r: int, stacked: list, want: np.ndarray) -> np.ndarray:
    """Positions of the global rows ``want`` in [own rows; each list of ``stacked``]."""
    cat = np.concatenate([ctx.cols.owned[r], *stacked]) if stacked else ctx.cols.owned[r]
    order = np.argsort(cat, kind="stable")
    return order[np.searchsorted(cat[order], want)]


def _stage(ctx, r: int, prog: list, recv_slots: list, recv_ids: list, sends: dict, tag: int, presence: bool):
    """Stack the rows that arrived (``recv_slots``, ids ``recv_ids``) after this rank's own, pack
    each send list from the stack and send it. Returns (the stack's slot, the send slots)."""
    K, dtype = ctx.K, ctx.b_dtype.value
    src = ctx.b
    if recv_slots:
        src = ctx.slot()
        prog.append(StackRows(src, ctx.b, tuple(recv_slots), int(ctx.cols.owned[r].size), product=ctx.index))
    sent = []
    for q, ids in sends.items():
        s = ctx.slot()
        prog.append(Pack(s, src, _positions(ctx, r, recv_ids, ids), presence=presence, product=ctx.index))
        prog.append(Send(s, q, tag, ids.size * K, dtype, presence, product=ctx.index))
        sent.append(s)
    return src, sent


def rank_program(ctx, r: int, A_r, lists: dict):
    """Rank r's instructions: every receive posted; step 1's sends; its own block multiplied;
    steps 2 and 3 forwarded from stacks of what arrived; the rows of step 3 multiplied as they
    arrive, those of step 2 for itself from its stack."""
    K, dtype, cols = ctx.K, ctx.b_dtype.value, ctx.cols
    presence = not _values_only(ctx)
    in_place = ctx.in_place_if(_values_only(ctx))
    prog: list = []
    posted = {}
    for step in (1, 2, 3):
        posted[step] = []
        for q, ids in lists[f"recv{step}"].items():
            s = ctx.slot()
            prog.append(Recv(s, q, ctx.tag + step - 1, ids.size, K, dtype, presence=presence, product=ctx.index))
            posted[step].append(s)
    _, sent = _stage(ctx, r, prog, [], [], lists["send1"], ctx.tag, presence)
    recv3 = list(lists["recv3"].items())
    blocks = split_by_owner(A_r, [(r, cols.owned[r])] + recv3 + [("self", lists["self"])])
    if in_place:
        prog.append(Fill(ctx.out, int(ctx.rows.counts[r]), K, ctx.semiring.monoid, ctx.compute.value,
                         product=ctx.index))
    prog.append(MxM(ctx.out, ctx.const(r, ctx.gb(blocks[r])), ctx.b, ctx.semiring, accumulate=in_place,
                    product=ctx.index))
    S, more = _stage(ctx, r, prog, posted[1], list(lists["recv1"].values()), lists["send2"], ctx.tag + 1, presence)
    sent += more
    T, more = _stage(ctx, r, prog, posted[2], list(lists["recv2"].values()), lists["send3"], ctx.tag + 2, presence)
    sent += more
    if lists["self"].size:
        X = ctx.slot()
        prog.append(TakeRows(X, T, _positions(ctx, r, list(lists["recv2"].values()), lists["self"]),
                             product=ctx.index))
        prog.append(MxM(ctx.out, ctx.const(r, ctx.gb(blocks["self"])), X, ctx.semiring, accumulate=True,
                        product=ctx.index))
        prog.append(Free((X,)))
    if posted[3]:
        block_slots: list = []
        row_lists: list = []
        for q, _ in recv3:
            add_remote_block(ctx, r, blocks[q], in_place, block_slots, row_lists)
        prog.append(RecvMxM(ctx.out, tuple(posted[3]), tuple(block_slots), ctx.semiring, tuple(row_lists),
                            product=ctx.index))
    if sent:
        prog.append(WaitSends(tuple(sent), product=ctx.index))
    stacks = tuple(s for s in (S, T) if s != ctx.b)
    if stacks:
        prog.append(Free(stacks))
    empty = np.flatnonzero(np.diff(A_r.indptr) == 0)
    if in_place and empty.size:
        prog.append(DropRows(ctx.out, empty, product=ctx.index))
    ctx.emit_rank(r, prog)
