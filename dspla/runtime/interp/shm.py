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

A StackMxM planned ``shared`` (p2p1d on one node) gets one area instead: its own rows, then each
receive's region, contiguous, so its one product reads the whole operand where it lies (Stack).
A Pack whose input is unchanged since its last round writes nothing (``repack``): the region
still holds those rows.
"""
from __future__ import annotations

import os

import numpy as np

from ...instr import Pack, Recv, RecvMxM, Send, StackMxM, walk
from ...ir.types import DType
from ...kernels import buffers as local

HEADER = 128                 # bytes of a region's flags: two, a cache line apart
WRITTEN, CONSUMED = 0, 8     # the flags' int64 positions in the header
BUDGET_MB = float(os.environ.get("DSPLA_SHM_MB", "512"))   # per rank; above it, messages


def enabled() -> bool:
    return os.environ.get("DSPLA_SHM", "1") != "0"


def node_budget(comm) -> int:
    """Bytes a rank may put where the others read (a collective): the budget when every rank is
    on one node and none turned the path off (DSPLA_SHM=0: a rank's environment may differ),
    else 0. Planning reads it (Options.shared_memory_bytes), and so do the regions (Channels)."""
    if comm.size < 2 or not hasattr(comm, "segments") or not comm.one_node():
        return 0
    return int(BUDGET_MB * 2**20) if all(comm.allgather(enabled())) else 0


def _room() -> float:
    """Bytes free where MPICH puts shared memory (a container's /dev/shm may be small: a segment
    larger than what is free would fault when first written)."""
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return float("inf")
    return float(st.f_bavail * st.f_frsize)


def _sends(instrs) -> list:
    """((dest, tag), the Pack that filled its buffer, or None) of every Send, in program order
    (``instrs``: instr.walk's; None: a sparse one, or one whose buffer no Pack filled)."""
    out, packed = [], {}
    for i in instrs:
        if type(i) is Pack:
            packed[i.out] = i
        elif type(i) is Send:
            out.append(((i.dest, i.tag), packed.pop(i.buf, None) if not i.sparse else None))
    return out


def _nbytes(spec) -> int:
    nrows, k, dtype, presence = spec
    return local.packed_nbytes(nrows, k, DType(dtype), presence)


def _round64(n: int) -> int:
    return -(-n // 64) * 64


class End:
    """One side of a region: its flags, its rows (an (nrows, k) array, or the packed bytes with
    presence) and the rounds this side has done."""

    __slots__ = ("seg", "flags", "view", "round", "peer")

    def __init__(self, seg, flags: np.ndarray, data: np.ndarray, spec, peer: int):
        nrows, k, dtype, presence = spec
        self.seg, self.peer = seg, peer
        self.flags = flags.view(np.int64)
        data = data[:_nbytes(spec)]
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


def repack(end: End) -> End:
    """A round whose rows are those of the last (the Pack's input is unchanged): the region
    still holds them, as the receiver only reads it, so there is nothing to write or wait for."""
    end.round += 1
    return end


def publish(e: End):
    e.seg.fence()
    e.flags[WRITTEN] = e.round
    e.seg.notify()


def _layouts(outs: list, ins: list, stacks: list) -> list:
    """Per rank d: ({key: (flag offset, data offset, spec)} of the receives whose sender sends
    them that way too, {stack: data offset}, the bytes of d's segment), from every rank's
    eligible sends {(dest, tag, n)}, receives {(source, tag, n): spec} and stacks (StackMxM
    position, own's rows, k, dtype, its receives' keys in order). A key's n counts the
    messages of that peer and tag in program order, as MPI matches them. A stack whose every
    receive comes this way gets one area: own's rows, then each receive's, contiguous, so the
    product reads them as one operand where they lie; the others' rows each get their own."""
    sending = [set(o) for o in outs]
    layouts = []
    for d, mine in enumerate(ins):
        ok = {(src, tag, n): spec for (src, tag, n), spec in mine.items() if (d, tag, n) in sending[src]}
        flags = {key: HEADER * j for j, key in enumerate(sorted(ok))}
        data, areas, off = {}, {}, HEADER * len(ok)
        for pos, own_rows, k, dtype, keys in stacks[d]:
            if keys and all(key in ok for key in keys):
                areas[pos] = off
                off += own_rows * k * DType(dtype).np.itemsize
                for key in keys:
                    data[key] = off
                    off += _nbytes(ok[key])
                off = _round64(off)
        for key in sorted(ok):
            if key not in data:
                data[key] = off
                off = _round64(off + _nbytes(ok[key]))
        layouts.append(({key: (flags[key], data[key], ok[key]) for key in ok}, areas, off))
    return layouts


def _keyed(pairs) -> dict:
    """(peer, tag) of each item in program order -> {(peer, tag, n): item}, n counting repeats."""
    seen: dict = {}
    out = {}
    for (peer, tag), item in pairs:
        n = seen.get((peer, tag), 0)
        seen[(peer, tag)] = n + 1
        out[(peer, tag, n)] = item
    return out


class Stack:
    """A StackMxM's area in this rank's segment: ``whole`` (own's rows then every receive's, as
    one (rows, k) array), ``own``, its first rows, and ``far``, the peers' after them. The runtime
    keeps there whether own's rows were last copied in (``placed``) and, once made, the product's
    two blocks (``blocks``: messages._stack_in_place; False where they do not apply)."""

    __slots__ = ("whole", "own", "far", "placed", "blocks")

    def __init__(self, area: np.ndarray, own_rows: int, total: int, k: int, dtype: DType):
        self.whole = area[:total * k * dtype.np.itemsize].view(dtype.np).reshape(total, k)
        self.own = self.whole[:own_rows]
        self.far = self.whole[own_rows:]
        self.placed = False
        self.blocks = None


class Channels:
    """The regions of one rank program (made collectively, with the Runtime): ``sends`` maps a
    Pack's id to the sender's End, ``recvs`` a Recv's id to the receiver's, ``stacks`` a
    StackMxM's id to its area (Stack). ``budget``: node_budget's (0: messages)."""

    def __init__(self, comm, program, budget: int):
        self.sends: dict = {}
        self.recvs: dict = {}
        self.stacks: dict = {}
        self.seg = None
        if not budget:
            return
        instrs = [*walk(program.setup), *walk(program.instrs)]
        read = {s for i in instrs if type(i) in (StackMxM, RecvMxM) for s in i.recvs}
        recvs = _keyed(((i.source, i.tag), i) for i in instrs if type(i) is Recv)
        sends = {key: p for key, p in _keyed(_sends(instrs)).items() if p is not None}
        mine_in = {key: (r.nrows, r.k, r.dtype, r.presence) for key, r in recvs.items()
                   if not r.sparse and not r.deferred and r.out in read and r.nrows * r.k}
        by_slot = {r.out: key for key, r in recvs.items()}
        stacks, mine_stacks = [i for i in instrs if type(i) is StackMxM], []
        for pos, i in enumerate(stacks):
            keys = [by_slot.get(s) for s in i.recvs]
            if i.shared and i.a in program.consts and all(key in mine_in and not mine_in[key][3] for key in keys):
                _, k, dtype, _ = mine_in[keys[0]]
                own_rows = program.consts[i.a].ncols - sum(mine_in[key][0] for key in keys)
                mine_stacks.append((pos, own_rows, k, dtype, keys))
        tables = comm.allgather((sorted(sends), mine_in, mine_stacks, _room()))   # (one node: a few ranks' pairs)
        layouts = _layouts([t[0] for t in tables], [t[1] for t in tables], [t[2] for t in tables])
        sizes = [n for _, _, n in layouts]
        if not any(sizes) or max(sizes) > budget or sum(sizes) > min(t[3] for t in tables) / 2:
            return   # (the same decision on every rank: all from the gathered tables)
        regions, areas, size = layouts[comm.rank]
        seg = comm.segments(size)
        seg.mine[:HEADER * len(regions)] = 0
        seg.fence()
        comm.barrier()   # every flag zeroed before any rank writes
        self.seg = seg
        for key, (fo, do, spec) in regions.items():
            self.recvs[id(recvs[key])] = End(seg, seg.mine[fo:fo + HEADER], seg.mine[do:], spec, key[0])
        for pos, own_rows, k, dtype, keys in mine_stacks:
            if pos in areas:
                total = own_rows + sum(mine_in[key][0] for key in keys)
                self.stacks[id(stacks[pos])] = Stack(seg.mine[areas[pos]:], own_rows, total, k, DType(dtype))
        for (dest, tag, n), pack in sends.items():
            got = layouts[dest][0].get((comm.rank, tag, n))
            if got is not None:
                fo, do, spec = got
                peer = seg.peer(dest)
                self.sends[id(pack)] = End(seg, peer[fo:fo + HEADER], peer[do:], spec, dest)

    def free(self):
        if self.seg is not None:
            self.seg.free()
            self.seg = None
        self.sends, self.recvs, self.stacks = {}, {}, {}
