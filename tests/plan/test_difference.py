"""``X - Y`` (X + (-Y) over the union) lowered as one ewise_add[minus] when X is proven full,
and left as negate-then-add when it is not (a lone Y entry must become -Y): both against
dense numpy with GraphBLAS semantics, on one process and on simulated ranks."""
import numpy as np
import pytest

import dspla as dp
from dspla import instr as ir
from dspla.plan.options import Options

from harness import run_dist


def _data(seed, n=30, k=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, k))
    Y = rng.normal(size=(n, k))
    return X, Y


def _nodes(f, inputs):
    c = f.plan(1, inputs, Options())
    prog = c.plan.programs[0]

    def walk(instrs):
        for i in instrs:
            yield i
            for sub in (getattr(i, "cond", None), getattr(i, "body", None)):
                yield from walk(sub or [])
    return [i.node for i in walk(prog.setup + prog.instrs) if isinstance(i, ir.Local)]


def _ops(nodes):
    return [f"{n.op.value}[{n.attr('op').name}]" for n in nodes if n.op.value in ("ewise_add", "apply")]


@pytest.mark.parametrize("seed", [0, 1])
def test_full_minus_sparse_is_one_subtraction(seed):
    X, Y = _data(seed)
    yp = Y > 0
    # Y's missing entries come from a select, so Y is computed at run time (a sparse input would
    # be a planning-time value)
    Xs, Ys = dp.dense("X", ("n", "k")), dp.dense("Y", ("n", "k"))
    f = dp.function({"D": Xs - dp.select(Ys, ">", 0)})
    inputs = {"X": X, "Y": Y}
    assert _ops(_nodes(f, inputs)) == ["ewise_add[minus]"]
    want = np.where(yp, X - Y, X)     # every position has X; Y subtracts where present
    got = f(**inputs)["D"]
    assert got.present().all()
    np.testing.assert_array_equal(got.to_numpy(), want)
    for P in (2, 3):
        out, _ = run_dist(f, inputs, P, partition="random", seed=P)
        np.testing.assert_array_equal(out["D"].to_numpy(), want)


@pytest.mark.parametrize("seed", [0, 1])
def test_sparse_minus_anything_keeps_the_negation(seed):
    X, Y = _data(seed)
    xp, yp = X > 0, Y < 0.5
    Xs, Ys = dp.dense("X", ("n", "k")), dp.dense("Y", ("n", "k"))
    f = dp.function({"D": dp.select(Xs, ">", 0) - dp.select(Ys, "<", 0.5)})
    inputs = {"X": X, "Y": Y}
    assert _ops(_nodes(f, inputs)) == ["apply[neg]", "ewise_add[plus]"]
    got = f(**inputs)["D"]
    want_p = xp | yp
    want = np.where(xp & yp, X - Y, np.where(xp, X, -Y))   # a lone Y entry is -Y, not Y
    assert np.array_equal(got.present(), want_p)
    np.testing.assert_array_equal(got.to_numpy(fill=0)[want_p], want[want_p])


def test_a_negation_used_twice_is_kept():
    X, Y = _data(3)
    Xs, Ys = dp.dense("X", ("n", "k")), dp.dense("Y", ("n", "k"))
    neg = -Ys
    f = dp.function({"D": Xs + neg, "N": neg})
    assert "apply[neg]" in _ops(_nodes(f, {"X": X, "Y": Y}))
    out = f(X=X, Y=Y)
    np.testing.assert_array_equal(out["D"].to_numpy(), X - Y)
    np.testing.assert_array_equal(out["N"].to_numpy(), -Y)
