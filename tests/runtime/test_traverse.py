"""A traversal loop run as one compiled loop (kernels/traverse.py, driven by runtime/interp/
fused.py): BFS levels against scipy.sparse.csgraph's unweighted shortest paths, the same levels,
iterations and routes as the Python loop and the interpreter, float depths and a loop bound,
more pulled levels than a stamp counts, a depth that would wrap and a failing C call reported
as the Python loop reports them. Graphs here are small: the compiled loop is forced on them
(it runs where the levels are stamped, graphs of levels.MIN_NODES nodes or more)."""
import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.kernels import levels, traverse
from dspla.kernels.overflow import IntegerOverflow
from dspla.runtime.interp import fused
from tests.runtime.test_fused import _graph, _levels  # (its random graphs and csgraph's levels)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from bfs import bfs_function, bfs_levels  # noqa: E402


@pytest.fixture
def runs(monkeypatch):
    """The compiled loop forced on small graphs; the list of its runs' results."""
    monkeypatch.setattr(levels, "MIN_NODES", 0)
    seen, real = [], fused._Runner.run

    def spy(self, *args):
        out = real(self, *args)
        seen.append(out)
        return out
    monkeypatch.setattr(fused._Runner, "run", spy)
    return seen


def _source(n, src):
    return sp.csr_array(([True], ([src], [0])), shape=(n, 1))


@pytest.mark.parametrize("symmetric", [True, False])
def test_compiled_levels_equal_csgraph_the_python_loop_and_the_interpreter(symmetric, runs, monkeypatch):
    A = _graph(3000, 0.003, 31, symmetric)
    compiled = bfs_function()
    got = {src: (compiled(A=A, s=_source(3000, src)), dict(compiled.last_stats["routes"])) for src in (0, 7, 2999)}
    assert len(runs) == 3 and sum(r[-1] for r in runs) > 0   # (each call compiled, and some levels pulled)
    monkeypatch.setattr(fused, "_compiled", lambda *a: None)
    python = bfs_function()
    monkeypatch.setattr("dspla.runtime.interp.loops.recognize", lambda rt, loop: None)
    interpreted = bfs_function()
    for src, (out, routes) in got.items():
        levels_ = out["levels"].to_numpy(fill=-1)[:, 0]
        assert (levels_ == _levels(A, src)).all()
        for f in (python, interpreted):
            other = f(A=A, s=_source(3000, src))
            assert (other["levels"].to_numpy(fill=-1)[:, 0] == levels_).all()
            assert other["iterations"].to_numpy()[0, 0] == out["iterations"].to_numpy()[0, 0]
            assert f.last_stats["routes"] == routes
    assert len(runs) == 3   # (the others did not run it)


def test_float_depths_and_a_bound_that_stops_it(runs):
    """Depths in float64 by 0.5, and a loop bound of 2 levels: stopped there, as interpreted."""
    A = _graph(400, 0.01, 13, True)
    a, s = dp.sparse("A", ("n", "n")), dp.sparse("s", ("n", 1), "bool")
    lv = dp.cast(s, "float64") * 0

    def level(fr, lv, d):
        d = d + 0.5
        fr = dp.mxm(dp.cast(a.T, "bool"), fr, "any_pair", mask=lv, complement=True, structure=True)
        return fr, dp.update(lv, d, mask=fr, structure=True), d

    (_, lv, _), its = dp.while_loop(lambda f, lv, d: dp.nvals(f) > 0, level, (s, lv, dp.reduce_all(lv, "max")), 2,
                                    count=True)
    f = dp.function({"levels": lv, "iterations": its}, inputs=[a, s])
    with pytest.warns(dp.LoopBoundWarning):
        out = f(A=A, s=_source(400, 0))
    want, got = _levels(A, 0), out["levels"].to_numpy(fill=-1)[:, 0]
    near = want <= 2
    assert (got[near] == np.where(want[near] >= 0, want[near] * 0.5, -1)).all() and (got[~near] == -1).all()
    assert out["iterations"].to_numpy()[0, 0] == 2 and len(runs) == 1


def _ladder(hub: int, width: int, rungs: int):
    """A source tied to a clique of ``hub`` nodes (its edges make the second level pull), then
    ``rungs`` levels of ``width`` nodes, each joined wholly to the next: every level after it is
    pulled (the frontier never shrinks to n / 512)."""
    n = 1 + hub + width * rungs
    clique = np.arange(1, hub + 1)
    rows = [np.zeros(hub, int), *(np.repeat(clique, hub - 1),)]
    cols = [clique, np.concatenate([np.delete(clique, i) for i in range(hub)])]
    first = 1 + hub
    rows.append(np.repeat(clique, width))
    cols.append(np.tile(np.arange(first, first + width), hub))
    for r in range(rungs - 1):
        a, b = first + r * width, first + (r + 1) * width
        rows.append(np.repeat(np.arange(a, a + width), width))
        cols.append(np.tile(np.arange(b, b + width), width))
    i, j = np.concatenate(rows), np.concatenate(cols)
    A = sp.csr_array((np.ones(len(i)), (i, j)), shape=(n, n))
    return sp.csr_array(((A + A.T) > 0).astype(float))


