"""int64 sums and products whose true value leaves int64: an error naming the value by default,
GraphBLAS's wrap-around by name, or float64 - the same on 1 to 4 processes and every plan; and
no error where the true value is in range, however the terms are split over processes."""
from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.kernels.overflow import IntegerOverflow
from dspla.runtime.comm.sim import SimAbort
from tests.reference.golden import oracle

from harness import run_dist

BIG = 2**62


def run(f, inputs: dict, P: int, **options) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(**inputs) if P == 1 else run_dist(f, inputs, P, **options)[0]


def fails(f, inputs: dict, P: int, **options) -> str:
    """The overflow message of a run (one process: IntegerOverflow; P ranks: the job's abort)."""
    with pytest.raises((IntegerOverflow, SimAbort)) as e:
        run(f, inputs, P, **options)
    assert "overflows int64" in str(e.value), str(e.value)
    return str(e.value)


def program(name: str):
    A = dp.sparse("A", ("n", "n"), dtype="int64")
    X = dp.dense("X", ("n", "f"), dtype="int64")
    exprs = {"reduce_rows": dp.reduce_rows(X), "reduce_cols": dp.reduce_cols(X), "reduce_all": dp.reduce_all(X),
             "sum": X + X, "product": X * X, "scaled": X * 4, "mxm": A @ X, "power": dp.reduce(X, "times", "cols")}
    return dp.function({name: exprs[name]}, inputs=[A, X])


ONES = sp.csr_array(np.ones((6, 6), dtype=np.int64))


@pytest.mark.parametrize("P", [1, 2, 3, 4])
@pytest.mark.parametrize("name", ["reduce_rows", "reduce_cols", "reduce_all", "sum", "product", "scaled", "mxm",
                                  "power"])
def test_an_overflow_is_an_error_naming_the_value_on_every_P(name, P):
    x = np.full((6, 2), BIG, dtype=np.int64)   # every sum of two and every product wraps
    msg = fails(program(name), {"A": ONES, "X": x}, P)
    assert name in msg and "overflow='wrap'" in msg, msg   # the output, and the choices


@pytest.mark.parametrize("P, plan", [(P, plan) for plan in ("p2p1d", "allgather1d", "shift1d", "twoface", "15d", "2d")
                                     for P in (1, 2, 4) if (plan, P) != ("2d", 2)])   # (2d needs a square P)
def test_a_product_whose_running_total_leaves_int64_but_ends_in_range_is_not_an_error(P, plan):
    """Rows 2^62, 2^62, -2^62, -2^62, 5, 7: every column's sum passes 2^63 on its way (on some
    P, on some rank) and ends at 12; int64 arithmetic modulo 2^64 gets 12 exactly."""
    x = np.array([[BIG], [BIG], [-BIG], [-BIG], [5], [7]], dtype=np.int64)
    out = run(program("mxm"), {"A": ONES, "X": x}, P, plan=plan)
    assert out["mxm"].to_numpy().ravel().tolist() == [12] * 6


@pytest.mark.parametrize("P", [1, 2, 3])
def test_reductions_over_processes_are_checked_by_their_true_value(P):
    x = np.array([[BIG, 1], [BIG, 1], [-BIG, 1], [-BIG, 1], [5, 1], [7, 1]], dtype=np.int64)
    assert run(program("reduce_cols"), {"A": ONES, "X": x}, P)["reduce_cols"].to_numpy().tolist() == [[12, 6]]
    assert run(program("reduce_all"), {"A": ONES, "X": x}, P)["reduce_all"].to_numpy().tolist() == [[18]]
    y = np.full((6, 2), 2**60, dtype=np.int64)   # 12 x 2^60 > 2^63: no rank's part wraps, their sum does
    fails(program("reduce_all"), {"A": ONES, "X": y}, P)
    assert run(program("reduce_cols"), {"A": ONES, "X": y}, P)["reduce_cols"].to_numpy().tolist() == \
        [[6 * 2**60] * 2]   # (6 x 2^60 < 2^63)


@pytest.mark.parametrize("P", [1, 3])
def test_wrap_by_name_is_graphblas_arithmetic_and_float64_computes_in_float64(P):
    x = np.full((6, 2), BIG, dtype=np.int64)
    X = dp.dense("X", ("n", "f"), dtype="int64")
    with np.errstate(over="ignore"):
        wrapped = x.sum(axis=1, keepdims=True)   # numpy's int64 sum wraps as GraphBLAS's does
    f = dp.function({"r": dp.reduce_rows(X), "s": X + X})
    f.configure(overflow="wrap")   # (the simulated ranks' sessions take options as given: named again)
    out = run(f, {"X": x}, P, **({"overflow": "wrap"} if P > 1 else {}))
    assert out["r"].to_numpy().tolist() == wrapped.tolist() and out["r"].dtype == np.int64
    g = dp.function({"r": dp.reduce_rows(X), "s": X + X}, overflow="float64")
    out = run(g, {"X": x}, P)
    assert out["r"].dtype == np.float64 and out["r"].to_numpy().ravel().tolist() == [2.0**63] * 6
    with pytest.raises(dp.DsplaError, match="give it to dp.function"):
        f.configure(overflow="float64")
    with pytest.raises(dp.DsplaError, match="overflow must be one of error, wrap, float64"):
        dp.function({"s": X + X}, overflow="saturate")


