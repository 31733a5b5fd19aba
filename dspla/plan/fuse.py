"""Plan rewrite: small Allreduces become SmallAllreduce instructions, and independent ones
of the same group become one.

An iterative program reduces a few scalars per step (PageRank: the rank mass, the dangling
mass, the change). Each Allreduce is two collectives (values, presence), and each collective
is a point where every rank waits for the slowest. An Allreduce is moved later, past local
computation that neither reads its result nor writes its input, until something needs its
result or talks to other ranks; Allreduces that meet there are sent together. Communication
instructions keep their order, so every rank's sequence of collectives stays the same.
"""
from __future__ import annotations

from dataclasses import replace

from . import ir

SMALL = 256   # entries of one collective up to which values and presence travel together, gathered

# instructions that only compute on this rank: an Allreduce may move past them
_LOCAL = (ir.Local, ir.MxM, ir.Fill, ir.DropRows, ir.Pack, ir.PackSparse, ir.Unpermute, ir.TakeRows, ir.TakeCols,
          ir.CastTo, ir.Empty, ir.Free)


def _small(i) -> bool:
    return type(i) is ir.Allreduce and i.product is None and i.entries <= SMALL


def _touches(i, slots: set) -> bool:
    used = set(i.reads()) | set(i.writes())
    if type(i) is ir.Free:
        used |= set(i.slots)
    return bool(used & slots)


def _emit(pending: list) -> ir.SmallAllreduce:
    return ir.SmallAllreduce(tuple(p.out for p in pending), tuple(p.src for p in pending),
                             tuple(p.monoid for p in pending), tuple(p.entries for p in pending),
                             group=pending[0].group)


def fuse_list(instrs: list) -> list:
    out, pending = [], []

    def flush():
        if pending:
            out.append(_emit(pending))
            pending.clear()

    for i in instrs:
        if type(i) is ir.Loop:
            flush()
            out.append(replace(i, cond=fuse_list(i.cond), body=fuse_list(i.body)))
            continue
        if _small(i):
            mine = {p.out for p in pending} | {p.src for p in pending}
            if (pending and (i.group != pending[0].group or i.src in mine or i.out in mine)
                    or sum(p.entries for p in pending) + i.entries > SMALL):
                flush()
            pending.append(i)
            continue
        if pending and (not isinstance(i, _LOCAL) or _touches(i, {p.out for p in pending} | {p.src for p in pending})):
            flush()
        out.append(i)
    flush()
    return out


def fuse(programs: list) -> list:
    """Every rank's program with its small Allreduces rewritten (in place: programs are the
    plan's own)."""
    for p in programs:
        p.instrs = fuse_list(p.instrs)
        p.setup = fuse_list(p.setup)
    return programs
