"""Stacks (stack, push, top, pop, height): a loop keeps each iteration's value for a later loop.
Against independent oracles (scipy's breadth-first distances, dense numpy), both front ends, the
reference executor and P = 1..4; values pushed are snapshots even when the loop writes its
carried value in place; a stack goes only where stacks are taken, with errors that say so."""
import numpy as np
import pytest
import scipy.sparse as sp
from gbsem import run
from scipy.sparse.csgraph import shortest_path

import dspla as dp
from dspla.errors import DomainMismatch, DsplaError
from dspla.frontend.parser import parse
from dspla.function import Function

LEVELS_FILE = """
input A : sparse[n, n]
input s : sparse[n, 1]
frontier = s
seen = s
levels = stack(s)
snaps = stack(s)
while nvals(frontier) > 0 max n {
  levels = push(levels, frontier)
  snaps = push(snaps, seen)
  frontier = mxm(A.T, frontier, plus_first, mask=seen, complement=true, structure=true)
  seen += frontier
}
depth = cast(mask(s, s, complement=true), int64)
total = nvals(s) * 0
while height(levels) > 1 max n {       # (s itself at the bottom of both)
  depth = update(depth, height(levels) - 2, mask=top(levels), structure=true)
  total = total + nvals(top(snaps))
  levels = pop(levels)
  snaps = pop(snaps)
}
output depth
output total
"""


def _levels_python() -> dp.Function:
    A, s = dp.sparse("A", ("n", "n")), dp.sparse("s", ("n", 1))

    def forward(frontier, seen, levels, snaps):
        levels, snaps = dp.push(levels, frontier), dp.push(snaps, seen)
        frontier = dp.mxm(A.T, frontier, "plus_first", mask=seen, complement=True, structure=True)
        return frontier, dp.update(seen, frontier, accum="plus"), levels, snaps   # seen: written in place

    _, _, levels, snaps = dp.while_loop(lambda f, *_: dp.nvals(f) > 0, forward, (s, s, dp.stack(s), dp.stack(s)), "n")

    def backward(depth, total, levels, snaps):
        depth = dp.update(depth, dp.height(levels) - 2, mask=dp.top(levels), structure=True)
        return depth, total + dp.nvals(dp.top(snaps)), dp.pop(levels), dp.pop(snaps)

    depth, total, _, _ = dp.while_loop(lambda d, t, lv, sn: dp.height(lv) > 1, backward,
                                       (dp.cast(dp.mask(s, s, complement=True), "int64"), dp.nvals(s) * 0,
                                        levels, snaps), "n")
    return dp.function({"depth": depth, "total": total}, inputs=[A, s])


def _graph(seed, n=40):
    """Two components, a self-loop, a node that reaches nothing and one nothing reaches."""
    rng = np.random.default_rng(seed)
    A = sp.lil_array(sp.random_array((n, n), density=2.5 / n, random_state=rng))
    A[:, n - 1] = 0
    A[n - 1, :] = 0
    A[n - 2, 0] = 1.0
    A[3, 3] = 1.0
    A = sp.csr_array(A)
    A.data[:] = 1.0
    return A


def _oracle(A, src):
    """(depth: values, present) and the sum over k of the nodes within k steps, k = 0..deepest."""
    d = shortest_path(A, unweighted=True, indices=[src])[0]
    reach = np.isfinite(d)
    deepest = int(d[reach].max())
    total = sum(int((d <= k).sum()) for k in range(deepest + 1))
    return (np.where(reach, d, 0).astype(np.int64).reshape(-1, 1), reach.reshape(-1, 1)), total


@pytest.mark.parametrize("P", [1, 2, 3, 4])
@pytest.mark.parametrize("front", ["python", "file"])
def test_levels_walked_back_match_breadth_first_distances(front, P):
    f = _levels_python() if front == "python" else Function(parse(LEVELS_FILE))
    A = _graph(P)
    n = A.shape[0]
    for src in (0, 7, n - 1):
        want_depth, want_total = _oracle(A, src)
        got = run(f, {"A": A, "s": sp.csr_array(([1.0], ([src], [0])), shape=(n, 1))}, P)
        vals, pres, _ = got["depth"]
        np.testing.assert_array_equal(pres, want_depth[1], err_msg=f"{front} P={P} src={src}")
        np.testing.assert_array_equal(vals[pres], want_depth[0][pres])
        assert int(got["total"][0].ravel()[0]) == want_total