def test_in_range_integers_and_floats_are_not_recomputed():
    """The bound clears small integers without a second computation, and floats are never looked at."""
    from dspla.kernels import overflow
    calls = []
    real = overflow.compare
    overflow.compare = lambda *a: calls.append(a) or real(*a)
    try:
        X = dp.dense("X", ("n", "f"), dtype="int64")
        Y = dp.dense("Y", ("n", "f"))
        f = dp.function({"a": dp.reduce_all(X * X + X), "b": dp.reduce_all(Y * Y)})
        out = f(X=np.arange(12, dtype=np.int64).reshape(6, 2), Y=np.full((6, 2), 1e300))
        assert out["a"].to_numpy()[0, 0] == sum(v * v + v for v in range(12)) and calls == []
    finally:
        overflow.compare = real


def test_a_file_program_names_the_value_and_the_command_line_can_choose(tmp_path):
    (tmp_path / "p.dspla").write_text("input X : dense[n, f] int64\ns = reduce_all(X)\noutput s\n")
    np.save(tmp_path / "x.npy", np.full((3, 2), BIG, dtype=np.int64))
    cmd = [sys.executable, "-m", "dspla.cli.main", "run", str(tmp_path / "p.dspla"), "-i", f"X={tmp_path / 'x.npy'}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "dspla: error: s (" in r.stderr and "p.dspla:2:5) overflows int64" in r.stderr, \
        r.stderr
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, "DSPLA_INT_OVERFLOW": "wrap"})
    assert r.returncode == 0 and "s: 1x1 int64 = -9223372036854775808" in r.stdout, r.stderr


def test_steps_that_cannot_grow_an_entry_are_not_checked_and_stay_exact():
    """x * 0, x * 1, x + 0, x - 0 keep every entry's magnitude: exact at int64's ends with no
    check (kernels/overflow.py risky); 0 - x negates, and -(-2^63) leaves int64: still an error."""
    from dspla.kernels.overflow import risky
    X = dp.dense("X", ("n", "f"), dtype="int64")
    kept = {"times0": X * 0, "times1": X * 1, "plus0": X + 0, "minus0": X - 0}
    for e in kept.values():
        assert not risky(dp.function({"y": e}).program.outputs[0][1])
    x = np.array([[-2**63, 2**63 - 1], [5, -7]], dtype=np.int64)
    for name, e in kept.items():
        got = dp.function({"y": e})(X=x)["y"].to_numpy()
        np.testing.assert_array_equal(got, x * 0 if name == "times0" else x, err_msg=name)
    for grows in (X * 2, 0 - X):
        assert risky(dp.function({"y": grows}).program.outputs[0][1])
    fails(dp.function({"y": 0 - X}, inputs=[X]), {"X": x}, 1)


# a semiring defined from GraphBLAS's own operators computes GraphBLAS's arithmetic: checked as the
# built-in ones are (it wrapped silently); its powers saturate at int64's limits, as GraphBLAS's
# int64 power does, and a sum of saturated powers that leaves int64 is an error too
dp.semiring.define("ovf_plus_times", monoid="plus", op="times")
dp.semiring.define("ovf_plus_pow", monoid="plus", op="pow")
dp.semiring.define("ovf_times_pow", monoid="times", op="pow")


def _product(semiring: str, a: list, b: list, **kw):
    A, B = dp.sparse("A", ("n", "k"), dtype="int64"), dp.sparse("B", ("k", "m"), dtype="int64")
    f = dp.function({"C": dp.mxm(A, B, semiring)}, **kw)
    return f, {"A": sp.csr_array(np.array(a, np.int64)), "B": sp.csr_array(np.array(b, np.int64))}


