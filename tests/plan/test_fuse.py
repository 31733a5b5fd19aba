"""Small Allreduces: independent ones travel together (plan rewrite), and the one-collective
implementation combines values and presence as GraphBLAS does (a missing partial takes no part;
a result no rank holds stays missing) for every monoid and P."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.algebra import MONOIDS
from dspla.plan import ir
from dspla.plan.fuse import SMALL, fuse_list
from dspla.plan.options import Options

from harness import run_dist

PLUS = MONOIDS["plus"]


def _ar(out, src, entries=1, **kw):
    return ir.Allreduce(out, src, PLUS, entries=entries, **kw)


def _loc(out, *args):
    return ir.Local(out, None, args)


def _shape(instrs):
    return [(type(i).__name__, getattr(i, "outs", None) or getattr(i, "out", None)) for i in instrs]


def test_independent_allreduces_meet_where_a_result_is_needed():
    got = fuse_list([_loc(1, 0), _ar(2, 1), _loc(3, 0), _ar(4, 3), _loc(5, 2, 4)])
    assert _shape(got) == [("Local", 1), ("Local", 3), ("SmallAllreduce", (2, 4)), ("Local", 5)]


def test_a_dependent_allreduce_waits_for_the_one_it_reads():
    got = fuse_list([_loc(1, 0), _ar(2, 1), _loc(3, 2), _ar(4, 3)])
    assert _shape(got) == [("Local", 1), ("SmallAllreduce", (2,)), ("Local", 3), ("SmallAllreduce", (4,))]


def test_communication_keeps_its_order():
    gather = ir.AllgatherRows(9, 0, np.array([1, 1]), 1, "float64")
    got = fuse_list([_ar(2, 1), gather, _ar(4, 3)])
    assert _shape(got) == [("SmallAllreduce", (2,)), ("AllgatherRows", 9), ("SmallAllreduce", (4,))]


def test_overwriting_or_freeing_an_operand_stops_the_move():
    got = fuse_list([_ar(2, 1), _loc(1, 0), _ar(4, 3)])            # slot 1 rewritten after its Allreduce
    assert _shape(got)[0] == ("SmallAllreduce", (2,))
    got = fuse_list([_ar(2, 1), ir.Free((1,)), _ar(4, 3)])
    assert _shape(got)[:2] == [("SmallAllreduce", (2,)), ("Free", None)]


def test_large_and_product_allreduces_are_left_alone():
    big, prod = _ar(2, 1, entries=SMALL + 1), _ar(4, 3, product=0)
    assert fuse_list([big, prod]) == [big, prod]


def test_loop_bodies_are_rewritten():
    loop = ir.Loop((0,), (10,), [_loc(11, 10)], 11, [_loc(1, 10), _ar(2, 1), _loc(3, 10), _ar(4, 3)], (2,), 12, 5)
    (got,) = fuse_list([loop])
    assert _shape(got.body) == [("Local", 1), ("Local", 3), ("SmallAllreduce", (2, 4))]


# ----------------------------------------------------------------- values, against numpy
def _program():
    A = dp.sparse("A", ("n", "n"))          # partitions n, so D's rows are spread over the ranks
    D = dp.dense("D", ("n", "k"))          # a dense (dynamic) input: reductions are planned, not static
    S = dp.select(D, ">", 0.0)              # entries <= 0 are missing
    ints = dp.cast(dp.select(S, "<", 3.5), "int64")
    return dp.function(outputs={
        "sum": dp.reduce_all(S), "min": dp.reduce_all(S, "min"), "colmax": dp.reduce_cols(S, "max"),
        "any": dp.reduce_all(S > 2.5, "lor"), "none": dp.reduce_all(dp.select(S, ">", 100.0)),
        "prod": dp.reduce_all(ints, "times"), "spmm": dp.reduce_all(A @ D)})


def _data(seed):
    rng = np.random.default_rng(seed)
    n, k = 13, 3
    vals = rng.integers(1, 5, (n, k)).astype(float)
    present = rng.random((n, k)) < 0.5
    present[:5] = False                      # some ranks hold no entry at all
    A = sp.random_array((n, n), density=0.3, random_state=rng, format="csr")
    return {"A": A, "D": np.where(present, vals, -1.0)}, vals, present


def _oracle(inputs, vals, present):
    """Dense numpy with GraphBLAS semantics: a reduction of no entries is missing (None)."""
    v = vals[present]
    colmax = [vals[present[:, j], j].max() if present[:, j].any() else None for j in range(vals.shape[1])]
    small = present & (vals < 3.5)
    return {"sum": v.sum() if v.size else None, "min": v.min() if v.size else None, "colmax": colmax,
            "any": bool((v > 2.5).any()) if v.size else None, "none": None,
            "prod": int(np.prod(vals[small].astype(np.int64))) if small.any() else None,
            "spmm": float((inputs["A"].toarray() @ inputs["D"]).sum())}


def _as_python(arr):
    M = arr.to_graphblas()
    cells = [[None] * M.ncols for _ in range(M.nrows)]
    r, c, v = M.to_coo()
    for i, j, x in zip(r, c, v):
        cells[i][j] = x.item()
    return cells[0][0] if (M.nrows, M.ncols) == (1, 1) else cells[0]


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_small_allreduces_equal_numpy(P):
    f = _program()
    inputs, vals, present = _data(P)
    want = _oracle(inputs, vals, present)
    got, _ = run_dist(f, inputs, P, plan="p2p1d", partition="random", seed=P)
    for k, w in want.items():
        g = _as_python(got[k])
        assert g == w or k == "spmm" and abs(g - w) < 1e-12 * abs(w), (k, g, w)


def test_the_reductions_of_one_step_travel_together():
    f = _program()
    inputs = _data(0)[0]
    c = f.plan(3, inputs, Options(plan="p2p1d", partition="random"))
    instrs = c.plan.programs[0].instrs
    small = [i for i in instrs if isinstance(i, ir.SmallAllreduce)]
    assert not any(isinstance(i, ir.Allreduce) for i in instrs)
    # the six reductions of D's pieces in one collective; the product's own after its messages
    assert [len(x.outs) for x in small] == [6, 1]
