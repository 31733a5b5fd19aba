"""What a lowered product will do on each rank, counted from its plan instructions.

One rule per instruction type (COUNT) turns an instruction into increments of a rank's
categories: work (nonzeros x K multiplied, output rows written, entries an element-wise step
touches, words packed, buffers held)
and which channel its traffic takes (point-to-point, collective, one-sided). How many words
and messages an instruction moves is not restated here: it is the instruction's own
``traffic``, the same the runtime counts, so the model's words and messages are the plan's.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable

from .. import instr as ir
from ..instr import INSTRUCTIONS, Where
from ..ir.types import DType
from ..kernels import routes
from ..kernels.gbops import full_c_route, occupied

CATEGORIES = ("local_nnzk", "remote_nnzk", "local_out", "remote_out", "async_nnzk", "async_out", "local_words", "calls",
              "instrs",
              "fill_words", "pack_words", "p2p_msgs", "p2p_words", "coll_steps", "coll_words", "get_msgs",
              "get_words", "words_sent", "messages_sent", "memory_bytes", "spgemm_work")

COUNT: dict[type, Callable] = {}


def count_rule(*classes):
    def register(fn):
        for c in classes:
            COUNT[c] = fn
        return fn
    return register


class RankView:
    """A rank's instructions and planning-time pieces, as the count rules see them."""

    def __init__(self, instrs, consts, rank, P, K, group_sizes, compute: DType = DType.float64):
        self.instrs, self.consts, self.rank, self.P, self.K = instrs, consts, rank, P, K
        self.where = Where(rank, tuple(group_sizes))
        self.compute = compute   # the products' compute dtype (the route a product takes depends on it)
        self.itemsize = compute.np.itemsize
        self.recvs = {}   # slot -> the Recv / Get / IBcast posting it
        self.moved = {}   # slot -> (nnz, nrows) of a sparse piece that arrives by a collective

    def group_size(self, g: int) -> int:
        return self.where.group_sizes[g]

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
        return int(occupied(v).nvals)


def count_rank(view: RankView) -> dict:
    c = defaultdict(float)
    for _slot, v in view.consts.items():
        if hasattr(v, "nvals"):
            c["memory_bytes"] += v.nvals * (view.itemsize + 8)
    for i in view.instrs:
        c["instrs"] += 1               # the interpreter's cost per instruction, whatever it does
        rule = COUNT.get(type(i))
        if rule is None:
            raise KeyError(f"no cost rule for plan instruction {type(i).__name__}")
        t = i.traffic(view.where)
        c["words_sent"] += t.words_sent
        c["messages_sent"] += t.messages_sent
        rule(i, view, c, t)
    return dict(c)


def log2(g: int) -> float:
    return math.ceil(math.log2(g)) if g > 1 else 0.0


@count_rule(ir.MxM)
def _mxm(i, v, c, t):
    # local: its operands are present when it runs (whether or not it accumulates in place);
    # products on arriving data are RecvMxM's (remote / async)
    c["local_nnzk"] += v.nnz(i.a) * v.K
    c["local_out"] += v.rows(i.a) * v.K
    c["calls"] += 1
    if not i.accumulate and i.mask is None:   # the route it takes (b full): one that starts C full fills it
        a = v.consts.get(i.a)
        if a is not None and hasattr(a, "shape") and routes.choose(i.semiring, DType.float64, a_full=False,
                                                                   b_full=True).fills:
            c["fill_words"] += a.shape[0] * v.K


@count_rule(ir.RecvMxM)
def _recv_mxm(i, v, c, t):
    for r, b in zip(i.recvs, i.blocks):
        side = "async" if isinstance(v.recvs.get(r), ir.Get) else "remote"   # Two-Face's async half
        c[f"{side}_nnzk"] += v.nnz(b) * v.K
        c[f"{side}_out"] += v.rows(b) * v.K
        c["calls"] += 1


@count_rule(ir.StackMxM)
def _stack_mxm(i, v, c, t):
    # one product after every receive completed (nothing overlaps it); stacking copies the rows
    if i.flops is not None:   # sparse x sparse: its multiply-adds, output entries, the entries stacked
        _spgemm(i, v, c, sum(v.recvs[r].traffic(v.where).words_received for r in i.recvs if r in v.recvs))
        return
    c["remote_nnzk"] += v.nnz(i.a) * v.K
    c["remote_out"] += v.rows(i.a) * v.K
    c["calls"] += 1
    stacked = v.consts[i.a].shape[1] if i.a in v.consts else 0
    if not i.shared:
        c["pack_words"] += stacked * v.K
    elif i.mask is None and full_c_route(i.semiring, v.compute, v.K):
        # new rows, as a run is priced: own's block reads them in place and the peers' block the
        # rows they wrote, two passes over one full C, nothing copied (runtime/interp/messages.py).
        # Still one call: kappa (fitted at ~0.3 ms) prices an instruction's product with its
        # bookkeeping; the second GraphBLAS call inside it costs microseconds
        c["remote_out"] += v.rows(i.a) * v.K
    else:   # the peers' rows land in place: own's alone are copied
        c["pack_words"] += (stacked - sum(r.nrows for r in map(v.recvs.get, i.recvs) if r is not None)) * v.K