@pytest.mark.parametrize("P", [1, 2])
@pytest.mark.parametrize("semiring, a, b", [
    ("ovf_plus_times", [[BIG, 2, 1]], [[2], [1], [1]]),       # 2^63 + 3
    ("ovf_plus_pow", [[10, 2, 7]], [[30], [1], [40]]),         # two powers saturated at 2^63 - 1, plus 2
    ("ovf_times_pow", [[10, 3]], [[30], [2]]),                  # (2^63 - 1) * 9
])
def test_a_semiring_of_built_in_operators_is_checked_as_a_built_in_one(semiring, a, b, P):
    f, ins = _product(semiring, a, b)
    assert f"mxm[{semiring}]" in fails(f, ins, P)
    g, ins = _product(semiring, a, b, overflow="wrap")   # (simulated ranks take it as an option: named again)
    got = int(run(g, ins, P, **({"overflow": "wrap"} if P > 1 else {}))["C"].to_numpy()[0, 0])
    # two's complement: 2^62 * 2 + 3 is -2^63 + 3; 2 * (2^63 - 1) + 2 is 0; (2^63 - 1) * 9 is 2^63 - 9
    assert got == {"ovf_plus_times": -(2**63) + 3, "ovf_plus_pow": 0, "ovf_times_pow": 2**63 - 9}[semiring]


def test_saturated_powers_whose_sum_stays_in_int64_are_exact():
    f, ins = _product("ovf_plus_pow", [[10, 2, -3]], [[30], [3], [3]])   # (2^63 - 1) + 8 - 27
    assert int(run(f, ins, 1)["C"].to_numpy()[0, 0]) == 2**63 - 1 + 8 - 27
    f, ins = _product("ovf_times_pow", [[2, 3]], [[3], [2]])
    assert int(run(f, ins, 1)["C"].to_numpy()[0, 0]) == 72


def _spgemm(semiring="plus_times"):
    A, B = dp.sparse("A", ("n", "k"), dtype="int64"), dp.sparse("B", ("k", "m"), dtype="int64")
    return dp.function({"C": dp.mxm(A, B, semiring)})


def _exact(a, b) -> np.ndarray:
    """a @ b in Python integers (no wrap)."""
    return a.toarray().astype(object).dot(b.toarray().astype(object))


@pytest.mark.parametrize("P, plan", [(4, "summa2d_sparse"), (2, "spgemm3d"), (4, "spgemm3d")])
def test_sparse_times_sparse_plans_check_their_blocks_and_layers(P, plan):
    # Sparse SUMMA's block and 3D's layers: the block's check was dropped when its rows left (the
    # product wrapped silently), and the layers' partials were summed unchecked
    rng = np.random.default_rng(0)
    a = sp.random_array((8, 8), density=0.5, rng=rng, format="csr")
    a = sp.csr_array((np.full(a.nnz, 2**61, np.int64), a.indices, a.indptr), shape=a.shape)
    b = sp.csr_array(a.T)
    b.data[:] = 3
    assert "mxm[plus_times]" in fails(_spgemm(), {"A": a, "B": b}, P, plan=plan)
    small = sp.csr_array((a.data >> 30, a.indices, a.indptr), shape=a.shape)   # in range: exact
    got = run(_spgemm(), {"A": small, "B": b}, P, plan=plan)["C"].to_numpy(fill=0)
    assert np.array_equal(got.astype(object), _exact(small, b))


def test_3d_layers_partials_in_range_whose_sum_leaves_int64_are_an_error():
    # each layer's partial is 2^62 (its own bound clears it); their sum, made when the rows return
    # to their owner, is 2^63
    a = sp.csr_array(np.full((1, 4), 2**61, np.int64))
    b = sp.csr_array(np.ones((4, 1), np.int64))
    assert "overflows int64" in fails(_spgemm(), {"A": a, "B": b}, 2, plan="spgemm3d")
    # a layer's partial of exactly -2^63 (np.abs leaves it negative) and one of -1
    low = sp.csr_array(np.array([[-(2**62), -(2**62), -1, 0]], np.int64))
    assert "overflows int64" in fails(_spgemm(), {"A": low, "B": b}, 2, plan="spgemm3d")
    ok = sp.csr_array(np.full((1, 4), 2**60, np.int64))
    got = run(_spgemm(), {"A": ok, "B": b}, 2, plan="spgemm3d")["C"].to_numpy(fill=0)
    assert got.tolist() == [[2**62]]


@pytest.mark.parametrize("op", ["kronecker", "ewise_union"])
def test_kronecker_and_ewise_union_are_checked(op):
    v, w = dp.sparse("v", (2, 1), dtype="int64"), dp.sparse("w", (2, 1), dtype="int64")
    expr = dp.kronecker(v, w, "times") if op == "kronecker" else dp.ewise_union(v, w, "times", 2**40, 3)
    f = dp.function({"y": expr})
    big = {"v": sp.csr_array(np.array([[2**40], [3]], np.int64)), "w": sp.csr_array(np.array([[2**30], [0]], np.int64))}
    assert f"{op}[times" in fails(f, big, 1)
    # in range: exact (the union's right default, 3, stands in for w's missing entry)
    v0 = sp.csr_array((np.array([2**20, 3], np.int64), ([0, 1], [0, 0])), shape=(2, 1))
    w0 = sp.csr_array((np.array([5], np.int64), ([0], [0])), shape=(2, 1))
    got = run(f, {"v": v0, "w": w0}, 1)["y"].to_numpy(fill=0).ravel().tolist()
    assert got == ([5 * 2**20, 0, 15, 0] if op == "kronecker" else [5 * 2**20, 3 * 3])