def test_more_pulled_levels_than_a_stamp_counts_are_settled_on_the_way(runs):
    A = _ladder(40, 4, 300)
    f = bfs_function()
    got = bfs_levels(A, 0, f)
    assert (got == _levels(A, 0)).all() and got.max() == 301
    assert f.last_stats["routes"]["spmspv-pull"] > 255 and len(runs) == 1


def _bfs_from(start: int):
    a, s = dp.sparse("A", ("n", "n")), dp.sparse("s", ("n", 1), "bool")
    lv = dp.cast(s, "int64") * 0 + start

    def level(fr, lv, d):
        d = d + 1
        fr = dp.mxm(dp.cast(a.T, "bool"), fr, "any_pair", mask=lv, complement=True, structure=True)
        return fr, dp.update(lv, d, mask=fr, structure=True), d

    _, lv, _ = dp.while_loop(lambda f, lv, d: dp.nvals(f) > 0, level, (s, lv, dp.reduce_all(lv, "max")), "n")
    return dp.function({"levels": lv}, inputs=[a, s])


def test_a_depth_that_would_wrap_is_reported_as_the_python_loop_reports_it(runs, monkeypatch):
    n = 50   # a path: 49 levels from one end
    A = sp.csr_array((np.ones(2 * n - 2), (np.r_[0:n - 1, 1:n], np.r_[1:n, 0:n - 1])), shape=(n, n))
    start = 2**63 - 10
    ok = _bfs_from(2**63 - 60)(A=A, s=_source(n, 0))["levels"].to_numpy(fill=-1)[:, 0]
    assert (ok == 2**63 - 60 + np.arange(n)).all()
    with pytest.raises(IntegerOverflow) as compiled:
        _bfs_from(start)(A=A, s=_source(n, 0))
    assert len(runs) == 2
    monkeypatch.setattr(fused, "_compiled", lambda *a: None)
    with pytest.raises(IntegerOverflow) as python:
        _bfs_from(start)(A=A, s=_source(n, 0))
    assert str(compiled.value) == str(python.value) and "overflows int64" in str(python.value)


def test_a_failing_call_ends_the_loop_and_is_named(runs, monkeypatch):
    """The product's fourth call fails (GrB_OUT_OF_MEMORY): raised as the Python loop raises a
    failed call, and the next call, with every call working, is right."""
    A = _graph(2000, 0.004, 32, True)
    real = traverse.calls("INT64")
    signature = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_uint64] * 7)   # (GrB_mxm's: seven pointers)
    mxm, count = signature(int(real[1])), [0]

    def failing(*args):
        count[0] += 1
        return -102 if count[0] == 4 else mxm(*args)
    callback = signature(failing)
    table = real.copy()
    table[1] = ctypes.cast(callback, ctypes.c_void_p).value
    monkeypatch.setattr(traverse, "calls", lambda kind: table)
    f = bfs_function()
    with pytest.raises(RuntimeError, match="GraphBLAS mxm failed with code -102"):
        f(A=A, s=_source(2000, 3))
    monkeypatch.setattr(traverse, "calls", lambda kind: real)
    f = bfs_function()
    assert (bfs_levels(A, 3, f) == _levels(A, 3)).all()


# (pushing, any pulled, last, unexplored, nq, edges) on n = 100 nodes -> (pushing, any pulled, unexplored),
# worked by hand from LAGraph's rule (alpha 8, beta1 8, beta2 512)
RULE_CASES = [
    ((True, False, 0, 1000, 5, 200), (False, True, 800)),   # growing: 200 x 8 > 800 left: pull
    ((True, False, 0, 1000, 5, 50), (True, False, 950)),    # 50 x 8 <= 950: push
    ((True, False, 9, 1000, 5, 900), (True, False, 100)),   # shrinking: push, the edges counted off
    ((True, True, 5, 500, 20, 0), (False, True, 500)),      # pulled before: 20 x 8 > 100 nodes: pull
    ((True, True, 5, 500, 10, 0), (True, True, 500)),       # 10 x 8 <= 100: push
    ((True, False, 0, 50, 5, 999), (True, False, 50)),      # fewer edges left than n: push to the end
    ((False, True, 50, 500, 0, 0), (True, True, 500)),      # pulling, shrunk to 0 x 512 <= 100: push
    ((False, True, 50, 500, 1, 0), (False, True, 500)),     # 1 x 512 > 100: pull on
    ((False, True, 5, 500, 10, 0), (False, True, 500)),     # growing: pull on
]


@pytest.mark.parametrize("compiled", [False, True])
def test_the_rule_as_worked_by_hand(compiled):
    """traverse.rule (spmspv's Python path) and its compiled twin (the loop's) on hand-worked cases;
    the edges are asked for only while pushing, before any pull, with n edges or more left."""
    kernels = traverse.compiled()
    rule = traverse.rule_c if compiled and kernels is not None else traverse.rule
    wants = traverse.wants_edges_c if compiled and kernels is not None else traverse.wants_edges
    for (pushing, any_pull, last, unexplored, nq, edges), want in RULE_CASES:
        assert rule(pushing, any_pull, last, unexplored, 100, nq, edges) == want
    assert [wants(p, a, u, 100) for p, a, u in [(True, False, 1000), (True, True, 1000), (True, False, 50),
                                                 (False, False, 1000)]] == [True, False, False, False]
