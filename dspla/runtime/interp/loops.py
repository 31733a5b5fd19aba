"""The loop handler (a carried state, the condition agreed by every rank, what each iteration
moved), and Empty, a typed matrix with no entries."""
from __future__ import annotations

import operator
import time

import graphblas as gb
import numpy as np
from suitesparse_graphblas import ffi, lib

from ...instr import Empty, Local, Loop
from ...ir import Op
from ...ir.types import DType
from ...kernels.gbops import dtype_of
from ...kernels.item import check, copy, reader, writer
from ...ops.apply import on_scalar
from ...ops.loop import truth
from ..process import collect_young
from .fused import recognize, run
from .interpreter import Runtime, handler

_COUNT = writer(DType.int64)   # (the typed call bound once: item.scalar looks its type up, ~5 us)


def _sent(rt: Runtime) -> int:
    return sum(t.words_sent for t in rt.counters.values())


@handler(Loop)
def _loop(rt: Runtime, i: Loop):
    s = rt.slots
    for j, (c, v) in enumerate(zip(i.carry, i.init)):
        s[c] = copy(s[v]) if j in i.owned else s[v]
    for f in rt.frontiers(i):   # (its products' push / pull rule starts again)
        s[f].start()
    t_loop = time.perf_counter()
    cond_traffic, body_traffic, static_words = rt.loop_traffic[id(i)]
    words = rt.loop_words.setdefault(i.loop, [])
    fused = rt.traversals.get(id(i), False)
    if fused is False:   # (recognized once per loop: runtime/interp/fused.py)
        fused = rt.traversals[id(i)] = recognize(rt, i)
    it, checks, still = run(rt, i, fused, words, static_words) if fused is not None else \
        _iterate(rt, i, words, static_words)
    rt.loop_s[i.loop] = rt.loop_s.get(i.loop, 0.0) + time.perf_counter() - t_loop
    rt.count_block(cond_traffic, checks)
    rt.count_block(body_traffic, it)
    rt.count_dynamic(i, checks)
    # (the typed C call: python-graphblas's indexing costs ~40 us; written into an earlier run's
    # count when no one holds it any more: a new Matrix and its collection cost more)
    s[i.count] = None
    into = rt.pool.take(id(i))
    if into is not None and rt.magnitudes is not None:
        rt.magnitudes.forget(into)   # (written into again)
    s[i.count] = M = _COUNT(it, into)
    rt.pool.keep(id(i), M)
    rt.iterations[i.loop] = rt.iterations.get(i.loop, 0) + it
    if still:
        rt.at_bound[i.loop] = (i.where, i.max_iter)


def _iterate(rt: Runtime, i: Loop, words: list, static_words: int) -> tuple[int, int, bool]:
    """(iterations, condition checks, whether the loop stopped at its bound with its condition
    still true). At the bound the condition is checked once more, so that a loop that converged
    in its last allowed iteration is not reported as cut short."""
    s = rt.slots
    if i.max_iter <= 0:
        return 0, 0, False
    tests = rt.count_tests
    test = tests[id(i)] if id(i) in tests else tests.setdefault(id(i), count_test(rt, i))
    it = checks = 0
    while True:
        before = _sent(rt)
        go = test(s) if test is not None else None
        if go is None:   # (no test of its own, or not for this value)
            rt.execute(i.cond)
            if rt.shadows.by_slot:   # (its int64 products are complete: did one wrap?)
                rt.shadows.flush_all(s)
            go = _agreed(rt, i, truth(s[i.cond_slot]))
        checks += 1
        if not go or it == i.max_iter:
            return it, checks, go
        rt.execute(i.body)
        if rt.shadows.by_slot:   # (the iteration's int64 products are complete, and the next writes their slots)
            rt.shadows.flush_all(s)
        # all at once: a result may be another carried value's slot (body(x, p) -> (x + 1, x))
        new = [s[r] for r in i.results]
        for c, v in zip(i.carry, new):
            s[c] = v
        it += 1
        words.append(static_words + _sent(rt) - before)   # what moved in this iteration
        collect_young()   # the iteration's temporaries (python-graphblas matrices sit in reference cycles)


_COMPARE = {"gt": operator.gt, "ge": operator.ge, "lt": operator.lt, "le": operator.le, "eq": operator.eq,
            "ne": operator.ne}


def count_test(rt: Runtime, i: Loop):
    """A condition as slots -> bool, without the interpreter (its steps cost tens of us at each
    check), one process only (on P ranks the value is reduced over them); None for any other
    condition, which runs through the interpreter:

    - ``nvals(x) cmp k`` (a frontier's or a candidate set's test): one C count and a Python
      comparison (exact: a count is far below 2^53);
    - ``x cmp k`` on a 1 x 1 value (a convergence test, ``delta > tol``): its entry read by the
      typed C call and compared as the step compares it (ops/apply.on_scalar), its truth as
      ``truth``'s (a missing entry is false)."""
    if rt.comm.size != 1 or not i.cond or i.cond[-1].out != i.cond_slot:
        return None
    test = i.cond[-1]
    if not (type(test) is Local and test.node.op is Op.APPLY_BIND and type(test.node.attr("scalar")) in (int, float)
            and test.node.attr("op").name in _COMPARE):
        return None
    if len(i.cond) == 1:
        return _scalar_test(test)
    count = i.cond[0]
    if not (len(i.cond) == 2 and type(count) is Local and count.node.op is Op.NVALS and test.args == (count.out,)
            and test.node.attr("side") == "right"):
        return None
    cmp, k, x = _COMPARE[test.node.attr("op").name], test.node.attr("scalar"), count.args[0]
    cell = ffi.new("GrB_Index*")

    def go(slots) -> bool:
        check(lib.GrB_Matrix_nvals(cell, slots[x].gb_obj[0]), "nvals")
        return bool(cmp(cell[0], k))
    return go


def _scalar_test(test: Local):
    """``x cmp k`` on the 1 x 1 value in slot x (count_test): its value by apply_bind's own
    (ops/apply.on_scalar), the dtypes resolved at the first check; None (the interpreter checks
    it) for another value or an operator the scalar table lacks."""
    node, (x,) = test.node, test.args
    resolved: dict = {}   # x's dtype -> (its reader, on_scalar's value and out type), or None

    def go(slots) -> bool | None:
        M = slots[x]
        if type(M) is not gb.Matrix or M._nrows != 1 or M._ncols != 1:
            return None
        dt = dtype_of(M)
        got = resolved.get(dt, False)
        if got is False:
            one = on_scalar(node, dt)
            got = resolved[dt] = None if one is None else (reader(dt), one[0], one[1].np.type)
        if got is None:
            return None
        read, value, out = got
        r = value(read(M))
        return r is not None and bool(out(r))   # (truth's: a missing entry is false)
    return go


def _agreed(rt: Runtime, i: Loop, go: bool) -> bool:
    if rt.comm.size > 1 and not i.agreed:   # rank 0's answer: every rank takes the same branch
        flag = np.array([go], dtype=np.uint8)
        t0 = time.perf_counter()
        rt.comm.bcast_buf(flag, 0)
        rt.timed("wait_s", t0)
        go = bool(flag[0])
    return go


@handler(Empty)
def _empty(rt: Runtime, i: Empty):
    rt.slots[i.out] = gb.Matrix(DType(i.dtype).gb, i.nrows, i.k)
