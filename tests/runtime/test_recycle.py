"""Output buffers reused once nothing holds them (kernels/recycle.py): a product's output from an
earlier call is written into again only when the user dropped it; one the user keeps is never
touched. Expectations come from scipy/numpy, not from dspla."""
import gc

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.ir.types import DType
from dspla.kernels import recycle
from dspla.runtime.comm.sim import run_simulated


def _case(seed=0, n=60, k=5):
    rng = np.random.default_rng(seed)
    a = sp.random_array((n, n), density=0.08, random_state=rng, format="csr")
    a = a.tolil()
    a[3, :] = 0          # empty rows: their output rows are missing (GraphBLAS semantics)
    a[17, :] = 0
    a = a.tocsr()
    a.eliminate_zeros()
    return a, [rng.random((n, k)) for _ in range(3)]


def _function():
    A, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    return dp.function({"C": A @ X})


def _expect(a, x):
    """GraphBLAS semantics by hand: rows of A without entries are missing."""
    want = a @ x
    present = np.repeat((np.diff(a.indptr) > 0)[:, None], x.shape[1], axis=1)
    return want, present


def _check(arr, a, x):
    want, present = _expect(a, x)
    got = arr.to_numpy(fill=np.nan)
    np.testing.assert_allclose(got[present], want[present], rtol=1e-12)
    assert np.isnan(got[~present]).all()


def test_a_kept_result_is_never_overwritten():
    a, xs = _case()
    f = _function()
    kept = [f(A=a, X=x)["C"] for x in xs]   # every result held: nothing may be reused
    for arr, x in zip(kept, xs):
        _check(arr, a, x)
    assert f.session().runtime.pool.hits == 0


def test_a_dropped_result_is_written_into_and_stays_correct():
    a, xs = _case(1)
    f = _function()
    for x in xs * 2:
        out = f(A=a, X=x)
        _check(out["C"], a, x)
        del out
        gc.collect()
    assert f.session().runtime.pool.hits >= len(xs) * 2 - 1


def test_a_reused_bitmap_is_taken_only_when_it_is_that_pattern():
    """drop_rows uses the presence bitmap of the output it writes into again only when it is
    exactly 'every row but these': the count matches and nothing is present in those rows."""
    from dspla.kernels import gbops
    vals = np.arange(12.0).reshape(4, 3)

    def dropped(rows):
        return gbops.drop_rows(gb.Matrix.from_dense(vals), np.array(rows))

    def want(rows):
        w = vals.copy()
        w[rows] = np.nan
        return w

    for spare_rows, rows in (([1], [1]), ([1], [2]), ([0, 3], [1]), ([2], [0, 3])):
        spare = gbops.take_bitmap(dropped(spare_rows))
        assert spare is not None and spare[1] == (4 - len(spare_rows)) * 3
        got = gbops.drop_rows(gb.Matrix.from_dense(vals), np.array(rows), spare)
        np.testing.assert_array_equal(got.to_dense(fill_value=np.nan), want(rows))
    # a user changed the pattern of a result (an entry in a dropped row, one removed elsewhere)
    M = dropped([1])
    M[1, 0] = 5.0
    del M[2, 2]
    M.wait()
    spare = gbops.take_bitmap(M)
    got = gbops.drop_rows(gb.Matrix.from_dense(vals), np.array([1]), spare)
    np.testing.assert_array_equal(got.to_dense(fill_value=np.nan), want([1]))
    assert gbops.take_bitmap(gb.Matrix.from_dense(vals)) is None   # held full: nothing to take


def test_a_matrix_someone_else_holds_is_not_free():
    pool = recycle.Pool()
    M = gb.Matrix(float, 3, 3)
    pool.keep("k", M)
    assert pool.take("k") is None   # the test's own name M holds it
    pool.keep("k", M)
    del M
    assert pool.take("k") is not None


def test_a_second_buffer_is_kept_only_after_the_latest_was_found_in_use():
    pool = recycle.Pool()
    for shape in ((5, 1), (1 << 20, 2)):   # a vector and an n x K output alike
        key = shape
        a = gb.Matrix(float, *shape)
        pool.keep(key, a)
        del a
        for _ in range(3):                 # dropped before each call: one buffer, reused
            got = pool.take(key)
            assert got is not None
            pool.keep(key, got)
            del got
            assert len(pool._held[key]) == 1
        b = pool.take(key)                 # the caller holds b across the next call
        pool.keep(key, b)
        assert pool.take(key) is None      # b in use: kept as the candidate
        c = gb.Matrix(float, *shape)
        pool.keep(key, c)                  # now two: c the latest, b the one before
        del b                              # `out = f(...)`: the old result goes at the assignment
        got = pool.take(key)               # c held, b free
        assert got is not None and got is not c
        pool.keep(key, got)
        assert len(pool._held[key]) == 2
        del got, c


