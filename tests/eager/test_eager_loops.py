"""``dp.while_loop`` on values at hand runs at once (dspla/eager/loops.py): BFS levels against
scipy's shortest paths, the same loop compiled in ``dp.function``, the bound's warning, a missing
condition, a dict of carried values, on simulated ranks, and its errors at the caller's line."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

import dspla as dp
from dspla.errors import DomainMismatch, DsplaError, LoopBoundWarning
from dspla.runtime.comm.sim import run_simulated


def _graph(n: int, seed: int) -> sp.csr_array:
    return sp.csr_array(sp.random(n, n, density=3 / n, format="csr", random_state=seed))


def _bfs(A, s, bound):
    """BFS levels as the examples write them, on whatever A and s are (values or expressions)."""
    AT = dp.cast(A.T, "bool")

    def level(frontier, levels, depth):
        depth = depth + 1
        frontier = dp.mxm(AT, frontier, "any_pair", mask=levels, complement=True, structure=True)
        return frontier, dp.update(levels, depth, mask=frontier, structure=True), depth

    levels = dp.cast(s, "int64") * 0
    (_, levels, _), its = dp.while_loop(lambda f, lv, d: dp.nvals(f) > 0, level,
                                        (s, levels, dp.reduce_all(levels, "max")), bound, count=True)
    return levels, its


def _source(n: int, at: int) -> sp.csr_array:
    return sp.csr_array(([True], ([at], [0])), shape=(n, 1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bfs_levels_of_values_are_scipys_shortest_paths(seed):
    a = _graph(40, seed)
    levels, its = _bfs(dp.array(a), dp.array(_source(40, 3)), 40)
    want = shortest_path(a, unweighted=True, indices=3)
    reached = np.isfinite(want)
    got = levels.to_numpy(fill=-1)[:, 0]
    assert np.array_equal(got[reached], want[reached]) and (got[~reached] == -1).all()
    assert its.value == want[reached].max() + 1   # (the last level found no new node)


def test_a_loop_of_values_gives_what_the_compiled_loop_gives():
    a, x0 = _graph(25, 7), np.arange(25, dtype=float)[:, None]
    A, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))

    def step(A, x):
        return dp.while_loop(lambda x: dp.nvals(x) >= 0, lambda x: (dp.ewise_add(x, dp.mxm(A, x, "min_plus"), "min"),),
                             (x,), 4, count=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoopBoundWarning)
        (y,), its = step(A, x)
        want = dp.function({"y": y, "its": its})(A=a, x=x0)
        (got,), got_its = step(dp.array(a), dp.array(x0))
    assert np.array_equal(got.present(), want["y"].present())
    assert np.array_equal(got.to_numpy(fill=0), want["y"].to_numpy(fill=0))
    assert got_its.value == want["its"].value == 4 and got_its.dtype == np.int64


def test_the_bound_warns_at_the_callers_line_and_a_missing_condition_is_false():
    x = dp.array(np.ones((3, 1)))
    with pytest.warns(LoopBoundWarning, match="ran all 2 iterations") as caught:
        out = dp.while_loop(lambda x: dp.nvals(x) > 0, lambda x: (x * 2,), {"x": x}, 2)
    assert caught[0].filename == __file__
    assert list(out) == ["x"] and np.array_equal(out["x"].to_numpy(), np.full((3, 1), 4.0))
    missing = dp.array(sp.csr_array((1, 1), dtype=bool))   # (a 1 x 1 value with no entry)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (y,), its = dp.while_loop(lambda x: missing, lambda x: (x * 2,), (x,), 5, count=True)
    assert its.value == 0 and np.array_equal(y.to_numpy(), np.ones((3, 1)))


@pytest.mark.parametrize("P", [2, 3])
def test_a_loop_of_values_runs_on_every_rank_and_equals_one_process(P):
    a = _graph(30, 11)
    one, one_its = _bfs(dp.array(a), dp.array(_source(30, 0)), 30)

    def body(comm):
        with dp.eager.running_on(comm):
            levels, its = _bfs(dp.array(a), dp.array(_source(30, 0)), 30)
            return levels.distributed, levels.to_numpy(fill=-1), its.value
    for distributed, levels, its in run_simulated(P, body, timeout=120):
        assert distributed and its == one_its.value
        assert np.array_equal(levels, one.to_numpy(fill=-1))


@pytest.mark.parametrize("call,error,message", [
    (lambda x: dp.while_loop(lambda x: dp.nvals(x) > 0, lambda x: (x,), (x,), "n"), DsplaError, "give its size"),
    (lambda x: dp.while_loop(lambda x: dp.nvals(x) > 0, lambda x: (dp.cast(x, "int64"),), (x,), 3), DomainMismatch,
     r"float64 before the body and \(3, 1\) int64 after it"),
    (lambda x: dp.while_loop(lambda x: x, lambda x: (x,), (x,), 3), DomainMismatch, "1 x 1 bool"),
    (lambda x: dp.while_loop(lambda x: dp.nvals(x) > 0, lambda x: (x, x), (x,), 3), DsplaError, "gives 2 values"),
    (lambda x: dp.while_loop(lambda x, y: dp.nvals(x) > 0, lambda x, y: (x, y), (x, dp.dense("y", ("n", 1))), 3),
     TypeError, "meets a traced expression"),
])
def test_errors_name_the_fault_and_where(call, error, message):
    with pytest.raises(error, match=message) as e:
        call(dp.array(np.ones((3, 1))))
    if isinstance(e.value, DsplaError):   # (the call's line, as a program's errors give theirs)
        assert str(e.value).startswith(("tests/eager/test_eager_loops.py:", f"{__file__}:")), e.value
