"""A loop's ``x = ewise_add(x, y, op)`` runs as ``x op= y`` written into x's own matrix
(passes/accumulate.py): the values equal dense numpy's union (a missing entry is not a zero) at
P = 1, 2, 3, for sparse and full x, several dtypes and ops, y on either side; and the steps that
must not be rewritten (a cast, a non-commutative op with x on the right, x ∪ y read twice) still
give the union's values."""
from __future__ import annotations

import numpy as np
import pytest
from gbsem import accumulate, rand, rng_for, run, same, to_sparse

import dspla as dp

OPS = {"plus": np.add, "max": np.maximum, "minus": np.subtract, "lor": np.logical_or, "times": np.multiply}


def _program(op: str, dtype: str, y_first: bool, read_twice: bool, iters: int = 3):
    A = dp.sparse("A", ("n", "n"), dtype)
    x0 = dp.sparse("x", ("n", 1), dtype)
    f0 = dp.sparse("f", ("n", 1), dtype)
    sr = "lor_land" if dtype == "bool" else "plus_times"

    def body(x, f, i):
        g = dp.mxm(A, f, sr)      # (a new part a step: y)
        grown = dp.ewise_add(g, x, op) if y_first else dp.ewise_add(x, g, op)
        extra = dp.nvals(grown) if read_twice else dp.nvals(g)
        return grown, g, i + 1 + extra * 0

    x, _, _ = dp.while_loop(lambda x, f, i: i < iters, body, (x0, f0, dp.nvals(x0) * 0), 10)
    return dp.function({"x": x})


def _oracle(A, x, f, op, y_first, iters=3):
    """The loop in numpy: g = A f (over present entries), x = x ∪ g with op."""
    av, ap = A
    for _ in range(iters):
        fv, fp = f
        if av.dtype == bool:
            gv = (ap & av).astype(int) @ (fp & fv).astype(int) > 0
        else:
            gv = np.where(ap, av, 0) @ np.where(fp, fv, 0)
        gp = ap.astype(int) @ fp.astype(int) > 0
        g = (gv.astype(av.dtype), gp)
        x = accumulate(g, x, OPS[op]) if y_first else accumulate(x, g, OPS[op])
        f = g
    return x


CASES = [("plus", "int64", False), ("plus", "float64", True), ("max", "int32", False), ("lor", "bool", True),
         ("times", "float64", False), ("minus", "int64", True), ("minus", "float64", False)]


@pytest.mark.parametrize("op,dtype,y_first", CASES)
@pytest.mark.parametrize("read_twice", [False, True])
@pytest.mark.parametrize("P", [1, 2, 3])
def test_loop_union_equals_numpy(op, dtype, y_first, read_twice, P):
    rng = rng_for(op, dtype, y_first, read_twice)
    n = 9
    A, x, f = rand(rng, (n, n), dtype, 0.3), rand(rng, (n, 1), dtype, 0.4), rand(rng, (n, 1), dtype, 0.5)
    prog = _program(op, dtype, y_first, read_twice)
    got = run(prog, {"A": to_sparse(A), "x": to_sparse(x), "f": to_sparse(f)}, P)["x"]
    assert same(got, _oracle(A, x, f, op, y_first))
    # rewritten exactly where the union is the accumulate: x on the left or a commutative op, read once
    body = next(n for n in prog.program.toposort() if n.op.value == "while").attr("body")
    rewritten = not read_twice and (not y_first or op != "minus")
    assert body.outputs[0][1].op.value == ("update" if rewritten else "ewise_add")


def test_a_full_value_grown_in_place_equals_numpy():
    """A full x (PageRank-like x = x + d): every iteration writes into x; the result equals
    numpy's, and the caller's starting value is not written into."""
    d = dp.dense("d", ("n", 1))
    x0 = dp.dense("x", ("n", 1))
    x, _ = dp.while_loop(lambda x, i: i < 4, lambda x, i: (dp.ewise_add(x, d, "plus"), i + 1),
                         (x0, dp.nvals(d) * 0), 10)
    f = dp.function({"x": x})
    xs, ds = np.arange(6.0).reshape(6, 1), np.full((6, 1), 0.5)
    for P in (1, 2):
        got = run(f, {"x": xs, "d": ds}, P)["x"]
        np.testing.assert_array_equal(got[0], xs + 4 * 0.5)
    np.testing.assert_array_equal(xs.ravel(), np.arange(6.0))
