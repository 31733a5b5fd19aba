"""Local steps whose results are kept from run to run: those that read only the plan's static
values and inputs passed again as the same objects, which no caller can write into (the
session's own conversions of numpy and scipy values). Such a step's result is the same as last
run's, so it is put back instead of computed (a BFS's levels start as its sources times 0, and
its depth as their maximum: three steps, 16-18 us a call).

A step qualifies (``steps``) when it is a top-level Local, not in place, not a partial of a
reduction over ranks, writing a slot nothing else writes and no output reads directly, from
slots that are static, inputs (which no step writes) or other such steps' results. A result is
kept when every input it reads was unchanged in the run that computed it, and reused while they
are the same objects, unchanged again (a benchmark's repeat counts them changed: it computes).
A kept result is held (``Runtime.exclusive``): no later step writes into it; an output that is
one is handed out as a copy.
"""
from __future__ import annotations

from ...instr import Local, walk
from ...ops import definition


def steps(program, static_slots: frozenset, partials: frozenset) -> dict:
    """id(step) -> the input slots its result depends on, for the steps that qualify."""
    writes: dict = {}
    for i in (*walk(program.setup), *walk(program.instrs)):
        for s in i.writes():
            writes[s] = writes.get(s, 0) + 1
    deps = {s: frozenset() for s in static_slots}
    deps.update({s: frozenset((s,)) for s in program.inputs.values() if s not in writes})
    outputs = {slot for slot, _ in program.outputs.values()}
    out = {}
    for i in program.instrs:
        if type(i) is not Local or i.in_place or i.out in partials or writes.get(i.out) != 1 or \
                i.out in outputs or definition(i.node.op).views or not all(a in deps for a in i.args):
            continue
        deps[i.out] = frozenset().union(*(deps[a] for a in i.args))
        out[id(i)] = tuple(sorted(deps[i.out]))
    return out


def still(rt, memo: dict, same: frozenset) -> dict:
    """The kept results that still hold: every input they depend on is the same object, and
    the session says unchanged and its own (``same``: their slots)."""
    s = rt.slots
    return {k: v for k, v in memo.items() if all(x in same and s[x] is o for x, o in v[1])}


def step(rt, i: Local, compute) -> None:
    """Step i (one that qualifies): its kept result put back, or computed (``compute``, the
    Local handler) and kept when every input it reads is unchanged this run."""
    got = rt.memo.get(id(i))
    if got is not None:
        rt.slots[i.out] = got[0]
        return
    compute(rt, i)
    slots = rt.keeping[id(i)]
    if all(x in rt.same for x in slots):
        M = rt.slots[i.out]
        rt.memo[id(i)] = (M, tuple((x, rt.slots[x]) for x in slots))
        rt.held = rt.held | {id(M)}   # (no later step writes into it)