@count_rule(ir.StackRows)
def _stack_rows(i, v, c, t):
    # own's rows and, after them, the rows that arrived, copied into one stack for the Packs that
    # forward from it
    rows = i.own_rows + sum(r.nrows for r in map(v.recvs.get, i.recvs) if r is not None)
    c["pack_words"] += rows * v.K
    c["memory_bytes"] += rows * v.K * v.itemsize


def _spgemm(i, v, c, stacked: int):
    # a sparse x sparse product's multiply-adds and output entries (SuiteSparse's hash/Gustavson
    # kernels cost ~10x an SpMM's per nonzero: model.SPGEMM_S prices them); in column batches,
    # one batch's output at a time (and B's columns of a batch copied out once each)
    batches = max(1, len(getattr(i, "batches", ())))
    c["spgemm_work"] += i.flops + i.out_entries
    c["calls"] += batches
    c["pack_words"] += stacked
    c["memory_bytes"] += i.out_entries * (v.itemsize + 8) // batches + stacked * (v.itemsize + 8)


@count_rule(ir.StackedMxM)
def _stacked_mxm(i, v, c, t):
    # the pieces are copied into one operand each (priced as packing) and multiplied once
    stacked = sum(v.nnz(s) for s in i.a_parts + i.b_parts)
    _spgemm(i, v, c, stacked)


@count_rule(ir.AlltoallSparse)
def _alltoall_sparse(i, v, c, t):
    c["p2p_msgs"] += t.messages_received
    c["p2p_words"] += t.words_received
    c["pack_words"] += 2 * (t.words_sent + t.words_received)   # a row and a column id with each value
    # src as (row, column, value) triplets and those arriving, then the result built from them;
    # in column batches, one batch's triplets at a time, its pieces kept, then joined (twice C)
    b = len(i.batches)
    if b:
        c["memory_bytes"] += (i.held + i.arrive) * (v.itemsize + 16) // b + 2 * i.arrive * (v.itemsize + 8)
    else:
        c["memory_bytes"] += (i.held + i.arrive) * (v.itemsize + 16) + i.arrive * (v.itemsize + 8)


@count_rule(ir.FetchMxM)
def _fetch_mxm(i, v, c, t):
    # rows fetched one owner at a time: the entries asked for arrive as triplets; P products
    c["p2p_msgs"] += t.messages_sent + t.messages_received
    c["p2p_words"] += t.words_received
    c["pack_words"] += 2 * (t.words_sent + t.words_received)
    c["calls"] += v.P
    c["memory_bytes"] += t.words_received * (v.itemsize + 16) // max(1, v.P - 1)


@count_rule(ir.FetchGather)
def _fetch_gather(i, v, c, t):
    # positions out, entries back (values and their presence), in two exchanges; the asked
    # positions and the answers packed and unpacked once each
    c["p2p_msgs"] += t.messages_sent + t.messages_received
    c["p2p_words"] += t.words_received
    c["pack_words"] += t.words_sent + t.words_received
    c["calls"] += 1
    c["memory_bytes"] += (t.words_sent + t.words_received) * (v.itemsize + 9)


@count_rule(ir.SampledMxM)
def _sampled_mxm(i, v, c, t):
    # one dot product of length K per mask entry: with b's own rows (local), with received rows
    # (remote); the received rows are placed in one matrix with the own ones first (packing)
    own, *far = i.entries
    c["local_nnzk"] += own * v.K
    c["remote_nnzk"] += sum(far) * v.K
    c["local_out"] += sum(i.entries)
    c["pack_words"] += (len(i.own_ids) + sum(len(x) for x in i.ids)) * v.K
    c["memory_bytes"] += (len(i.own_ids) + sum(len(x) for x in i.ids)) * v.K * v.itemsize
    c["calls"] += 1


@count_rule(ir.Recv)
def _recv(i, v, c, t):
    v.recvs[i.out] = i
    c["p2p_msgs"] += t.messages_received
    c["p2p_words"] += t.words_received
    c["memory_bytes"] += t.words_received * v.itemsize


