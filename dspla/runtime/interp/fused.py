"""A traversal loop's steps fused into one loop of C calls, recognized once per loop at its first
run, in one process.

The loop (examples/bfs.py's, for any semiring a frontier's product takes, kernels/spmspv.py)::

    while nvals(frontier) > 0:
        depth = depth + k
        frontier = a ⊕.⊗ frontier  under ¬seen's structure     (pushed or pulled)
        seen<frontier's structure> = depth                     (written in place)

goes through the interpreter as five instructions a level, about 300 Python calls and 100 us of
dispatch, pools, 1 x 1 matrices and checks: on email-Enron, as much as its nine products. Here a
level is its product (compute.frontier, the same kernel and push / pull rule), the count of the
new frontier, the depth as a Python number and a write of it (LAGraph's BFS's steps; a pulled
level is stamped and the values written when the loop ends, kernels/levels.py). The slots end
as the interpreter would leave them, the stats count the same iterations, routes and (no) words.
Anything else, or a part of it on P > 1 ranks (the frontier's count is then the loop test's sum
over ranks), runs through the interpreter.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import graphblas as gb
import numpy as np
from suitesparse_graphblas import ffi, lib

from ...instr import Local, Loop, MxM, walk
from ...ir import Op
from ...ir.types import DType
from ...kernels import item as _item
from ...kernels import spmspv, traverse
from ...kernels.levels import LevelWriter
from ...kernels.overflow import LIMIT, describe, raise_wrapped
from ...kernels.traverse import address
from ..process import collect_young
from .compute import frontier, typed_frontier
from .interpreter import _dt

_KINDS = {DType.int64: "INT64", DType.float64: "FP64"}


@dataclass(frozen=True)
class Traversal:
    """The slots and steps of a recognized loop (positions in ``Loop.carry``: f, seen, depth)."""
    count: Local     # nvals(frontier)
    test: Local      # count > 0
    product: MxM
    step: Local      # depth + k
    update: Local    # seen<F> = depth, in place
    f: int
    seen: int
    depth: int
    dtype: DType
    read: frozenset  # the slots read after the loop (its scalars are made only for those)
    write: LevelWriter   # seen<q's structure> = depth
    k: int | float       # the depth's step
    depth_of: Callable   # a 1 x 1 of dtype -> its value (the typed C call, bound once)
    runner: dict         # the compiled loop's static arguments, made at its first run (kernels/traverse.py)


def _local(i, op) -> bool:
    return type(i) is Local and i.node.op is op


def recognize(rt, loop: Loop) -> Traversal | None:
    """The traversal in ``loop``, or None when it is not one (module docstring)."""
    if rt.comm.size != 1 or rt.fault is not None or len(loop.cond) != 2 or len(loop.body) != 3:
        return None
    count, test = loop.cond
    if not (_local(count, Op.NVALS) and _local(test, Op.APPLY_BIND) and test.args == (count.out,)
            and test.out == loop.cond_slot and test.node.attr("op").name == "gt" and test.node.attr("scalar") == 0
            and test.node.attr("side") == "right"):
        return None
    prod = next((i for i in loop.body if type(i) is MxM), None)
    step = next((i for i in loop.body if _local(i, Op.APPLY_BIND)), None)
    update = next((i for i in loop.body if _local(i, Op.UPDATE)), None)
    if prod is None or step is None or update is None or prod.push is None or prod.count is not None or \
            prod.accumulate or prod.mask_kind != "structure" or not prod.complement:
        return None
    carry = {s: k for k, s in enumerate(loop.carry)}
    f, seen, depth = carry.get(prod.b), carry.get(prod.mask), carry.get(step.args[0])
    node, dt = update.node, step.node.type.dtype
    if None in (f, seen, depth) or count.args != (prod.b,) or loop.results[f] != prod.out or \
            loop.results[seen] != update.out or loop.results[depth] != step.out or \
            update.args != (prod.mask, step.out, prod.out) or not update.in_place or \
            node.attr("mask") != "structure" or node.attr("complement") or node.attr("accum") is not None or \
            node.attr("replace") or step.node.attr("op").name != "plus" or step.node.attr("side") != "right" or \
            dt not in _KINDS or node.type.dtype is not dt or tuple(node.type.shape)[1:] != (1,) or \
            tuple(step.node.type.shape) != (1, 1) or type(step.node.attr("scalar")) not in (int, float):
        return None
    # (the body's order is free: the product and the depth before the update that reads both)
    return Traversal(count, test, prod, step, update, f, seen, depth, dt, _read_after(rt.program, loop),
                     LevelWriter(_KINDS[dt]), step.node.attr("scalar"), _item.reader(dt), {})


def _read_after(program, loop: Loop) -> frozenset:
    """The slots any step outside ``loop`` reads, and the outputs (a loop reads its results and
    condition too)."""
    inner = {id(j) for j in (loop, *walk(loop.cond), *walk(loop.body))}
    read = {slot for slot, _ in program.outputs.values()}
    for j in (*walk(program.setup), *walk(program.instrs)):
        if id(j) not in inner:
            read.update(j.reads())
            if type(j) is Loop:
                read.update((*j.results, j.cond_slot))
    return frozenset(read)


def run(rt, loop: Loop, t: Traversal, words: list, static_words: int) -> tuple[int, int, bool]:
    """The loop run (``_iterate``'s contract: iterations, condition checks, stopped at its bound):
    compiled (kernels/traverse.py) where it can be, else level by level here."""
    t0 = time.perf_counter()
    s = rt.slots
    q, seen, d = s[loop.carry[t.f]], s[loop.carry[t.seen]], s[loop.carry[t.depth]]
    k, depth = t.k, t.depth_of(d)
    write = t.write   # seen<q's structure> = depth
    checked = rt.checked and t.dtype is DType.int64
    whole = checked and type(k) is int and type(depth) is int   # (a checked int64 sum: exact as it is)
    _item.check(lib.GxB_Matrix_Option_set_INT32(seen.gb_obj[0], lib.GxB_SPARSITY_CONTROL, lib.GxB_BITMAP), "set")
    s[t.product.mask] = seen
    if rt.magnitudes is not None:   # (written into below)
        rt.magnitudes.forget(seen)
    write.start(seen)
    try:
        done = _compiled(rt, loop, t, s[t.product.a], q, seen, depth, k, whole) if write.fast else None
        if done is None:
            done = _levels(rt, loop, t, q, seen, depth, k, checked, whole, words, static_words)
        else:
            words.extend([static_words] * done[3])
    finally:
        write.finish(seen)   # (the stamped levels' values: kernels/levels.py)
    q, depth, nq, it, cyclic = done
    if loop.carry[t.f] not in t.read and not (it and t.product.out in t.read):
        q = None   # (the last, empty level: nothing reads it after the loop)
    elif type(q) is spmspv.Handle:
        q = q.matrix()
    if cyclic:
        collect_young()   # (as _iterate: the levels made by compute.frontier)
    _finish(rt, loop, t, q, seen, depth, nq, it)
    rt.timed("compute_s", t0)
    return it, it + 1, nq > 0   # (a count is checked before each level and once more)


def _levels(rt, loop: Loop, t: Traversal, q, seen, depth, k, checked: bool, whole: bool, words: list,
            static_words: int):
    """The levels one by one -> (the last level, depth, its count, levels, whether a level was made
    by compute.frontier: a Matrix in a reference cycle)."""
    level, write, wrap = _level(rt, t.product, rt.slots[t.product.a]), t.write, t.dtype.np.type
    cell, it, cyclic = ffi.new("GrB_Index*"), 0, False
    while True:
        _item.check(lib.GrB_Matrix_nvals(cell, q.gb_obj[0]), "nvals")
        nq = cell[0]
        if nq == 0 or it == loop.max_iter:
            return q, depth, nq, it, cyclic
        q = level(q, nq)
        cyclic = cyclic or type(q) is not spmspv.Handle
        if depth is not None:
            depth = depth + k
            if checked and not -LIMIT <= depth < LIMIT:
                raise_wrapped(describe(t.step.node, rt.output_names.get(t.step.out)), None)
            if not whole:
                depth = wrap(depth).item()   # (as the typed step makes it: wrapped, or a float)
            write(seen, q, depth)
        it += 1
        words.append(static_words)


def _compiled(rt, loop: Loop, t: Traversal, a, q, seen, depth, k, whole: bool):
    """The loop run as one compiled loop of the same C calls (kernels/traverse.py) -> (the last
    level, depth, its count, levels, False), or None where it does not apply: the depth missing or
    an int64 one not checked (the Python loop's wrapping), or an operand needing a cast."""
    if depth is None or (t.dtype is DType.int64 and not whole) or type(q) is not gb.Matrix:
        return None
    fr, runner = rt.slots[t.product.push], t.runner.get("run")
    if runner is None or runner.a is not a or runner.fr is not fr or runner.sig != (a.dtype, q.dtype):
        t.runner.clear()
        typed = typed_frontier(fr, t.product, a, q)
        if typed[5] is not typed[6] or _dt(a) is not typed[3] or _dt(q) is not typed[4]:
            return None
        runner = t.runner["run"] = _Runner(fr, a, typed, t.write, t.product.mask_kind == "structure")
    code, where, it, depth, q, nq, pulls = runner.run(q, seen, depth, k, whole, loop.max_iter)
    if pulls:
        rt.routes["spmspv-pull"] += pulls
    if it > pulls:
        rt.routes["spmspv-push"] += it - pulls
    if code == traverse.OVERFLOW:
        raise_wrapped(describe(t.step.node, rt.output_names.get(t.step.out)), None)
    if code:
        _item.check(code, traverse.NAMES[where])
    return q, depth, nq, it, False


class _Runner:
    """The compiled loop's arguments that stay (the operands', semiring's and descriptors'
    addresses, the writer's arrays), made at a product's first run; ``run`` per call."""

    def __init__(self, fr: spmspv.Frontier, a, typed: tuple, write: LevelWriter, structure: bool):
        # (fr and a held: their addresses are used)
        self.fr, self.a, self.sig, self.gdt, self.write, semiring = fr, a, typed[0], typed[2], write, typed[1]
        deg, e = spmspv.degrees(fr)
        self.objs = np.array([address(M.gb_obj[0]) for M in (a, fr.p, deg, e)] +
                             [address(semiring.gb_obj), address(spmspv.PLUS_FIRST.gb_obj), write.second], np.uint64)
        self.desc = np.array([address(spmspv.DESC[pull, structure, replace]) for pull in (False, True)
                              for replace in (False, True)] + [address(lib.GrB_DESC_T0)], np.uint64)
        self.calls, self.loop = write.calls, write.kernels.loop   # (made at write.start: the levels are stamped)

    def run(self, q, seen, depth, k, checked: bool, max_iter: int):
        """-> (code, its call, levels, depth, the last level (a Handle; q when none), its count,
        the pulled levels); the rule's state and the writer's as the loop leaves them."""
        fr, w, cast = self.fr, self.write, self.write.value
        C = spmspv.Handle(self.gdt, q._nrows, q._ncols)
        code, where, it, depth, fr.last, fr.pushing, fr.any_pull, fr.unexplored, w.levels, pulls, nq = self.loop(
            self.calls, self.objs, self.desc, w.cells, w.stamp, w.values, w.typed, q._nrows, max_iter,
            address(q.gb_obj[0]), address(C.gb_obj[0]), address(seen.gb_obj[0]), cast(depth), cast(k), checked,
            fr.last, fr.pushing, fr.any_pull, fr.unexplored, w.levels)
        return code, where, it, depth, (C if it else q), nq, pulls


def _level(rt, prod: MxM, a):
    """q -> the next level (q holds nq entries): compute.frontier's product and push / pull rule.
    Once the first level resolved its dtypes and semiring (fr.typed), and when no operand needs a
    cast, a level is the rule and the C calls alone, into a Handle: python-graphblas's Matrix,
    the checks and the collection of its reference cycle cost more than the product at a level of
    a few nodes (a BFS of the 11 levels of a path graph: 330 -> 290 us)."""
    fr, m, structure = rt.slots[prod.push], rt.slots[prod.mask], prod.mask_kind == "structure"
    routes, direct = rt.routes, [None]   # (the fr.typed found to need no cast)

    def level(q, nq: int):
        typed = fr.typed
        if typed is None or typed[0] != (a.dtype, q.dtype):
            return frontier(rt, prod, a, q)   # (resolves fr.typed; casts where needed)
        if typed is not direct[0]:
            if typed[5] is not typed[6] or _dt(a) is not typed[3] or _dt(q) is not typed[4]:
                return frontier(rt, prod, a, q)
            direct[0] = typed
        pull = spmspv.pulls_by_edges(fr, q, nq)
        routes["spmspv-pull" if pull else "spmspv-push"] += 1
        # a level made here (a Handle) is written into by the next, as LAGraph writes its frontier
        return spmspv.product(fr, a, q, typed[1], typed[2], m, structure, pull, spmspv.Handle,
                              q if type(q) is spmspv.Handle else None)
    return level


def _finish(rt, loop: Loop, t: Traversal, q, seen, depth, nq: int, it: int):
    """The slots as the interpreter leaves them: the carried values, the body's last results,
    the test's last values; the last level (None, when nothing reads it) and a 1 x 1 one only
    where a step after the loop reads it (making a Matrix is a few us), the others left empty."""
    s, read = rt.slots, t.read
    carried, step = loop.carry[t.depth], t.step.out
    D = _item.scalar(depth, t.dtype) if carried in read or (it and step in read) else None
    s[loop.carry[t.f]], s[loop.carry[t.seen]], s[carried] = q, seen, D
    if it:
        s[t.product.out], s[t.update.out], s[step] = q, seen, D
    s[t.count.out] = _item.scalar(nq, DType.int64) if t.count.out in read else None
    s[t.test.out] = _item.scalar(bool(nq > 0), DType.bool) if t.test.out in read else None


__all__ = ["Traversal", "recognize", "run"]