def test_out_equals_f_in_a_loop_alternates_two_outputs_and_never_overwrites_the_held_one():
    """``out = f(...)``: the caller holds the last result while the next call runs; the two
    outputs alternate (no new one per call) and the held one keeps its values."""
    rng = np.random.default_rng(2)
    n, k = 140_000, 8   # n x K over 2^20 entries (once the limit for a second buffer)
    a = sp.random_array((n, n), density=3 / n, random_state=rng, format="csr")
    xs = [rng.random((n, k)) for _ in range(3)]
    f = _function()
    out = f(A=a, X=xs[0])
    for it in range(1, 7):
        prev, x_prev = out, xs[(it - 1) % 3]
        out = f(A=a, X=xs[it % 3])
        _check(out["C"], a, xs[it % 3])
        _check(prev["C"], a, x_prev)     # not written into while held
        del prev
    assert f.session().runtime.pool.hits >= 4


def test_a_carried_vector_alternates_two_buffers_and_stays_correct():
    x0 = dp.dense("x", ("n", 1))
    (x,) = dp.while_loop(lambda x: dp.reduce_all(x) < 1e6, lambda x: (x * 2.0 + 1.0,), (x0,), 40)
    f = dp.function({"x": x})
    v = np.arange(6.0).reshape(6, 1)
    want = v.copy()
    while want.sum() < 1e6:
        want = want * 2 + 1
    np.testing.assert_array_equal(f(x=v)["x"].to_numpy(), want)
    its = f.last_stats["loops"][0]["iterations"]
    # four outputs per iteration (x * 2, + 1, the condition's sum and comparison), each written
    # into again from its third run on; with one buffer the carried x (+ 1) never would be
    assert f.session().runtime.pool.hits >= 4 * (its - 2)


def test_refill_makes_a_bitmap_full_with_the_value():
    B = gb.Matrix.from_dense(np.arange(6.0).reshape(3, 2))
    del B[1, 0]   # a missing entry: bitmap
    B.wait()
    assert B.ss.format.startswith("bitmap")
    got = recycle.refill(B, 3, 2, 1.5, DType.float64)
    assert got is B and B.nvals == 6
    np.testing.assert_array_equal(B.to_dense(), np.full((3, 2), 1.5))
    assert recycle.refill(B, 2, 2, 0.0, DType.float64) is None                 # another shape
    assert recycle.refill(B, 3, 2, 0.0, DType.int64) is None                   # another dtype
    S = gb.Matrix.from_coo([0], [1], [2.0], nrows=300, ncols=200)              # sparse: made full too
    assert recycle.refill(S, 300, 200, -1.0, DType.float64) is S and S.nvals == 300 * 200
    np.testing.assert_array_equal(S.to_dense(), np.full((300, 200), -1.0))
    assert recycle.refill(S, 300, 200, None, DType.float64) is None               # no identity: no fill


@pytest.mark.filterwarnings("ignore::dspla.LoopBoundWarning")   # (it runs to its bound on purpose)
def test_loop_products_reuse_their_output_and_match_numpy():
    # x <- A x / |A x|_1, repeated: the product's output of iteration k is free in k + 1
    n = 50
    rng = np.random.default_rng(3)
    a = sp.random_array((n, n), density=0.2, random_state=rng, format="csr") + sp.eye_array(n, format="csr")
    A, x0 = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))

    def body(x):
        y = A @ x
        return (y / dp.reduce_all(y),)

    (x,) = dp.while_loop(lambda x: dp.reduce_all(x) > 0.0, body, (x0,), 7)
    f = dp.function({"x": x})
    got = f(A=a, x=np.ones((n, 1)))["x"].to_numpy()[:, 0]
    want = np.ones(n)
    for _ in range(7):
        want = a @ want
        want = want / want.sum()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert f.session().runtime.pool.hits >= 5


