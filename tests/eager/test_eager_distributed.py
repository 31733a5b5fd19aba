"""Eager values on P = 2..4 simulated ranks: every rank runs each operation, the results stay
distributed, and they equal python-graphblas's on the whole data; each operation is compiled
once per signature and planned once for inputs passed again."""
import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp
from eager_oracle import assert_same

import dspla as dp
from dspla.eager import dispatch
from dspla.runtime.comm.sim import run_simulated


def _data(seed):
    rng = np.random.default_rng(seed)
    a = sp.random_array((48, 48), density=0.1, random_state=rng, format="csr")
    a.data[:] = rng.integers(1, 9, a.nnz)
    r = rng.random(48)
    x = rng.integers(-3, 5, (48, 3)).astype(float)
    return a, r, x


def rank_step(A, r, damping):
    out = A.reduce_rowwise("plus")
    w = r.ewise_mult(out.apply("minv"), "times")
    s = A.T.mxv(w, "plus_times")
    return s.apply("times", right=damping)


def rank_step_gb(A, r, damping):
    out = A.reduce_rowwise(gb.monoid.plus).new()
    w = r.ewise_mult(out.apply(gb.unary.minv).new(), gb.binary.times).new()
    s = A.T.mxv(w, gb.semiring.plus_times).new()
    return s.apply(gb.binary.times, right=damping).new()


@pytest.mark.parametrize("P", [2, 3, 4])
def test_eager_operations_run_distributed_and_equal_one_process(P):
    a, r, x = _data(P)
    ga = gb.io.from_scipy_sparse(a)

    def body(comm):
        with dp.eager.running_on(comm):
            A = dp.array(a)
            y = rank_step(A, dp.array(r), 0.85)
            C = A.mxm(x, "min_plus")
            D = (A + A.T).select(">", 4)
            cmp = C < 2.0
            total = float(A.reduce_scalar())
            return (y.distributed, y.to_graphblas(), C.to_graphblas(), D.to_graphblas(), cmp.to_graphblas(),
                    total, int(D.nvals))
    for dist, y, C, D, cmp, total, nv in run_simulated(P, body, timeout=120):
        assert dist
        assert_same(y, rank_step_gb(ga, gb.Vector.from_dense(r), 0.85))
        wantC = ga.mxm(gb.Matrix.from_dense(x), gb.semiring.min_plus).new()
        assert_same(C, wantC)
        wantD = ga.ewise_add(ga.T, gb.binary.plus).new().select(">", 4).new()
        assert_same(D, wantD)
        assert nv == wantD.nvals
        assert_same(cmp, wantC.apply(gb.binary.lt, right=2.0).new())
        assert total == pytest.approx(a.sum(), rel=1e-12)


def test_a_repeated_operation_is_compiled_and_planned_once():
    a, r, _ = _data(9)
    dispatch._CACHE.clear()

    def body(comm):
        with dp.eager.running_on(comm):
            A = dp.array(a)
            plans = []
            for _ in range(3):
                y = A.mxv(r, "plus_times")
                traced = next(t for k, t in dispatch._CACHE.items() if k[0] == "mxv")
                plans.append(traced.function.session(comm).plan)
            return y.to_graphblas(), len(dispatch._CACHE), plans
    for y, n, plans in run_simulated(2, body, timeout=60):
        assert_same(y, gb.io.from_scipy_sparse(a).mxv(gb.Vector.from_dense(r), gb.semiring.plus_times).new())
        assert n == 1 and plans[0] is plans[1] is plans[2]


def test_a_compiled_python_function_runs_distributed():
    a, r, _ = _data(11)
    f = dp.function(rank_step)

    def body(comm):
        with dp.eager.running_on(comm):
            y = f(dp.array(a), r, 0.5)
            return y.distributed, y.to_graphblas()
    for dist, y in run_simulated(3, body, timeout=60):
        assert dist
        assert_same(y, rank_step_gb(gb.io.from_scipy_sparse(a), gb.Vector.from_dense(r), 0.5))
