"""What a lowered product will do on each rank, counted from its plan instructions.

One rule per instruction type (COUNT) turns an instruction into increments of a rank's
categories. Because the counts come from the very instructions the runtime executes, the
model's words and messages are the plan's, not an independent guess.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable

CATEGORIES = ("local_nnzk", "remote_nnzk", "local_out", "remote_out", "async_nnzk", "async_out", "calls", "instrs", "fill_words", "pack_words", "p2p_msgs", "p2p_words", "coll_steps",
              "coll_words", "get_msgs", "get_words", "words_sent", "messages_sent", "memory_bytes")

COUNT: dict[type, Callable] = {}


def count_rule(*classes):
    def register(fn):
        for c in classes:
            COUNT[c] = fn
        return fn
    return register


class RankView:
    """A rank's instructions and planning-time pieces, as the count rules see them."""

    def __init__(self, instrs, consts, rank, P, K, group_sizes, itemsize=8):
        self.instrs, self.consts, self.rank, self.P, self.K = instrs, consts, rank, P, K
        self.group_sizes = group_sizes
        self.itemsize = itemsize
        self.recvs = {}   # slot -> the Recv / Get / IBcast posting it

        self.moved = {}   # slot -> (nnz, nrows) of a sparse piece that arrives by a collective

    def nnz(self, slot) -> int:
        if slot in self.moved:
            return self.moved[slot][0]
        v = self.consts.get(slot)
        return int(v.nvals) if v is not None and hasattr(v, "nvals") else 0

    def rows(self, slot) -> int:
        """Rows of a product's sparse operand that hold entries: the output rows it writes. (A
        block kept whole for in-place accumulation has many empty rows, and SuiteSparse skips
        them; counting all of them made p2p1d look 1.5-2x slower than it ran on partitioned
        real graphs at small K.)"""
        if slot in self.moved:
            return self.moved[slot][1]
        v = self.consts.get(slot)
        if v is None or not hasattr(v, "nrows") or v.nvals == 0:
            return 0
        from ..exec.gbops import occupied
        return int(occupied(v).nvals)


def count_rank(view: RankView) -> dict:
    c = defaultdict(float)
    for slot, v in view.consts.items():
        if hasattr(v, "nvals"):
            c["memory_bytes"] += v.nvals * (view.itemsize + 8)
    for i in view.instrs:
        c["instrs"] += 1               # the interpreter's cost per instruction, whatever it does
        rule = COUNT.get(type(i))
        if rule is None:
            raise KeyError(f"no cost rule for plan instruction {type(i).__name__}")
        rule(i, view, c)
    return dict(c)


def log2(g: int) -> float:
    return math.ceil(math.log2(g)) if g > 1 else 0.0