def test_pushed_values_are_snapshots_of_a_value_written_in_place():
    """x is carried and accumulated in place every iteration; each pushed x keeps its value."""
    x = dp.dense("x", ("n", 1))

    def body(y, s, k):
        y = dp.update(y, x, accum="plus")
        return y, dp.push(s, y), k + 1

    _, s, _ = dp.while_loop(lambda y, s, k: k < 4, body, (x, dp.stack(x * 0.0), dp.nvals(x) * 0), 10)

    def back(acc, s):   # acc = 10 acc + top: the pushed values, deepest first
        return acc * 10.0 + dp.top(s), dp.pop(s)

    acc, _ = dp.while_loop(lambda a, s: dp.height(s) > 0, back, (x * 0.0, s), 10)
    xv = np.arange(1.0, 6.0).reshape(5, 1)
    got = run(dp.function({"acc": acc}), {"x": xv}, 1)["acc"][0]
    want = np.zeros_like(xv)
    for v in [0 * xv, 2 * xv, 3 * xv, 4 * xv, 5 * xv][::-1]:
        want = want * 10 + v
    np.testing.assert_array_equal(got, want)


def test_a_top_carried_through_a_loop_is_not_written_in_place():
    x = dp.dense("x", ("n", 1))
    s = dp.push(dp.stack(x), x * 2.0)

    def body(h, k):   # h is the stack's top at the start: the update must not write into it
        return dp.top(s), k + 1

    def cond(h, k):
        return k < 3

    h, _ = dp.while_loop(cond, lambda h, k: (dp.update(h, x, accum="plus"), k + 1), (dp.top(s), dp.nvals(x) * 0), 5)
    h2, _ = dp.while_loop(cond, body, (h, dp.nvals(x) * 0), 5)
    xv = np.ones((3, 1))
    got = run(dp.function({"h": h, "h2": h2, "t": dp.top(s)}), {"x": xv}, 1)
    np.testing.assert_array_equal(got["h"][0], 5 * xv)
    np.testing.assert_array_equal(got["h2"][0], 2 * xv)
    np.testing.assert_array_equal(got["t"][0], 2 * xv)


def test_a_stack_goes_only_where_stacks_are_taken():
    A, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    s = dp.stack(x)
    with pytest.raises(DomainMismatch, match="top()"):
        dp.mxm(A, s)
    with pytest.raises(DomainMismatch, match="not a stack"):
        dp.top(x)
    with pytest.raises(DomainMismatch, match="holds dense"):
        dp.push(s, A)
    with pytest.raises(DomainMismatch, match="outputs are matrices"):
        dp.function({"s": s})
    with pytest.raises(DomainMismatch) as e:
        parse("input x : dense[n, 1]\ns = stack(x)\ny = s + 1\noutput y\n", "f.dspla")
    assert "f.dspla:3:5" in str(e.value)


def test_top_of_an_empty_stack_is_an_error():
    x = dp.dense("x", ("n", 1))
    f = dp.function({"y": dp.top(dp.pop(dp.stack(x)))})
    with pytest.raises(DsplaError, match="the stack is empty"):
        f(x=np.ones((3, 1)))