@count_rule(ir.Send)
def _send(i, v, c, t):
    c["p2p_msgs"] += t.messages_sent
    c["p2p_words"] += t.words_sent


@count_rule(ir.SendRecvRows)
def _sendrecv(i, v, c, t):
    c["p2p_msgs"] += t.messages_sent + t.messages_received
    c["p2p_words"] += t.words_sent + t.words_received
    c["pack_words"] += t.words_sent + t.words_received


@count_rule(ir.Alltoall)
def _alltoall(i, v, c, t):
    c["p2p_msgs"] += t.messages_received
    c["p2p_words"] += t.words_received
    c["pack_words"] += sum(i.sent()) + sum(i.received())
    c["memory_bytes"] += sum(i.received()) * v.itemsize


@count_rule(ir.Get)
def _get(i, v, c, t):
    v.recvs[i.out] = i
    c["get_msgs"] += t.messages_received
    c["get_words"] += t.words_received
    c["memory_bytes"] += t.words_received * v.itemsize


@count_rule(ir.WinExpose)
def _win_expose(i, v, c, t):
    c["coll_steps"] += log2(v.P)                       # the barrier
    c["pack_words"] += i.nrows * i.k
    c["memory_bytes"] += 2 * i.nrows * i.k * v.itemsize


@count_rule(ir.AllgatherRows)
def _allgather(i, v, c, t):
    c["coll_steps"] += log2(v.group_size(i.group))
    c["coll_words"] += t.words_received
    c["pack_words"] += int(i.counts.sum()) * i.k
    c["memory_bytes"] += int(i.counts.sum()) * i.k * v.itemsize


@count_rule(ir.Bcast, ir.IBcast)
def _bcast(i, v, c, t):
    if isinstance(i, ir.IBcast):   # posted: RecvMxM consumes it; the root's Pack counts packing
        v.recvs[i.out] = i
    else:
        c["pack_words"] += i.nrows * i.k
    c["coll_steps"] += log2(v.group_size(i.group))
    c["coll_words"] += i.nrows * i.k                 # root and receivers alike: the tree's depth
    if i.src is None:
        c["memory_bytes"] += i.nrows * i.k * v.itemsize


@count_rule(ir.BcastSparse)
def _bcast_sparse(i, v, c, t):
    v.moved[i.out] = (i.nnz, i.nrows)
    c["coll_steps"] += log2(v.group_size(i.group))
    c["coll_words"] += 2 * i.nnz                      # values and column indices
    c["pack_words"] += 2 * i.nnz
    c["memory_bytes"] += i.nnz * (v.itemsize + 8)


@count_rule(ir.Allreduce)
def _allreduce(i, v, c, t):
    c["coll_steps"] += 2 * log2(v.group_size(i.group))
    if t.words_sent:
        c["coll_words"] += t.words_received
        c["pack_words"] += 2 * i.entries
        c["memory_bytes"] += 2 * i.entries * v.itemsize


@count_rule(ir.SmallAllreduce, ir.ISmallAllreduce)
def _small_allreduce(i, v, c, t):
    c["coll_steps"] += log2(v.group_size(i.group))
    if t.words_sent:
        c["coll_words"] += t.words_received
        c["pack_words"] += 2 * sum(i.entries)


@count_rule(ir.Pack, ir.PackSparse)
def _pack(i, v, c, t):
    words = len(i.rows) * v.K if getattr(i, "entries", None) is None else i.entries * 2   # (a position each)
    c["pack_words"] += words
    c["memory_bytes"] += words * v.itemsize


@count_rule(ir.Fill, ir.Empty)
def _fill(i, v, c, t):
    c["memory_bytes"] += i.nrows * i.k * v.itemsize
    if isinstance(i, ir.Fill):     # the output, created full at the identity (a memset)
        c["fill_words"] += i.nrows * i.k


@count_rule(ir.TakeRows)
def _take_rows(i, v, c, t):
    c["pack_words"] += len(i.rows) * v.K


@count_rule(ir.Local)
def _local(i, v, c, t):
    # an element-wise step, a reduction, ...: the entries its op's work rule says it touches here
    c["local_words"] += i.work


@count_rule(ir.WaitSends, ir.WaitAllreduce, ir.Free, ir.DropRows, ir.CastTo, ir.TakeCols, ir.Unpermute,
            ir.AllgatherSparse, ir.Loop, ir.Redistribute, ir.TransposeRows)
def _nothing(i, v, c, t):
    pass   # (a product's candidates never hold loops: products sit inside loops, not around them)


assert set(COUNT) == set(INSTRUCTIONS), f"instructions without a cost rule: {set(INSTRUCTIONS) - set(COUNT)}"
