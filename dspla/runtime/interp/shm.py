"""Rows a rank sends, written by the sender straight into the receiver's memory (one node).

With MPICH on one node a large message is copied by the *receiver* (CMA), when it next enters
MPI: in p2p1d that is after its own local product, so the copy sits on its critical path while
the sender, done early, idles (soc-Slashdot0902, K = 16, P = 2: rank 0 waited ~0.9 ms for the
4.5 MB rank 1 had sent long before). When every rank is on one node, each dense receive that a
product consumes (StackMxM, RecvMxM) gets a region of its rank's shared segment, and the
sender's Pack writes the rows there itself. Two int64 flags per region order the rounds:

- sender, round t: wait until ``consumed >= t - 1`` (the receiver is done with the last round),
  pack into the region, fence, set ``written = t``;
- receiver, round t: wait until ``written >= t``, fence, read the rows in place (a product reads
  them through ``lend.foreign_full``, nothing copied), fence, set ``consumed = t``.

The plan is unchanged: the same rows move, counted as before (what the cost model and the stats
account); only the receiver no longer copies them. Each side counts its rounds per region, and
every Send meets exactly one Recv per run, so the counts agree. ``DSPLA_SHM=0`` keeps messages.
"""
from __future__ import annotations

import os

import numpy as np

from ...exec import buffers as local
from ...ir.types import DType
from ...plan.ir import Loop, Pack, Recv, RecvMxM, Send, StackMxM, walk

HEADER = 128                 # bytes before a region's rows: two flags a cache line apart
WRITTEN, CONSUMED = 0, 8     # the flags' int64 positions in the header
BUDGET_MB = float(os.environ.get("DSPLA_SHM_MB", "512"))   # per rank; above it, messages


def enabled() -> bool:
    return os.environ.get("DSPLA_SHM", "1") != "0"


def _room() -> float:
    """Bytes free where MPICH puts shared memory (a container's /dev/shm may be small: a segment
    larger than what is free would fault when first written)."""
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return float("inf")
    return float(st.f_bavail * st.f_frsize)


def _sends(block) -> list:
    """(Send, the Pack that filled its buffer) of every dense Send of the block and its loops."""
    out, packed = [], {}
    for i in block:
        if type(i) is Pack:
            packed[i.out] = i
        elif type(i) is Send and not i.sparse and i.buf in packed:
            out.append((i, packed.pop(i.buf)))
        elif type(i) is Loop:
            out += _sends(i.cond) + _sends(i.body)
    return out


def _nbytes(spec) -> int:
    nrows, k, dtype, presence = spec
    return local.packed_nbytes(nrows, k, DType(dtype), presence)


class End:
    """One side of a region: its flags, its rows (an (nrows, k) array, or the packed bytes with
    presence) and the rounds this side has done."""

    __slots__ = ("seg", "flags", "view", "round", "peer")

    def __init__(self, seg, region: np.ndarray, spec, peer: int):
        nrows, k, dtype, presence = spec
        self.seg, self.peer = seg, peer
        self.flags = region[:HEADER].view(np.int64)
        data = region[HEADER:HEADER + _nbytes(spec)]
        self.view = data if presence else data.view(DType(dtype).np).reshape(nrows, k)
        self.round = 0


class Arrival:
    """A receive's round, posted: ``wait`` until the sender has written it, ``release`` once read."""

    __slots__ = ("end", "round")

    def __init__(self, end: End):
        end.round += 1
        self.end, self.round = end, end.round

    def wait(self):
        e = self.end
        e.seg.wait(e.flags, WRITTEN, self.round, e.peer)
        e.seg.fence()

    def release(self):
        e = self.end
        e.seg.fence()
        e.flags[CONSUMED] = self.round
        e.seg.notify()