@pytest.mark.parametrize("P", [1, 2])
def test_a_pushed_product_is_kept_or_copied_as_the_loop_needs(P):
    """Products pushed as they are (P = 1: nothing writes into them later) and products the
    next iteration writes into in place (the update of y: so each is pushed as a copy)."""
    A, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))

    def body(y, kept, copied, k):
        u = dp.update(y, x, accum="plus")            # into y's matrix: the last iteration's product
        y = dp.mxm(A, u, "plus_times")
        return y, dp.push(kept, dp.mxm(A, y, "plus_times")), dp.push(copied, y), k + 1

    init = (dp.mxm(A, x, "plus_times"), dp.stack(x), dp.stack(x), dp.nvals(x) * 0)
    _, kept, copied, _ = dp.while_loop(lambda y, a, b, k: k < 3, body, init, 10)

    def back(acc, s):
        return acc * 10.0 + dp.top(s), dp.pop(s)

    outs = {k: dp.while_loop(lambda a, s: dp.height(s) > 1, back, (x * 0.0, s), 10)[0]
            for k, s in (("kept", kept), ("copied", copied))}
    Am = sp.csr_array(np.array([[1.0, 1, 0], [0, 1, 1], [1, 0, 0]]))
    xv = np.array([[1.0], [2.0], [3.0]])
    got = run(dp.function(outs), {"A": Am, "x": xv}, P)
    y, kept_v, copied_v = Am @ xv, [], []
    for _ in range(3):
        y = Am @ (y + xv)
        copied_v.append(y)
        kept_v.append(Am @ y)
    for k, vals in (("kept", kept_v), ("copied", copied_v)):
        want = np.zeros_like(xv)
        for v in vals[::-1]:
            want = want * 10 + v
        np.testing.assert_allclose(got[k][0], want, rtol=1e-12, err_msg=k)
    if P == 1:   # the products kept (no copy) and y's copied: one push of each kind
        plan = dp.function(outs).explain(1, dims={"n": 3}, dump_after="fuse")
        assert plan.count("node=push[shared]") == 1 and plan.count("node=push,") == 1, plan


def test_on_values_at_hand_a_stack_says_where_it_lives():
    with pytest.raises(DsplaError, match="Python list"):
        dp.stack(np.ones((3, 1)))


@pytest.mark.parametrize("P", [1, 2])
def test_a_carried_top_is_never_updated_in_place(P):
    """The body writes into its carried h (an accumulate) and carries the stack's top on: were h
    updated in place, from the second iteration on the update would write into the stack's own
    matrix, and top(s) read afterwards (or the next iteration's h) would change."""
    x = dp.dense("x", ("n", 1))
    s = dp.push(dp.stack(x), x * 2.0)

    def body(h, k, acc):
        return dp.top(s), k + 1, acc + dp.update(h, x, accum="plus")

    h, _, acc = dp.while_loop(lambda h, k, acc: k < 3, body, (x * 0.0, dp.nvals(x) * 0, x * 0.0), 5)
    xv = np.arange(1.0, 4.0).reshape(3, 1)
    got = run(dp.function({"h": h, "acc": acc, "t": dp.top(s)}), {"x": xv}, P)
    np.testing.assert_array_equal(got["t"][0], 2 * xv)
    np.testing.assert_array_equal(got["h"][0], 2 * xv)
    np.testing.assert_array_equal(got["acc"][0], xv + 3 * xv + 3 * xv)   # h: 0, then 2x twice; each + x


@pytest.mark.parametrize("P", [1, 2])
def test_a_carried_value_replaced_by_an_outside_or_carried_one_is_not_updated_in_place(P):
    """h's next value is x2, computed outside the loop (and g's is h: another carried value):
    writing into h in place would change x2 (or the carried value it came from) for every later
    reader. By hand: h = 0, x2, x2; g = 0, 0+x, x2+x; acc sums h + x each iteration."""
    x = dp.dense("x", ("n", 1))
    x2 = x * 2.0

    def body(h, g, k, acc):
        u = dp.update(h, x, accum="plus")
        return x2, u, k + 1, acc + u

    h, g, _, acc = dp.while_loop(lambda h, g, k, acc: k < 3, body,
                                 (x * 0.0, x * 0.0, dp.nvals(x) * 0, x * 0.0), 5)
    xv = np.arange(1.0, 4.0).reshape(3, 1)
    got = run(dp.function({"h": h, "g": g, "acc": acc, "t": x2}), {"x": xv}, P)
    np.testing.assert_array_equal(got["t"][0], 2 * xv)
    np.testing.assert_array_equal(got["h"][0], 2 * xv)
    np.testing.assert_array_equal(got["g"][0], 3 * xv)
    np.testing.assert_array_equal(got["acc"][0], xv + 3 * xv + 3 * xv)
