"""Plan rewrite: fewer points where every rank waits for the others.

1. Small Allreduces become SmallAllreduce instructions, and independent ones of the same group
   become one.
2. A loop whose condition every rank computes from the same bits (results of collectives that
   give every rank identical values, and local work on them) needs no broadcast of rank 0's
   answer at each check.
3. Local work that does not depend on a point-to-point wait (a product waiting for its rows,
   the wait for sends to finish) moves above it: it then runs while the messages are in flight
   (PageRank's dangling-mass reductions, while the rank waits for the rows of its product).
   It moves past waits and other local work only, never above a send, a receive's posting or a
   collective, so what every rank sends, and when, is unchanged.

An iterative program reduces a few scalars per step (PageRank: the rank mass, the dangling
mass, the change). Each Allreduce is two collectives (values, presence), and each collective
is a point where every rank waits for the slowest. An Allreduce is moved later, past local
computation that neither reads its result nor writes its input, until something needs its
result or talks to other ranks; Allreduces that meet there are sent together. Communication
instructions keep their order, so every rank's sequence of collectives stays the same.
"""
from __future__ import annotations

from dataclasses import replace

from .. import instr as ir

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
                             group=pending[0].group, labels=tuple(p.label for p in pending))


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


# instructions that wait for point-to-point messages to arrive or leave
_WAITS = (ir.StackMxM, ir.StackRows, ir.RecvMxM, ir.WaitSends)


def _writes(i) -> set:
    w = set(i.writes())
    if type(i) is ir.Free:
        w |= set(i.slots)
    elif type(i) is ir.WaitSends:   # (it lets go of the buffers)
        w |= set(i.bufs)
    return w


def _passes(other, reads: set, writes: set) -> bool:
    """Whether an instruction reading ``reads`` and writing ``writes`` may trade places with
    ``other``: local work or a point-to-point wait that writes none of those slots and reads
    none it writes."""
    if not isinstance(other, _WAITS + (ir.Local,)):
        return False
    ow = _writes(other)
    return not (reads & ow or writes & (ow | set(other.reads())))


def hoist_list(instrs: list) -> list:
    """Rewrite 3: each Local moves up past waits (and local work between them) it is independent
    of, to just above the highest wait it can pass; one that passes no wait stays where it is."""
    out: list = []
    for i in instrs:
        if type(i) is ir.Loop:
            out.append(replace(i, cond=hoist_list(i.cond), body=hoist_list(i.body)))
            continue
        best = len(out)
        if type(i) is ir.Local:
            reads, writes = set(i.reads()), set(i.writes())
            at = len(out)
            while at > 0 and _passes(out[at - 1], reads, writes):
                at -= 1
                if isinstance(out[at], _WAITS):
                    best = at
        out.insert(best, i)
    return out


def post_list(instrs: list, new_slot) -> list:
    """Rewrite 4: a SmallAllreduce of scalars is posted (ISmallAllreduce) as soon as its sources
    are computed and completed (WaitAllreduce) only where a result is needed: both move past
    local work and point-to-point waits only (never past another collective, a send or a
    posting), so every rank still initiates its collectives in the same order. ``new_slot()``
    gives a slot for the posted request."""
    out: list = []
    for i in instrs:
        if type(i) is ir.Loop:
            out.append(replace(i, cond=post_list(i.cond, new_slot), body=post_list(i.body, new_slot)))
        elif type(i) is ir.SmallAllreduce and all(e == 1 for e in i.entries):
            srcs = set(i.srcs)
            at = len(out)
            while at > 0 and _passes(out[at - 1], srcs, set()):   # (the request's slot is new)
                at -= 1
            req = new_slot()
            out.insert(at, ir.ISmallAllreduce(i.outs, i.srcs, i.monoids, i.entries, group=i.group,
                                              labels=i.labels, req=req))
            out.append(ir.WaitAllreduce(i.outs, req))
        else:
            out.append(i)
    return _sink_waits(out)