@pytest.mark.parametrize("P", [1, 2])
def test_an_iteration_whose_product_wraps_is_an_error_though_the_next_ones_do_not(P):
    # the first iteration's product wraps (4 x 2^62) and the next, masked off that row, is in range:
    # its float64 copy was dropped when the second product took the slot, and the loop went on
    A, x = dp.sparse("A", ("n", "n"), dtype="int64"), dp.sparse("x", ("n", 1), dtype="int64")

    def body(v):
        y = dp.mxm(A, v, "plus_times", mask=v, complement=True, structure=True)
        return (dp.update(v, y, mask=y, structure=True),)
    (y,) = dp.while_loop(lambda v: dp.nvals(v) >= 0, body, (x,), 3)
    f = dp.function({"y": y})
    n = 6
    a = sp.csr_array((np.full(n - 1, 4, np.int64), (np.arange(1, n), np.arange(n - 1))), shape=(n, n))
    x0 = sp.csr_array((np.array([2**62], np.int64), ([0], [0])), shape=(n, 1))
    fails(f, {"A": a, "x": x0}, P)
    x0 = sp.csr_array((np.array([2**10], np.int64), ([0], [0])), shape=(n, 1))   # (a new object: read again)
    assert run(f, {"A": a, "x": x0}, P)["y"].to_numpy(fill=0).ravel().tolist() == [2**10, 2**12, 2**14, 2**16, 0, 0]


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_integers_shifts_in_float64(fn):
    # x - max_row(x) in int64 left int64 for a row spanning more than 2^63 (an overflow error
    # where the softmax itself is plain)
    Y = dp.dense("Y", ("n", "f"), dtype="int64")
    y = np.array([[-(2**62) - 5, 2**62, 3], [1, 2, 3]], np.int64)
    got = dp.function({"s": getattr(dp, fn)(Y)})(Y=y)["s"].to_numpy()
    z = y.astype(np.float64) - y.astype(np.float64).max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got, np.exp(z - lse) if fn == "softmax" else z - lse, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("P", [1, 2])
def test_an_assign_with_an_accumulator_is_checked(P):
    C, A = dp.dense("C", ("n", "k"), dtype="int64"), dp.dense("A", (1, 1), dtype="int64")
    f = dp.function({"s": dp.assign(C, -1, [1], [0], accum="plus"), "e": dp.assign(C, A, [1], [0], accum="plus")})
    c = np.array([[0, 0], [-(2**63), 5], [7, 7]], np.int64)
    assert "assign[" in fails(f, {"C": c, "A": np.array([[-1]], np.int64)}, P)
    c = np.array([[0, 0], [-(2**62), 5], [7, 7]], np.int64)   # in range: exact
    out = run(f, {"C": c, "A": np.array([[-1]], np.int64)}, P)
    want = [[0, 0], [-(2**62) - 1, 5], [7, 7]]
    assert out["s"].to_numpy().tolist() == want and out["e"].to_numpy().tolist() == want


@pytest.mark.parametrize("P", [2, 3])
def test_a_product_whose_b_rows_are_fetched_is_checked(P):
    # a loop's product of a value computed at run time with the carried sparse A fetches the rows
    # of A it names from their owners (FetchMxM), which checked nothing
    A = dp.sparse("A", ("n", "n"), dtype="int64")
    t = dp.mxm(A, A, "min_first")
    (y,) = dp.while_loop(lambda v: dp.nvals(v) >= 0,
                         lambda v: (dp.ewise_add(v, dp.mxm(t, v, "plus_times"), "second"),), (A,), 2)
    f = dp.function({"y": y})
    rng = np.random.default_rng(3)
    a = sp.random_array((8, 8), density=0.5, rng=rng, format="csr")
    big = sp.csr_array((rng.integers(1, 8, a.nnz) << 56, a.indices, a.indptr), shape=a.shape)
    fails(f, {"A": big}, P)
    small = sp.csr_array((rng.integers(1, 8, a.nnz), a.indices, a.indptr), shape=a.shape)
    S = oracle.Mat(small.toarray(), small.toarray() != 0)   # (the values are 1..7: present where nonzero)
    T, want = oracle.mxm(S, S, "min", "first"), S
    for _ in range(2):
        want = oracle.ewise_add(want, oracle.mxm(T, want, "plus", "times"), "second")
    got = run(f, {"A": small}, P)["y"]
    assert np.array_equal(got.present(), want.present) and np.array_equal(got.to_numpy(fill=0), want.values)