def test_distributed_reuse_matches_numpy():
    a, xs = _case(2)
    f = _function()

    def body(comm):
        hits = 0
        for x in xs * 2:
            out = f.run({"A": a, "X": x} if comm.rank == 0 else None, comm=comm, plan="p2p1d", partition="random")
            whole = out["C"].to_numpy(fill=np.nan)
            del out
            gc.collect()
            _ = whole
            if comm.rank == 0:
                want, present = _expect(a, x)
                np.testing.assert_allclose(whole[present], want[present], rtol=1e-12)
                assert np.isnan(whole[~present]).all()
        hits = f.session(comm, plan="p2p1d", partition="random").runtime.pool.hits
        return hits

    for P in (2, 3):
        hits = run_simulated(P, body)
        assert all(h >= 1 for h in hits), hits


def test_element_wise_results_kept_by_the_caller_are_not_overwritten():
    x = dp.dense("x", ("n", 1))
    f = dp.function({"y": dp.abs(x * 2.0 - 1.0), "z": x / 4.0})
    xs = [np.random.default_rng(s).random((30, 1)) for s in range(4)]
    kept = [f(x=v) for v in xs]
    for out, v in zip(kept, xs):
        np.testing.assert_allclose(out["y"].to_numpy(), np.abs(v * 2.0 - 1.0), rtol=1e-15)
        np.testing.assert_allclose(out["z"].to_numpy(), v / 4.0, rtol=1e-15)
    for v in xs:                      # dropped at once: written into again, still right
        np.testing.assert_allclose(f(x=v)["z"].to_numpy(), v / 4.0, rtol=1e-15)
    assert f.session().runtime.pool.hits > 0


@pytest.mark.filterwarnings("ignore::dspla.LoopBoundWarning")
@pytest.mark.parametrize("P", [1, 2, 3])
def test_a_carried_value_is_never_reused_while_carried(P):
    # (x, p) -> (x * 2 + 1, x): p holds last iteration's x while x's step writes a new one; with
    # reuse by reference count, the step's old output (now p) must not be written into
    x0 = dp.dense("x", ("n", 1))

    def body(x, p):
        return x * 2.0 + 1.0, x

    (x, p) = dp.while_loop(lambda x, p: dp.reduce_all(x) > -1.0, body, (x0, x0 * 1.0), 6)
    f = dp.function({"x": x, "p": p})
    v = np.arange(8.0).reshape(8, 1)
    want_x, want_p = v.copy(), v.copy()
    for _ in range(6):
        want_x, want_p = want_x * 2 + 1, want_x

    def run(comm):
        out = f.run({"x": v} if comm.rank == 0 else None, comm=comm)
        return out["x"].to_numpy(), out["p"].to_numpy()

    for got_x, got_p in run_simulated(P, run):
        np.testing.assert_array_equal(got_x, want_x)
        np.testing.assert_array_equal(got_p, want_p)


def test_a_reused_reduction_goes_missing_when_there_is_nothing_to_reduce():
    x = dp.sparse("x", ("n", 1))
    f = dp.function({"s": dp.reduce_all(x), "t": dp.reduce_all(x, "max")})
    cols = [[1.0, 0.0, 2.5], [0.0, 0.0, 0.0], [4.0, 0.0, 0.0]]
    wants = [(3.5, 2.5), (None, None), (4.0, 4.0)]   # by hand: (sum, max) of the present entries
    for col, want in zip(cols * 2, wants * 2):
        out = f(x=sp.csr_array(np.array(col).reshape(3, 1)))
        for name, w in zip(("s", "t"), want):
            got = out[name]
            if w is None:
                assert not got.present().any()
            else:
                assert got.present().all() and got.to_numpy()[0, 0] == w
        del out
    assert f.session().runtime.pool.hits > 0


def test_stats_summarised_when_read_are_those_of_their_own_call():
    """A call's stats are summarised when first read (not on every call): read after later calls
    they are the latest call's, with that call's plan, never an earlier or a mixed one."""
    a, xs = _case(2)
    b = sp.random_array((80, 80), density=0.05, random_state=3, format="csr")
    f = _function()
    f(A=a, X=xs[0])
    first = f.last_stats
    assert first["planning_s"] > 0 and first["P"] == 1   # the call that planned
    assert f.last_stats is first                          # summarised once
    f(A=a, X=xs[0])
    f(A=a, X=xs[0])
    again = f.last_stats
    assert again is not first and again["planning_s"] == 0.0 and len(again["iteration_s"]) == 1
    f(A=a, X=xs[1])
    f(A=b, X=np.ones((80, 2)))   # a new graph: planned again; its stats read only now
    st = f.last_stats
    assert st["planning_s"] > 0 and st is not again
    f.last_stats = None   # (set by hand, as the reference path does)
    assert f.last_stats is None
