"""The reference executor: interprets a Program node by node with SuiteSparse:GraphBLAS.

Each op's evaluation rule is its definition's (dspla/ops), read through the EVAL table. Every
value is a graphblas Matrix; operands are cast to the dtype the op's algebra row asks for, so
mixed-dtype programs mean the same thing here and in the distributed runtime.
"""
from __future__ import annotations

from functools import lru_cache

from .ir import Node, Program
from .kernels import overflow as int_overflow
from .ops import Env, definition, table

EVAL = table("evaluate")
PREPARE = table("prepare")   # op -> its C call made once per signature (kernels/prepared.py), where it has one
# ops whose rule takes ``into=``: a free matrix (kernels/recycle.py: nothing else holds it) that it
# may write its result into instead of allocating one; a loop's element-wise steps then reuse
# last iteration's memory (a new 82k-row vector per step cost 2-3x the step's arithmetic)
INTO = {op for op in EVAL if definition(op).into}


def environment(inputs: dict, dims: dict, overflow: str = "error") -> Env:
    """What evaluation rules see: the inputs, the dims, this executor for sub-programs, and what
    integer overflow does."""
    return Env(inputs, dims, lambda program, values: run(schedule_of(program), environment(values, dims, overflow)),
               overflow)


def evaluate(node: Node, args: list, env: Env):
    """``node``'s rule on ``args``; an int64 result checked for overflow unless it may wrap."""
    out = EVAL[node.op](node, args, env)
    if env.overflow == "error" and int_overflow.risky(node):
        int_overflow.verify(node, args, out, lambda n, a: EVAL[n.op](n, a, env))
    return out


class Schedule:
    """The program in evaluation order with, for each step, which values die after it.
    Built once per compiled program; running it does no graph work."""

    def __init__(self, program: Program):
        self.order = program.toposort()
        index = {id(n): i for i, n in enumerate(self.order)}
        self.slot = index
        last = {}
        for i, n in enumerate(self.order):
            for a in n.args:
                last[id(a)] = i
        keep = {id(n) for _, n in program.outputs}
        self.free_after = [[] for _ in self.order]
        for nid, i in last.items():
            if nid not in keep:
                self.free_after[i].append(index[nid])
        self.arg_slots = [tuple(index[id(a)] for a in n.args) for n in self.order]
        self.outputs = [(name, index[id(n)]) for name, n in program.outputs]


@lru_cache(maxsize=256)
def schedule_of(program: Program) -> Schedule:
    """A sub-program's schedule, built once (programs compare and hash by structure)."""
    return Schedule(program)


def run(schedule: Schedule, env: Env, steps=None) -> dict:
    """The schedule's outputs. ``steps`` (kernels/prepared.Steps, kept with the schedule): each
    step whose op has a prepared C call for its operands' signature makes that call instead of
    the evaluation rule (a repeated eager operation: resolved once, then one C call)."""
    vals: list = [None] * len(schedule.order)
    for i, node in enumerate(schedule.order):
        args = [vals[j] for j in schedule.arg_slots[i]]
        out = steps.run(i, node, args, None) if steps is not None and args else None
        if out is None:
            out = evaluate(node, args, env)
        elif env.overflow == "error" and int_overflow.risky(node):
            int_overflow.verify(node, args, out, lambda n, a: EVAL[n.op](n, a, env))
        vals[i] = out
        for j in schedule.free_after[i]:
            vals[j] = None
    return {name: vals[i] for name, i in schedule.outputs}
