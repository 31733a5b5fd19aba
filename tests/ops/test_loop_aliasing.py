"""Loops whose bodies mix carried values, values from outside the loop, accumulates (written in
place when the loop owns the matrix) and a stack's top, generated at random: the one-process
run equals the reference executor, which copies every value (no in-place writes at all), and
so do two processes."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from gbsem import run, same
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import dspla as dp

# a body's next value of a carried matrix, from (h, g, x, x2, top): read by index
TERMS = ["h", "g", "x2", "top", "upd_h_x", "upd_g_x2", "upd_h_g", "sum_hg", "upd_top_x", "masked_h", "A_h",
         "upd_A_h"]


def _term(name, h, g, x, x2, top, A=None):
    return {
        "A_h": lambda: A @ h, "upd_A_h": lambda: dp.update(A @ h, x, accum="plus"),
        "h": lambda: h, "g": lambda: g, "x2": lambda: x2, "top": lambda: top,
        "upd_h_x": lambda: dp.update(h, x, accum="plus"),
        "upd_g_x2": lambda: dp.update(g, x2, accum="times"),
        "upd_h_g": lambda: dp.update(h, g, accum="max"),
        "sum_hg": lambda: h + g,
        "upd_top_x": lambda: dp.update(top, x, accum="plus"),
        "masked_h": lambda: dp.update(h, x2, mask=x, structure=True),
    }[name]()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TERMS), st.sampled_from(TERMS), st.sampled_from(TERMS), st.integers(1, 4),
       st.sampled_from([1, 2]))
@example("upd_h_x", "upd_h_x", "g", 2, 1)   # (h and g carried on as one matrix: written into once, both change)
@example("x2", "h", "h", 3, 2)
def test_random_loop_bodies_equal_the_reference(th, tg, tacc, iters, P):
    x, A = dp.dense("x", ("n", 1)), dp.sparse("A", ("n", "n"))
    x2 = x * 2.0
    s = dp.push(dp.stack(x), x * 3.0)

    def body(h, g, k, acc):
        top = dp.top(s)
        terms = (_term(th, h, g, x, x2, top, A), _term(tg, h, g, x, x2, top, A))
        return terms[0], terms[1], k + 1, acc + _term(tacc, h, g, x, x2, top, A)

    h, g, _, acc = dp.while_loop(lambda h, g, k, acc: k < iters, body,
                                 (x * 0.5, x * 0.25, dp.nvals(x) * 0, x * 0.0), 6)
    f = dp.function({"h": h, "g": g, "acc": acc, "x2": x2, "t": dp.top(s), "Ax": A @ x})
    xv = np.arange(1.0, 6.0).reshape(5, 1)
    Av = sp.csr_array(np.array([[0, 1, 0, 0, 2], [0, 0, 0, 0, 0], [1, 0, 0, 1, 0], [0, 0, 3, 0, 0], [1, 1, 0, 0, 0]],
                               dtype=float) / 4)
    want = run(f, {"x": xv, "A": Av}, 1)   # (checked against the reference executor inside)
    got = want if P == 1 else run(f, {"x": xv, "A": Av}, P)
    for k in want:
        assert same(got[k], want[k]), f"{k}: {th}, {tg}, {tacc}"
    np.testing.assert_array_equal(want["x2"][0].ravel(), 2 * xv.ravel())
    np.testing.assert_array_equal(want["t"][0].ravel(), 3 * xv.ravel())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TERMS), st.sampled_from(TERMS), st.integers(1, 4), st.sampled_from([1, 2]))
def test_random_loops_pushing_onto_a_carried_stack_equal_the_reference(th, tp, iters, P):
    """Each iteration pushes a value (possibly one written in place later) onto a carried stack;
    after the loop a second loop pops them all, summing: every pushed value is as it was pushed."""
    x, A = dp.dense("x", ("n", 1)), dp.sparse("A", ("n", "n"))
    x2 = x * 2.0
    s0 = dp.push(dp.stack(x), x * 3.0)

    def body(h, g, s, k):
        top = dp.top(s0)
        nxt = _term(th, h, g, x, x2, top, A)
        return nxt, g, dp.push(s, _term(tp, h, g, x, x2, top, A)), k + 1

    h, _, s, _ = dp.while_loop(lambda h, g, s, k: k < iters, body, (x * 0.5, x * 0.25, dp.stack(x), dp.nvals(x) * 0), 6)
    total, _ = dp.while_loop(lambda t, s: dp.height(s) > 1, lambda t, s: (t + dp.top(s), dp.pop(s)), (x * 0.0, s), 6)
    f = dp.function({"h": h, "total": total, "Ax": A @ x})
    xv = np.arange(1.0, 6.0).reshape(5, 1)
    Av = sp.csr_array(np.eye(5, k=1) + np.eye(5, k=-2) * 0.5)
    want = run(f, {"x": xv, "A": Av}, 1)   # (checked against the reference executor inside)
    got = want if P == 1 else run(f, {"x": xv, "A": Av}, P)
    for k in want:
        assert same(got[k], want[k]), f"{k}: {th}, {tp}"
