"""Hand-computed cases: tiny inputs whose results were worked out on paper and are written
here literally, as (row, col) -> value dicts of the present entries. ``.`` in a comment
marks a missing entry; ``0!`` an explicit zero (present, value 0)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp


def S(shape, entries: dict, dtype=np.float64):
    """A scipy CSR matrix with exactly these present entries (explicit zeros stay)."""
    rows = np.array([r for r, _ in entries], dtype=np.int64)
    cols = np.array([c for _, c in entries], dtype=np.int64)
    vals = np.array(list(entries.values()), dtype=dtype)
    return sp.coo_array((vals, (rows, cols)), shape=shape).tocsr()


def entries(arr) -> dict:
    r, c, v = arr.to_coo()
    return {(int(i), int(j)): v_.item() for i, j, v_ in zip(r, c, v)}


def assert_entries(arr, want: dict, dtype=None, approx=False):
    got = entries(arr)
    assert set(got) == set(want), f"present entries {sorted(got)} != {sorted(want)}"
    for k, w in want.items():
        if approx:
            assert got[k] == pytest.approx(w, rel=1e-12), (k, got[k], w)
        else:
            assert got[k] == w and type(got[k]) is type(w), (k, got[k], w)
    if dtype is not None:
        assert arr.dtype == np.dtype(dtype)


def test_explicit_zeros_survive_input_conversion():
    A = S((2, 2), {(0, 0): 0.0, (1, 1): 2.0})
    assert A.nnz == 2
    out = dp.function({"A": dp.sparse("A", ("n", "n")) * 1.0})(A=A)
    assert_entries(out["A"], {(0, 0): 0.0, (1, 1): 2.0})


def test_min_plus_shortest_path_steps():
    # edges 0->1 (1), 0->2 (4), 1->2 (2); d = [0, ., .]
    A = S((3, 3), {(0, 1): 1.0, (0, 2): 4.0, (1, 2): 2.0})
    d = S((1, 3), {(0, 0): 0.0})
    a, dv = dp.sparse("A", ("n", "n")), dp.sparse("d", (1, "n"))
    d1 = dp.ewise_add(dv, dp.vxm(dv, a, "min_plus"), "min")
    d2 = dp.ewise_add(d1, dp.vxm(d1, a, "min_plus"), "min")
    out = dp.function({"step": dp.vxm(dv, a, "min_plus"), "d1": d1, "d2": d2,
                       "A2": dp.mxm(a, a, "min_plus")})(A=A, d=d)
    assert_entries(out["step"], {(0, 1): 1.0, (0, 2): 4.0})               # [., 1, 4]: nothing reaches 0
    assert_entries(out["d1"], {(0, 0): 0.0, (0, 1): 1.0, (0, 2): 4.0})     # [0, 1, 4]
    assert_entries(out["d2"], {(0, 0): 0.0, (0, 1): 1.0, (0, 2): 3.0})     # [0, 1, 3] via 0->1->2
    assert_entries(out["A2"], {(0, 2): 3.0})                               # two-hop paths: only 0->1->2


def test_min_plus_over_missing_is_missing_not_zero():
    # A = [. 5], B = [3; .]: no k has both A(0,k) and B(k,0)
    A, B = S((1, 2), {(0, 1): 5.0}), S((2, 1), {(0, 0): 3.0})
    for sr in ("min_plus", "plus_times", "max_plus", "any_pair"):
        out = dp.function({"C": dp.mxm(dp.sparse("A", (1, "k")), dp.sparse("B", ("k", 1)), sr)})(A=A, B=B)
        assert out["C"].nvals == 0, sr
        with pytest.raises(ValueError):
            out["C"].to_numpy()
        assert out["C"].to_numpy(fill=-1.0).tolist() == [[-1.0]]


def test_min_and_max_over_nan_terms_only_are_nan():
    # A = [0! 2], b = [nan; .]: row 0 has one term, 0 + nan = nan (min / max ignore a NaN against a
    # number, so with no other term it stays: never the identity's +-inf); row 1 = [. 1] has
    # none: missing. Rows of [nan .; nan 3]: min / max nan and 3
    A, b = S((2, 2), {(0, 0): 0.0, (0, 1): 2.0, (1, 1): 1.0}), S((2, 1), {(0, 0): np.nan})
    X = S((2, 2), {(0, 0): np.nan, (1, 0): np.nan, (1, 1): 3.0})
    for sr in ("min_plus", "max_plus"):
        out = dp.function({"C": dp.mxm(dp.sparse("A", ("n", "n")), dp.sparse("b", ("n", 1)), sr)})(A=A, b=b)
        got = entries(out["C"])
        assert set(got) == {(0, 0)} and math.isnan(got[(0, 0)]), (sr, got)
    for m in ("min", "max"):
        got = entries(dp.function({"r": dp.reduce_rows(dp.sparse("X", ("n", "n")), m)})(X=X)["r"])
        assert math.isnan(got[(0, 0)]) and got[(1, 0)] == 3.0, (m, got)


def test_plus_second_counts_pattern_not_values():
    # A = [[5, ., 0!], [., ., .], [., 7, .]],  X = [[1, 2], [3, 4], [5, 6]]
    A = S((3, 3), {(0, 0): 5.0, (0, 2): 0.0, (2, 1): 7.0})
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "f"))
    out = dp.function({s: dp.mxm(a, x, s) for s in ("plus_second", "plus_times", "plus_first", "plus_pair",
                                                     "min_second")})(A=A, X=X)
    # row 0 sums X rows 0 and 2 (the explicit zero counts); row 1 has no entries -> missing
    assert_entries(out["plus_second"], {(0, 0): 6.0, (0, 1): 8.0, (2, 0): 3.0, (2, 1): 4.0})
    assert_entries(out["plus_times"], {(0, 0): 5.0, (0, 1): 10.0, (2, 0): 21.0, (2, 1): 28.0})
    assert_entries(out["plus_first"], {(0, 0): 5.0, (0, 1): 5.0, (2, 0): 7.0, (2, 1): 7.0})
    assert_entries(out["plus_pair"], {(0, 0): 2.0, (0, 1): 2.0, (2, 0): 1.0, (2, 1): 1.0})
    assert_entries(out["min_second"], {(0, 0): 1.0, (0, 1): 2.0, (2, 0): 3.0, (2, 1): 4.0})
    assert not out["plus_second"].present()[1].any()


def test_softmax_and_log_softmax_over_present_entries():
    # X = [[1, ., 1], [., ., .], [0!, ln 3, .]]
    X = S((3, 3), {(0, 0): 1.0, (0, 2): 1.0, (2, 0): 0.0, (2, 1): math.log(3.0)})
    x = dp.sparse("X", ("n", "m"))
    out = dp.function({"s": dp.softmax(x), "ls": dp.log_softmax(x)})(X=X)
    assert_entries(out["s"], {(0, 0): 0.5, (0, 2): 0.5, (2, 0): 0.25, (2, 1): 0.75}, approx=True)
    assert_entries(out["ls"], {(0, 0): -math.log(2), (0, 2): -math.log(2), (2, 0): -math.log(4),
                               (2, 1): math.log(3) - math.log(4)}, approx=True)


def test_reductions_with_empty_rows_and_explicit_zeros():
    # X = [[3, ., -1], [., ., .], [0!, ., .]]  (int64)
    X = S((3, 3), {(0, 0): 3, (0, 2): -1, (2, 0): 0}, dtype=np.int64)
    x = dp.sparse("X", ("n", "m"), "int64")
    out = dp.function({"rp": dp.reduce_rows(x, "plus"), "rmin": dp.reduce_rows(x, "min"),
                       "cmax": dp.reduce_cols(x, "max"), "all_t": dp.reduce_all(x, "times"),
                       "rlor": dp.reduce_rows(x, "lor"), "none": dp.reduce_all(dp.select(x, ">", 5), "plus")})(X=X)
    assert_entries(out["rp"], {(0, 0): 2, (2, 0): 0}, "int64")        # [2; .; 0]: row 1 has no entries
    assert_entries(out["rmin"], {(0, 0): -1, (2, 0): 0}, "int64")
    assert_entries(out["cmax"], {(0, 0): 3, (0, 2): -1}, "int64")     # column 1 has no entries
    assert_entries(out["all_t"], {(0, 0): 0}, "int64")                # 3 * -1 * 0
    assert_entries(out["rlor"], {(0, 0): True, (2, 0): False}, "bool")
    assert_entries(out["none"], {})                                     # a sum of nothing is missing


def test_union_minus_and_infix_subtraction():
    # X = [5, .],  Y = [2, 7]
    X, Y = S((1, 2), {(0, 0): 5.0}), S((1, 2), {(0, 0): 2.0, (0, 1): 7.0})
    x, y = dp.sparse("X", ("n", "m")), dp.sparse("Y", ("n", "m"))
    out = dp.function({"add_minus": dp.ewise_add(x, y, "minus"), "sub": x - y,
                       "mult_minus": dp.ewise_mult(x, y, "minus"), "add": x + y, "mul": x * y, "div": x / y,
                       "rsub": y - x})(X=X, Y=Y)
    assert_entries(out["add_minus"], {(0, 0): 3.0, (0, 1): 7.0})    # a lone Y entry passes through
    assert_entries(out["sub"], {(0, 0): 3.0, (0, 1): -7.0})         # X + (-Y): a lone Y entry is negated
    assert_entries(out["rsub"], {(0, 0): -3.0, (0, 1): 7.0})
    assert_entries(out["mult_minus"], {(0, 0): 3.0})
    assert_entries(out["add"], {(0, 0): 7.0, (0, 1): 7.0})
    assert_entries(out["mul"], {(0, 0): 10.0})
    assert_entries(out["div"], {(0, 0): 2.5})


def test_broadcast_union_and_intersection():
    # X = [[1, ., .], [., ., .]],  v = [10; .]
    X, v = S((2, 3), {(0, 0): 1.0}), S((2, 1), {(0, 0): 10.0})
    x, vv = dp.sparse("X", ("n", "m")), dp.sparse("v", ("n", 1))
    out = dp.function({"u": dp.ewise_add(x, vv, "plus"), "i": dp.ewise_mult(x, vv, "times"),
                       "s": x + 2.0})(X=X, v=v)
    assert_entries(out["u"], {(0, 0): 11.0, (0, 1): 10.0, (0, 2): 10.0})   # v fills its present row
    assert_entries(out["i"], {(0, 0): 10.0})
    assert_entries(out["s"], {(0, 0): 3.0})                                # a scalar only touches present entries


def test_value_mask_and_structure_mask():
    # X = [1, 2, 3],  M = [0!, 2, .]
    X, M = S((1, 3), {(0, 0): 1.0, (0, 1): 2.0, (0, 2): 3.0}), S((1, 3), {(0, 0): 0.0, (0, 1): 2.0})
    x, m = dp.sparse("X", ("n", "m")), dp.sparse("M", ("n", "m"))
    out = dp.function({"v": dp.mask(x, m), "s": dp.mask(x, m, structure=True),
                       "cv": dp.mask(x, m, complement=True), "cs": dp.mask(x, m, complement=True, structure=True)}
                      )(X=X, M=M)
    assert_entries(out["v"], {(0, 1): 2.0})
    assert_entries(out["s"], {(0, 0): 1.0, (0, 1): 2.0})
    assert_entries(out["cv"], {(0, 0): 1.0, (0, 2): 3.0})
    assert_entries(out["cs"], {(0, 2): 3.0})


def test_a_value_mask_casts_to_bool_so_negative_zero_does_not_hold():
    # M = [-0.0 0!; 2 nan] as a value mask of X = [1 2; 3 4]: 2 and nan hold (cast to bool), -0.0
    # and 0! do not; complemented: -0.0 and 0!. A product whose terms cancel to -0.0 or 0.0
    # (SuiteSparse's kernels differ) masks the same either way
    X = S((2, 2), {(0, 0): 1.0, (0, 1): 2.0, (1, 0): 3.0, (1, 1): 4.0})
    M = S((2, 2), {(0, 0): -0.0, (0, 1): 0.0, (1, 0): 2.0, (1, 1): np.nan})
    x, m = dp.sparse("X", ("n", "n")), dp.sparse("M", ("n", "n"))
    out = dp.function({"in": dp.mask(x, m), "out": dp.mask(x, m, complement=True),
                       "mxm": dp.mxm(x, x, "plus_times", mask=m),
                       "upd": dp.update(x, x * 10.0, mask=m, replace=True)})(X=X, M=M)
    assert_entries(out["in"], {(1, 0): 3.0, (1, 1): 4.0})
    assert_entries(out["out"], {(0, 0): 1.0, (0, 1): 2.0})
    assert_entries(out["mxm"], {(1, 0): 15.0, (1, 1): 22.0})   # 3*1 + 4*3, 3*2 + 4*4
    assert_entries(out["upd"], {(1, 0): 30.0, (1, 1): 40.0})


def test_lor_land_explicit_zero_gives_present_false():
    # A = [0!, 1],  B = [1; .]: the only k with both present is k = 0, and A(0,0) is zero
    A, B = S((1, 2), {(0, 0): 0.0, (0, 1): 1.0}), S((2, 1), {(0, 0): 1.0})
    out = dp.function({"C": dp.mxm(dp.sparse("A", (1, "k")), dp.sparse("B", ("k", 1)), "lor_land")})(A=A, B=B)
    assert_entries(out["C"], {(0, 0): False}, "bool")


def test_triangle_count_with_plus_pair_and_a_structural_mask():
    # the triangle 0-1-2 plus a pendant edge 2-3 (symmetric)
    edges = [(0, 1), (0, 2), (1, 2), (2, 3)]
    A = S((4, 4), {**{(i, j): 1 for i, j in edges}, **{(j, i): 1 for i, j in edges}}, dtype=np.int64)
    a = dp.sparse("A", ("n", "n"), "int64")
    C = dp.mask(dp.mxm(a, a, "plus_pair"), a, structure=True)
    out = dp.function({"C": C, "t": dp.reduce_all(C, "plus")})(A=A)
    # every triangle edge has one common neighbour; the pendant edge has none, so it is missing
    assert_entries(out["C"], {(0, 1): 1, (1, 0): 1, (0, 2): 1, (2, 0): 1, (1, 2): 1, (2, 1): 1}, "int64")
    assert_entries(out["t"], {(0, 0): 6}, "int64")                          # 6 = 1 triangle x 6


def test_bottleneck_paths_with_a_user_semiring():
    dp.semiring.define("golden_hand_max_min", monoid="max", op="min")
    # capacities 0->1 (3), 0->2 (1), 1->2 (5): the widest two-hop path 0->2 has width min(3, 5) = 3
    A = S((3, 3), {(0, 1): 3.0, (0, 2): 1.0, (1, 2): 5.0})
    a = dp.sparse("A", ("n", "n"))
    out = dp.function({"W": dp.mxm(a, a, "golden_hand_max_min"),
                       "W1": dp.ewise_add(a, dp.mxm(a, a, dp.semiring.golden_hand_max_min), "max")})(A=A)
    assert_entries(out["W"], {(0, 2): 3.0})
    assert_entries(out["W1"], {(0, 1): 3.0, (0, 2): 3.0, (1, 2): 5.0})


def test_integer_division_and_scalars():
    # X = [3, ., -4]  (int64)
    X = S((1, 3), {(0, 0): 3, (0, 2): -4}, dtype=np.int64)
    x = dp.sparse("X", ("n", "m"), "int64")
    out = dp.function({"half": x / 2, "inv": 12 / x, "lin": 2 * x - 1, "sq": x ** 2, "one_minus": 1 - x})(X=X)
    assert_entries(out["half"], {(0, 0): 1.5, (0, 2): -2.0}, "float64")   # integer / gives float64
    assert_entries(out["inv"], {(0, 0): 4.0, (0, 2): -3.0}, "float64")
    assert_entries(out["lin"], {(0, 0): 5, (0, 2): -9}, "int64")
    assert_entries(out["sq"], {(0, 0): 9, (0, 2): 16}, "int64")
    assert_entries(out["one_minus"], {(0, 0): -2, (0, 2): 5}, "int64")


def test_relu_and_step_keep_present_zeros():
    # X = [-1, 0!, 2, .]
    X = S((1, 4), {(0, 0): -1.0, (0, 1): 0.0, (0, 2): 2.0})
    x = dp.sparse("X", ("n", "m"))
    out = dp.function({"r": dp.relu(x), "g": dp.relu_grad(x), "sig": dp.sigmoid(x)})(X=X)
    assert_entries(out["r"], {(0, 0): 0.0, (0, 1): 0.0, (0, 2): 2.0})
    assert_entries(out["g"], {(0, 0): 0.0, (0, 1): 0.0, (0, 2): 1.0})
    assert_entries(out["sig"], {(0, 0): 1 / (1 + math.e), (0, 1): 0.5, (0, 2): 1 / (1 + math.exp(-2))}, approx=True)


def test_select_compares_with_the_thunk_as_written():
    # X = [-1, 0!, 1, 2] (int64);  B = [True, False!, .]
    X = S((1, 4), {(0, 0): -1, (0, 1): 0, (0, 2): 1, (0, 3): 2}, dtype=np.int64)
    B = S((1, 3), {(0, 0): True, (0, 1): False}, dtype=bool)
    x, b = dp.sparse("X", ("n", "m"), "int64"), dp.sparse("B", ("n", "k"), "bool")
    out = dp.function({"lt": dp.select(x, "<", 0.5), "gt": dp.select(x, ">", -1.5), "eq": dp.select(x, "==", 0.5),
                       "nz": dp.select(x, "nonzero"), "bnz": dp.select(b, "nonzero"),
                       "triu": dp.select(x, "triu", 2)})(X=X, B=B)
    assert_entries(out["lt"], {(0, 0): -1, (0, 1): 0})
    assert_entries(out["gt"], {(0, 0): -1, (0, 1): 0, (0, 2): 1, (0, 3): 2})
    assert_entries(out["eq"], {})
    assert_entries(out["nz"], {(0, 0): -1, (0, 2): 1, (0, 3): 2})
    assert_entries(out["bnz"], {(0, 0): True}, "bool")
    assert_entries(out["triu"], {(0, 2): 1, (0, 3): 2})               # j - i >= 2


def test_array_conversions_respect_missing_entries():
    X = S((2, 2), {(0, 1): 4.0, (1, 1): 0.0})
    out = dp.function({"Y": dp.sparse("X", ("n", "m")) + 1.0})(X=X)["Y"]
    assert out.shape == (2, 2) and out.nvals == 2
    assert out.present().tolist() == [[False, True], [False, True]]
    assert out.to_numpy(fill=np.nan)[1, 1] == 1.0 and np.isnan(out.to_numpy(fill=np.nan)[0, 0])
    with pytest.raises(ValueError, match="missing"):
        out.to_numpy()