def pack(end: End, M, rows, dtype: DType, presence: bool) -> End:
    """Rows ``rows`` of M packed into the receiver's region, once it is done with the last round;
    the End is what the Pack leaves in its slot for the Send to publish."""
    end.round += 1
    end.seg.wait(end.flags, CONSUMED, end.round - 1, end.peer)
    end.seg.fence()
    got = local.pack_rows(M, rows, dtype, presence, out=end.view)
    if got is not end.view:   # (a path of pack_rows that made its own array)
        np.copyto(end.view, got.reshape(end.view.shape), casting="same_kind")
    return end


def publish(e: End):
    e.seg.fence()
    e.flags[WRITTEN] = e.round
    e.seg.notify()


def _layouts(outs: list, ins: list) -> list:
    """Per rank d: ({(source, tag): (offset, spec)} of the receives whose sender sends them
    that way too, the bytes of d's segment), from every rank's eligible sends (dest, tag) and
    receives {(source, tag): spec}; each region a 64-byte multiple."""
    sending = [set(o) for o in outs]
    layouts = []
    for d, mine in enumerate(ins):
        lay, off = {}, 0
        for (src, tag), spec in sorted(mine.items()):
            if (d, tag) in sending[src]:
                lay[(src, tag)] = (off, spec)
                off += HEADER + -(-_nbytes(spec) // 64) * 64
        layouts.append((lay, off))
    return layouts


class Channels:
    """The regions of one rank program (made collectively, with the Runtime): ``sends`` maps a
    Pack's id to the sender's End, ``recvs`` a Recv's id to the receiver's."""

    def __init__(self, comm, program):
        self.sends: dict = {}
        self.recvs: dict = {}
        self.seg = None
        if comm.size < 2 or not hasattr(comm, "segments") or not comm.one_node():
            return
        instrs = [*walk(program.setup), *walk(program.instrs)]
        read = {s for i in instrs if type(i) in (StackMxM, RecvMxM) for s in i.recvs}
        recvs: dict = {}
        for i in instrs:
            if type(i) is Recv:   # (a key met twice is left to messages)
                recvs[(i.source, i.tag)] = i if (i.source, i.tag) not in recvs else None
        sends: dict = {}   # (dest, tag) -> the Pack filling that Send's buffer (None: met twice)
        for s, p in _sends(program.setup) + _sends(program.instrs):
            sends[(s.dest, s.tag)] = p if (s.dest, s.tag) not in sends else None
        mine_in = {key: (r.nrows, r.k, r.dtype, r.presence) for key, r in recvs.items()
                   if r is not None and not r.sparse and not r.deferred and r.out in read and r.nrows * r.k}
        mine_out = sorted(key for key, v in sends.items() if v is not None)
        # (one node: a few ranks' pairs; DSPLA_SHM agreed, as a rank's environment may differ)
        tables = comm.allgather((enabled(), mine_out, mine_in, _room()))
        if not all(t[0] for t in tables):
            return
        layouts = _layouts([t[1] for t in tables], [t[2] for t in tables])
        sizes = [n for _, n in layouts]
        if not any(sizes) or max(sizes) > BUDGET_MB * 2**20 or sum(sizes) > min(t[3] for t in tables) / 2:
            return   # (the same decision on every rank: all from the gathered tables)
        seg = comm.segments(layouts[comm.rank][1])
        for off, _ in layouts[comm.rank][0].values():
            seg.mine[off:off + HEADER] = 0
        seg.fence()
        comm.barrier()   # every flag zeroed before any rank writes
        self.seg = seg
        for (src, tag), (off, spec) in layouts[comm.rank][0].items():
            self.recvs[id(recvs[(src, tag)])] = End(seg, seg.mine[off:off + HEADER + _nbytes(spec)], spec, src)
        for (dest, tag), pack in sends.items():
            got = layouts[dest][0].get((comm.rank, tag)) if pack is not None else None
            if got is not None:
                off, spec = got
                self.sends[id(pack)] = End(seg, seg.peer(dest)[off:off + HEADER + _nbytes(spec)], spec, dest)

    def free(self):
        if self.seg is not None:
            self.seg.free()
            self.seg = None
        self.sends, self.recvs = {}, {}