def _register_builtin():
    from ..dist import planir as ir

    @count_rule(ir.MxM)
    def _mxm(i, v, c):
        # local: its operands are present when it runs (whether or not it accumulates in place);
        # products on arriving data are RecvMxM's (remote / async)
        c["local_nnzk"] += v.nnz(i.a) * v.K
        c["local_out"] += v.rows(i.a) * v.K
        c["calls"] += 1

    @count_rule(ir.RecvMxM)
    def _recv_mxm(i, v, c):
        for r, b in zip(i.recvs, i.blocks):
            rec = v.recvs.get(r)
            side = "async" if isinstance(rec, ir.Get) else "remote"   # Two-Face's async half
            c[f"{side}_nnzk"] += v.nnz(b) * v.K
            c[f"{side}_out"] += v.rows(b) * v.K
            c["calls"] += 1
            if isinstance(rec, ir.Recv):
                c["p2p_msgs"] += 1
                c["p2p_words"] += rec.nrows * rec.k
                c["memory_bytes"] += rec.nrows * rec.k * v.itemsize

    @count_rule(ir.Get)
    def _get(i, v, c):
        v.recvs[i.out] = i
        c["get_msgs"] += 1
        c["get_words"] += i.nrows * i.k
        c["memory_bytes"] += i.nrows * i.k * v.itemsize

    @count_rule(ir.WinExpose)
    def _win_expose(i, v, c):
        c["coll_steps"] += log2(v.P)                       # the barrier
        c["pack_words"] += i.nrows * i.k
        c["memory_bytes"] += 2 * i.nrows * i.k * v.itemsize
        c["words_sent"] += i.served_words
        c["messages_sent"] += i.served_messages

    @count_rule(ir.BcastSparse)
    def _bcast_sparse(i, v, c):
        v.moved[i.out] = (i.nnz, i.nrows)
        g = v.group_sizes[i.group]
        c["coll_steps"] += log2(g)
        c["coll_words"] += 2 * i.nnz                      # values and column indices
        c["pack_words"] += 2 * i.nnz
        c["memory_bytes"] += i.nnz * (v.itemsize + 8)
        if i.src is not None:
            c["words_sent"] += i.nnz * (g - 1)
            c["messages_sent"] += g - 1

    @count_rule(ir.Alltoall)
    def _alltoall(i, v, c):
        me = i.me
        sent = [len(r) * (hi - lo) for r, (lo, hi) in zip(i.send_rows, i.send_cols)]
        recv = [a * b for a, b in i.recv_shapes]
        peers = sum(1 for m, x in enumerate(recv) if m != me and x)
        c["p2p_msgs"] += peers
        c["p2p_words"] += sum(x for m, x in enumerate(recv) if m != me)
        c["pack_words"] += sum(sent) + sum(recv)
        c["words_sent"] += sum(x for m, x in enumerate(sent) if m != me)
        c["messages_sent"] += sum(1 for m, x in enumerate(sent) if m != me and x)
        c["memory_bytes"] += sum(recv) * v.itemsize

    @count_rule(ir.Recv)
    def _recv(i, v, c):
        v.recvs[i.out] = i

    @count_rule(ir.Pack)
    def _pack(i, v, c):
        c["pack_words"] += len(i.rows) * v.K
        c["memory_bytes"] += len(i.rows) * v.K * v.itemsize

    @count_rule(ir.Send)
    def _send(i, v, c):
        c["p2p_msgs"] += 1
        c["p2p_words"] += i.words
        c["words_sent"] += i.words
        c["messages_sent"] += 1

    @count_rule(ir.AllgatherRows)
    def _allgather(i, v, c):
        g = v.group_sizes[i.group]
        me = v.rank if i.me is None else i.me
        own = int(i.counts[me]) if me < len(i.counts) else 0
        total = int(i.counts.sum())
        peers = int((i.counts > 0).sum()) - (1 if own else 0)
        c["coll_steps"] += log2(g)
        c["coll_words"] += (total - own) * i.k
        c["pack_words"] += total * i.k
        c["words_sent"] += own * i.k * peers
        c["messages_sent"] += peers if own else 0
        c["memory_bytes"] += total * i.k * v.itemsize

    @count_rule(ir.Bcast, ir.IBcast)
    def _bcast(i, v, c):
        if isinstance(i, ir.IBcast):   # posted: RecvMxM consumes it; the root's Pack counts packing
            v.recvs[i.out] = i
        else:
            c["pack_words"] += i.nrows * i.k
        g = v.group_sizes[i.group]
        c["coll_steps"] += log2(g)
        c["coll_words"] += i.nrows * i.k
        if i.src is not None:  # the root
            c["words_sent"] += i.nrows * i.k * (g - 1)
            c["messages_sent"] += g - 1
        else:
            c["memory_bytes"] += i.nrows * i.k * v.itemsize

    @count_rule(ir.Allreduce)
    def _allreduce(i, v, c):
        g = v.group_sizes[i.group]
        c["coll_steps"] += 2 * log2(g)
        if g > 1:  # reduce-scatter + allgather: each rank moves 2 (g - 1) / g of the buffer
            c["coll_words"] += 2 * (g - 1) * i.entries / g
            c["pack_words"] += 2 * i.entries
            c["words_sent"] += 2 * (g - 1) * i.entries / g
            c["messages_sent"] += 2 * (g - 1)
            c["memory_bytes"] += 2 * i.entries * v.itemsize

    @count_rule(ir.SendRecvRows)
    def _sendrecv(i, v, c):
        c["p2p_msgs"] += 2
        c["p2p_words"] += 2 * i.nrows * i.k
        c["pack_words"] += 2 * i.nrows * i.k
        c["words_sent"] += i.nrows * i.k
        c["messages_sent"] += 1

    @count_rule(ir.Fill, ir.Empty)
    def _fill(i, v, c):
        c["memory_bytes"] += i.nrows * i.k * v.itemsize
        if isinstance(i, ir.Fill):     # the output, created full at the identity (a memset)
            c["fill_words"] += i.nrows * i.k

    @count_rule(ir.TakeRows)
    def _take_rows(i, v, c):
        c["pack_words"] += len(i.rows) * v.K

    @count_rule(ir.WaitSends, ir.Free, ir.DropRows, ir.CastTo, ir.Local, ir.TakeCols, ir.Unpermute,
                ir.AllgatherSparse)
    def _free(i, v, c):
        pass


_register_builtin()