def _sink_waits(instrs: list) -> list:
    """Each WaitAllreduce moved down past local work and point-to-point waits it can trade places
    with (none reads or writes its results)."""
    out = list(instrs)
    for k in range(len(out) - 1, -1, -1):
        w = out[k]
        if type(w) is ir.WaitAllreduce:
            reads, writes = {w.req}, set(w.outs)
            j = k
            while j + 1 < len(out) and _passes(out[j + 1], reads, writes):
                j += 1
            out.insert(j, out.pop(k))
    return out


# collectives after which every member holds bitwise the same value (a posted one: at its wait)
_SAME_EVERYWHERE = (ir.SmallAllreduce, ir.WaitAllreduce, ir.AllgatherRows, ir.Bcast, ir.BcastSparse)


def _walk(instrs: list, same: set, found: dict) -> set:
    """The slots holding the same bits on every rank after ``instrs``, given those before;
    ``found`` gets, per loop, whether its condition is such a slot."""
    for i in instrs:
        t = type(i)
        if t is ir.Loop:
            same = _loop(i, same, found)
        elif t in _SAME_EVERYWHERE:
            same = same | set(i.writes())
        elif t is ir.Local and all(a in same for a in i.args):   # local work is deterministic
            same = same | {i.out}
        else:
            same = same - set(i.writes())
    return same


def _loop(i: ir.Loop, same: set, found: dict) -> set:
    # carried values start as their inits; one that the body makes differ drops out, until stable
    carried = {c for c, v in zip(i.carry, i.init) if v in same}
    while True:
        inner = {}
        before = (same - set(i.carry)) | carried
        after_cond = _walk(i.cond, before, inner)
        after_body = _walk(i.body, after_cond, inner)
        kept = {c for c, r in zip(i.carry, i.results) if c in carried and r in after_body}
        if kept == carried:
            break
        carried = kept
    found.update(inner)
    found[i.loop] = i.cond_slot in after_cond
    # after the loop: a carried value is its last result; count is the same everywhere
    return (after_body - set(i.carry)) | carried | {i.count}


def _mark(instrs: list, agreed: dict) -> list:
    out = []
    for i in instrs:
        if type(i) is ir.Loop:
            i = replace(i, agreed=agreed[i.loop], cond=_mark(i.cond, agreed), body=_mark(i.body, agreed))
        out.append(i)
    return out


def fuse(programs: list, comm=None) -> list:
    """Every rank's program rewritten, as new programs (those given are left as they were). A
    loop goes without its broadcast only when every rank's program shows its condition agreed.
    With ``comm`` (SPMD planning: ``programs`` is this rank's own), the ranks compare their
    verdicts by one small allgather, and no planning-time value is taken as the same everywhere."""
    programs = [replace(p) for p in programs]   # (instrs and setup are rebuilt below; consts are shared)
    verdicts = []
    first = programs[0].consts
    # planning-time values every rank was given as one object (replicated ones)
    shared = set() if comm is not None else \
        {s for s, v in first.items() if all(p.consts.get(s) is v for p in programs)}
    for p in programs:
        def new_slot(p=p) -> int:
            p.n_slots += 1
            return p.n_slots - 1
        p.instrs = post_list(hoist_list(fuse_list(p.instrs)), new_slot)
        p.setup = post_list(hoist_list(fuse_list(p.setup)), new_slot)
        found: dict = {}
        _walk(p.instrs, _walk(p.setup, set(shared), found), found)
        verdicts.append(found)
    if comm is not None and comm.size > 1:
        verdicts = comm.allgather(verdicts[0])
    agreed = {k: all(v.get(k, False) for v in verdicts) for k in set().union(*verdicts)}
    for p in programs:
        p.instrs, p.setup = _mark(p.instrs, agreed), _mark(p.setup, agreed)
    return programs
